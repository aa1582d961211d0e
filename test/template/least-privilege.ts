import {
  type CfnTemplate,
  conditionHolds,
  effectiveFunctionProperties,
  referencedIds,
  resourcesOfType,
} from '../helpers/cloudformation.js';

const READ_ACTIONS = new Set(['secretsmanager:getsecretvalue', 'secretsmanager:describesecret']);
const ROTATION_ACTIONS = [
  'secretsmanager:DescribeSecret',
  'secretsmanager:GetSecretValue',
  'secretsmanager:PutSecretValue',
  'secretsmanager:UpdateSecretVersionStage',
];

interface Statement {
  Effect?: string;
  Action?: unknown;
  NotAction?: unknown;
  Resource?: unknown;
  NotResource?: unknown;
}

const list = (value: unknown): unknown[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);
const isNoValue = (value: unknown) => JSON.stringify(value) === JSON.stringify({ Ref: 'AWS::NoValue' });

/** The statements a SAM `Policies` entry grants, or a reason it cannot be checked. */
function statementsOf(entry: unknown): Statement[] | string {
  if (typeof entry === 'string') return `managed policy "${entry}" cannot be checked; use inline statements`;
  if (typeof entry !== 'object' || entry === null) return 'unreadable policy entry';
  const record = entry as Record<string, unknown>;
  if ('Statement' in record) return list(record['Statement']) as Statement[];
  if ('Fn::If' in record) {
    // Either branch may be what a stack deploys: both are checked.
    const [, yes, no] = record['Fn::If'] as [string, unknown, unknown];
    const branches = [yes, no].filter((branch) => !isNoValue(branch)).map(statementsOf);
    return branches.find((branch): branch is string => typeof branch === 'string') ?? (branches.flat() as Statement[]);
  }
  const [name, args] = Object.entries(record)[0] ?? [];
  // SAM policy template with one secret ARN: the same as GetSecretValue on that secret.
  if (name === 'AWSSecretsManagerGetSecretValuePolicy') {
    return [{ Effect: 'Allow', Action: 'secretsmanager:GetSecretValue', Resource: (args as Record<string, unknown>)['SecretArn'] }];
  }
  if (name && /secret/i.test(name)) return `SAM policy template ${name} grants Secrets Manager access that cannot be checked`;
  return []; // other SAM policy templates (SQS, logs...) do not touch Secrets Manager
}

/**
 * Problems with the template's Secrets Manager permissions, as sentences; empty when
 * each function may use only its own secrets (those named in its environment, read-only,
 * and the one it rotates, with the rotation actions) and nothing uses a wildcard.
 */
export function secretsManagerProblems(template: CfnTemplate): string[] {
  const problems: string[] = [];
  const secrets = new Set(resourcesOfType(template, 'AWS::SecretsManager::Secret').map(([id]) => id));
  const rotatedBy = new Map<string, Set<string>>();
  for (const [, schedule] of resourcesOfType(template, 'AWS::SecretsManager::RotationSchedule')) {
    const fn = [...referencedIds(schedule.Properties?.['RotationLambdaARN'])][0];
    const secret = [...referencedIds(schedule.Properties?.['SecretId'])][0];
    if (fn && secret) rotatedBy.set(fn, new Set([...(rotatedBy.get(fn) ?? []), secret]));
  }

  const checkStatement = (where: string, statement: Statement, own?: { read: Set<string>; rotate: Set<string> }) => {
    if (statement.Effect !== 'Allow') return [];
    if (statement.NotAction !== undefined) problems.push(`${where}: NotAction grants everything else`);
    const actions = list(statement.Action).map(String);
    if (actions.some((a) => a === '*')) problems.push(`${where}: Action "*"`);
    const secretActions = actions.filter((a) => a.toLowerCase().startsWith('secretsmanager:'));
    if (secretActions.length === 0) return [];
    if (statement.NotResource !== undefined) problems.push(`${where}: NotResource with Secrets Manager actions`);
    for (const action of secretActions) {
      if (action.includes('*') || action.includes('?')) problems.push(`${where}: wildcard action ${action}`);
    }
    const granted: string[] = [];
    for (const resource of list(statement.Resource)) {
      if (typeof resource === 'string') {
        problems.push(
          resource.includes('*')
            ? `${where}: Secrets Manager actions on "${resource}" (wildcard)`
            : `${where}: Secrets Manager actions on a literal ARN; reference the stack's secret instead`,
        );
        continue;
      }
      const ids = [...referencedIds(resource)];
      const secret = ids.find((id) => secrets.has(id));
      if (!secret || ids.length !== 1) {
        problems.push(`${where}: Secrets Manager actions on ${JSON.stringify(resource)}, which is not one of the stack's secrets`);
        continue;
      }
      granted.push(secret);
      if (own && !own.read.has(secret) && !own.rotate.has(secret)) {
        problems.push(`${where}: may use ${secret}, which is not its own secret`);
      }
      const writes = secretActions.filter((a) => !READ_ACTIONS.has(a.toLowerCase()));
      if (own && writes.length > 0 && !own.rotate.has(secret)) {
        problems.push(`${where}: ${writes.join(', ')} on ${secret}, which it does not rotate`);
      }
    }
    return granted.flatMap((secret) => secretActions.map((a) => `${a.toLowerCase()} ${secret}`));
  };

  for (const [id] of resourcesOfType(template, 'AWS::Serverless::Function')) {
    const properties = effectiveFunctionProperties(template, id);
    if (properties['Role'] !== undefined) problems.push(`${id}: brings its own Role, whose permissions cannot be checked here`);
    const env = (properties['Environment'] as { Variables: Record<string, unknown> }).Variables;
    const read = new Set([...referencedIds(env)].filter((ref) => secrets.has(ref)));
    const rotate = rotatedBy.get(id) ?? new Set<string>();
    const grants = new Set<string>();
    for (const entry of list(properties['Policies'])) {
      const statements = statementsOf(entry);
      if (typeof statements === 'string') {
        problems.push(`${id}: ${statements}`);
        continue;
      }
      for (const statement of statements) for (const g of checkStatement(id, statement, { read, rotate })) grants.add(g);
    }
    // The other half of least privilege: what the function needs must be there, or it fails in AWS.
    for (const secret of read) {
      if (!grants.has(`secretsmanager:getsecretvalue ${secret}`)) problems.push(`${id}: cannot read its secret ${secret}`);
    }
    for (const secret of rotate) {
      for (const action of ROTATION_ACTIONS) {
        if (!grants.has(`${action.toLowerCase()} ${secret}`)) problems.push(`${id}: lacks ${action} on ${secret}, which it rotates`);
      }
    }
  }

  // Plain IAM resources, should any be added: no wildcard either.
  for (const type of ['AWS::IAM::Role', 'AWS::IAM::Policy', 'AWS::IAM::ManagedPolicy']) {
    for (const [id, resource] of resourcesOfType(template, type)) {
      const documents = [
        resource.Properties?.['PolicyDocument'],
        ...list(resource.Properties?.['Policies']).map((p) => (p as Record<string, unknown>)['PolicyDocument']),
      ];
      for (const document of documents) {
        for (const statement of list((document as Record<string, unknown> | undefined)?.['Statement'])) {
          checkStatement(id, statement as Statement);
        }
      }
    }
  }
  return problems;
}

/** The parameter that names the buses eventbridge destinations put events on: the only place functions get `events:PutEvents`. */
const EVENT_BUSES = 'EventBusArns';

/**
 * Problems with the template's EventBridge permissions, as sentences; empty when every grant of
 * an `events:` action is `events:PutEvents` on exactly the buses EventBusArns names, under a
 * condition that holds only when it names some (an empty list must grant nothing, never more).
 */
export function eventBridgeProblems(template: CfnTemplate): string[] {
  const problems: string[] = [];
  const holds = (condition: string, buses: string) => conditionHolds({ template, parameters: { [EVENT_BUSES]: buses } }, condition);
  for (const [id] of resourcesOfType(template, 'AWS::Serverless::Function')) {
    for (const entry of list(effectiveFunctionProperties(template, id)['Policies'])) {
      const statements = statementsOf(entry);
      if (typeof statements === 'string') continue; // secretsManagerProblems says why
      const condition = (entry as { 'Fn::If'?: [string] })['Fn::If']?.[0];
      for (const statement of statements) {
        if (statement.Effect !== 'Allow') continue;
        const actions = list(statement.Action ?? statement.NotAction).map(String);
        const events = actions.filter((a) => a === '*' || a.toLowerCase().startsWith('events:'));
        if (events.length === 0) continue;
        if (statement.NotAction !== undefined || statement.NotResource !== undefined)
          problems.push(`${id}: NotAction or NotResource with events`);
        for (const action of events) if (action !== 'events:PutEvents') problems.push(`${id}: ${action}; only events:PutEvents is needed`);
        if (JSON.stringify(statement.Resource) !== JSON.stringify({ Ref: EVENT_BUSES })) {
          problems.push(`${id}: events:PutEvents on ${JSON.stringify(statement.Resource)}, not on the buses ${EVENT_BUSES} names`);
        }
        if (!condition || holds(condition, '') || !holds(condition, 'arn:aws:events:us-east-1:123456789012:event-bus/default')) {
          problems.push(`${id}: events:PutEvents without a condition that holds exactly when ${EVENT_BUSES} names buses`);
        }
      }
    }
  }
  return problems;
}
