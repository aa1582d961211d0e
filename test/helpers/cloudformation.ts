import { readFileSync } from 'node:fs';
import { type CollectionTag, parse, type ScalarTag, type Tags } from 'yaml';

/** A CloudFormation value after YAML parsing: short-form tags become their long form ({"Fn::Sub": ...}). */
export type CfnValue = unknown;

export interface CfnResource {
  Type: string;
  Condition?: string;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
  DependsOn?: string | string[];
  Metadata?: Record<string, unknown>;
  Properties?: Record<string, CfnValue>;
}

export interface CfnParameter {
  Type: string;
  Default?: string | number;
  NoEcho?: boolean;
  AllowedPattern?: string;
  AllowedValues?: Array<string | number>;
}

export interface CfnTemplate {
  Transform?: string;
  Parameters: Record<string, CfnParameter>;
  Conditions?: Record<string, CfnValue>;
  Rules?: Record<string, CfnValue>;
  Globals?: { Function?: Record<string, CfnValue> };
  Resources: Record<string, CfnResource>;
  Outputs?: Record<string, { Condition?: string; Value: CfnValue; Description?: string }>;
}

const FUNCTIONS = [
  'Base64',
  'Cidr',
  'FindInMap',
  'GetAZs',
  'ImportValue',
  'Join',
  'Select',
  'Split',
  'Sub',
  'If',
  'Equals',
  'Not',
  'And',
  'Or',
  'ToJsonString',
  'Length',
];

// Each short-form tag may be written on a scalar, a sequence or a mapping.
const scalar = (tag: string, resolve: (value: string) => unknown): ScalarTag => ({ tag, resolve });
const collection = (tag: string, kind: 'seq' | 'map', name: string): CollectionTag => ({
  tag,
  collection: kind,
  resolve: (value) => ({ [name]: value.toJSON() }),
});

const customTags: Tags = [
  scalar('!Ref', (v) => ({ Ref: v })),
  scalar('!Condition', (v) => ({ Condition: v })),
  scalar('!GetAtt', (v) => ({ 'Fn::GetAtt': [v.slice(0, v.indexOf('.')), v.slice(v.indexOf('.') + 1)] })),
  collection('!GetAtt', 'seq', 'Fn::GetAtt'),
  ...FUNCTIONS.flatMap((name) => [
    scalar(`!${name}`, (v) => ({ [`Fn::${name}`]: v })),
    collection(`!${name}`, 'seq', `Fn::${name}`),
    collection(`!${name}`, 'map', `Fn::${name}`),
  ]),
];

export function parseTemplate(text: string): CfnTemplate {
  return parse(text, { customTags }) as CfnTemplate;
}

export function loadTemplate(path: string): CfnTemplate {
  return parseTemplate(readFileSync(path, 'utf8'));
}

export function resourcesOfType(template: CfnTemplate, type: string): Array<[string, CfnResource]> {
  return Object.entries(template.Resources).filter(([, r]) => r.Type === type);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A function's properties as SAM deploys them: Globals.Function under the resource's own
 * properties, with Environment.Variables merged (the resource wins), as SAM documents it.
 */
export function effectiveFunctionProperties(template: CfnTemplate, logicalId: string): Record<string, CfnValue> {
  const own = template.Resources[logicalId]?.Properties ?? {};
  const globals = template.Globals?.Function ?? {};
  const merged: Record<string, CfnValue> = { ...globals, ...own };
  const variables = (props: Record<string, CfnValue>) => {
    const env = props['Environment'];
    return isRecord(env) && isRecord(env['Variables']) ? env['Variables'] : {};
  };
  merged['Environment'] = { Variables: { ...variables(globals), ...variables(own) } };
  return merged;
}

export function environmentVariables(template: CfnTemplate, logicalId: string): Record<string, CfnValue> {
  const env = effectiveFunctionProperties(template, logicalId)['Environment'] as { Variables: Record<string, CfnValue> };
  return env.Variables;
}

/** Logical ids a value refers to through Ref, Fn::GetAtt or ${...} in Fn::Sub. */
export function referencedIds(value: CfnValue): Set<string> {
  const ids = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    if (!isRecord(node)) return;
    for (const [key, inner] of Object.entries(node)) {
      if (key === 'Ref' && typeof inner === 'string') ids.add(inner);
      else if (key === 'Fn::GetAtt' && Array.isArray(inner) && typeof inner[0] === 'string') ids.add(inner[0]);
      else if (key === 'Fn::Sub') {
        const [text, vars] = Array.isArray(inner) ? [inner[0], inner[1]] : [inner, undefined];
        const local = new Set(isRecord(vars) ? Object.keys(vars) : []);
        for (const match of String(text).matchAll(/\$\{([^!}][^}]*)\}/g)) {
          const id = (match[1] ?? '').split('.')[0] ?? '';
          if (!local.has(id)) ids.add(id);
        }
        if (vars !== undefined) visit(vars);
      } else visit(inner);
    }
  };
  visit(value);
  return ids;
}

// ------------------------------------------------------------------ evaluation

export const PSEUDO_PARAMETERS: Record<string, string> = {
  'AWS::AccountId': '123456789012',
  'AWS::Region': 'us-east-1',
  'AWS::Partition': 'aws',
  'AWS::URLSuffix': 'amazonaws.com',
  'AWS::StackName': 'cost-alert-relay',
  'AWS::StackId': 'arn:aws:cloudformation:us-east-1:123456789012:stack/cost-alert-relay/0',
};

const NO_VALUE = Symbol('AWS::NoValue');

export interface Deployment {
  template: CfnTemplate;
  /** Parameter values as a user would give them; missing ones take the template's Default. */
  parameters: Record<string, string>;
  /** What Ref and Fn::GetAtt of a resource give; defaults to a made-up ARN-like value. */
  resolveResource?: (logicalId: string, attribute?: string) => string;
}

/** A stand-in for the ARN a resource of the deployment gets, unique per logical id. */
export function fakeArn(template: CfnTemplate, logicalId: string): string {
  const type = template.Resources[logicalId]?.Type ?? 'Unknown';
  if (type === 'AWS::SecretsManager::Secret') {
    return `arn:aws:secretsmanager:us-east-1:123456789012:secret:cost-alert-relay/${logicalId}-AbCdEf`;
  }
  return `arn:aws:fake:us-east-1:123456789012:${logicalId}`;
}

/**
 * Evaluates intrinsic functions the way CloudFormation does once parameters are known,
 * so tests can look at the values (secret contents, commands) a real stack would get.
 */
export function evaluate(deployment: Deployment, value: CfnValue): unknown {
  const { template } = deployment;
  const resolveResource = deployment.resolveResource ?? ((id: string) => fakeArn(template, id));
  const parameter = (name: string): string | undefined => {
    if (name in deployment.parameters) return deployment.parameters[name];
    const declared = template.Parameters[name];
    return declared?.Default === undefined ? undefined : String(declared.Default);
  };
  const ref = (name: string): unknown => {
    if (name === 'AWS::NoValue') return NO_VALUE;
    if (name in PSEUDO_PARAMETERS) return PSEUDO_PARAMETERS[name];
    if (name in template.Parameters) {
      const v = parameter(name);
      if (v === undefined) throw new Error(`parameter ${name} has no value and no Default`);
      // A list parameter is a list wherever it is referenced, as CloudFormation splits it.
      return template.Parameters[name]?.Type === 'CommaDelimitedList' ? v.split(',') : v;
    }
    if (name in template.Resources) return resolveResource(name);
    throw new Error(`Ref to unknown ${name}`);
  };
  const condition = (name: string): boolean => {
    const definition = template.Conditions?.[name];
    if (definition === undefined) throw new Error(`unknown condition ${name}`);
    return Boolean(run(definition));
  };
  const run = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(run).filter((v) => v !== NO_VALUE);
    if (!isRecord(node)) return node;
    const keys = Object.keys(node);
    if (keys.length === 1) {
      const key = keys[0] as string;
      const arg = node[key];
      switch (key) {
        case 'Ref':
          return ref(String(arg));
        case 'Condition':
          return condition(String(arg));
        case 'Fn::GetAtt': {
          const [id, attribute] = arg as [string, string];
          return resolveResource(id, attribute);
        }
        case 'Fn::If': {
          const [name, yes, no] = arg as [string, unknown, unknown];
          return condition(name) ? run(yes) : run(no);
        }
        case 'Fn::Equals': {
          const [a, b] = (arg as unknown[]).map(run);
          return String(a) === String(b);
        }
        case 'Fn::Not':
          return !(run((arg as unknown[])[0]) as boolean);
        case 'Fn::And':
          return (arg as unknown[]).every((c) => run(c) === true);
        case 'Fn::Or':
          return (arg as unknown[]).some((c) => run(c) === true);
        case 'Fn::Join': {
          const [separator, parts] = arg as [string, unknown[]];
          return (run(parts) as unknown[]).map(String).join(separator);
        }
        case 'Fn::Sub': {
          const [text, vars] = Array.isArray(arg) ? [arg[0] as string, arg[1] as Record<string, unknown>] : [arg as string, {}];
          const local = Object.fromEntries(Object.entries(vars ?? {}).map(([k, v]) => [k, run(v)]));
          return text.replace(/\$\{([^}]+)\}/g, (_whole, expression: string) => {
            if (expression.startsWith('!')) return `\${${expression.slice(1)}}`;
            if (expression in local) return String(local[expression]);
            const dot = expression.indexOf('.');
            if (dot > 0 && !expression.startsWith('AWS::')) {
              return resolveResource(expression.slice(0, dot), expression.slice(dot + 1));
            }
            return String(ref(expression));
          });
        }
        default:
          if (key.startsWith('Fn::')) throw new Error(`${key} is not supported by this evaluator`);
      }
    }
    return Object.fromEntries(
      Object.entries(node)
        .map(([k, v]) => [k, run(v)])
        .filter(([, v]) => v !== NO_VALUE),
    );
  };
  return run(value);
}

export function conditionHolds(deployment: Deployment, name: string): boolean {
  return evaluate(deployment, { Condition: name }) === true;
}

// Secrets Manager's GetRandomPassword character classes.
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const UPPER = LOWER.toUpperCase();
const DIGITS = '0123456789';
const PUNCTUATION = '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~';

/**
 * A value that GenerateSecretString could produce, made of EVERY character it may use,
 * so a test sees the worst case (for example a quote inside JSON) rather than a lucky draw.
 */
export function worstCaseGeneratedValue(generate: Record<string, unknown>): string {
  let chars = '';
  if (generate['ExcludeLowercase'] !== true) chars += LOWER;
  if (generate['ExcludeUppercase'] !== true) chars += UPPER;
  if (generate['ExcludeNumbers'] !== true) chars += DIGITS;
  if (generate['ExcludePunctuation'] !== true) chars += PUNCTUATION;
  if (generate['IncludeSpace'] === true) chars += ' ';
  const excluded = new Set(String(generate['ExcludeCharacters'] ?? ''));
  return [...chars].filter((c) => !excluded.has(c)).join('');
}

/**
 * The string value a secret resource starts with: SecretString, or GenerateSecretString's
 * template with the generated key added; dynamic references to other secrets of the
 * template resolved the same way.
 */
export function initialSecretString(deployment: Deployment, logicalId: string, seen: string[] = []): string {
  const { template } = deployment;
  const resource = template.Resources[logicalId];
  if (resource?.Type !== 'AWS::SecretsManager::Secret') throw new Error(`${logicalId} is not a secret`);
  if (seen.includes(logicalId)) throw new Error(`dynamic references loop through ${logicalId}`);
  const properties = evaluate(deployment, resource.Properties ?? {}) as Record<string, unknown>;
  let value: string;
  if (typeof properties['SecretString'] === 'string') {
    value = properties['SecretString'];
  } else if (isRecord(properties['GenerateSecretString'])) {
    const generate = properties['GenerateSecretString'];
    const generated = worstCaseGeneratedValue(generate);
    if (typeof generate['GenerateStringKey'] === 'string') {
      const base = JSON.parse(String(generate['SecretStringTemplate'] ?? '{}')) as Record<string, unknown>;
      value = JSON.stringify({ ...base, [generate['GenerateStringKey']]: generated });
    } else {
      value = generated;
    }
  } else {
    throw new Error(`${logicalId} has neither SecretString nor GenerateSecretString`);
  }
  return value.replace(/\{\{resolve:secretsmanager:(.+?):SecretString:([^:}]+)\}\}/g, (whole, secretId: string, key: string) => {
    const target = Object.keys(template.Resources).find((id) => fakeArn(template, id) === secretId);
    if (!target) throw new Error(`dynamic reference to a secret outside the template: ${whole}`);
    const json = JSON.parse(initialSecretString(deployment, target, [...seen, logicalId])) as Record<string, unknown>;
    if (typeof json[key] !== 'string') throw new Error(`${target} has no string key ${key}`);
    return json[key] as string;
  });
}

/**
 * The actions a function's inline policies allow, whatever the resource: `dynamodb:UpdateItem`, …;
 * a policy under a condition (`Fn::If`) counts as granted, as it is in a stack whose condition holds.
 */
export function grantedActions(template: CfnTemplate, functionName: string): Set<string> {
  const [id] =
    resourcesOfType(template, 'AWS::Serverless::Function').find(([, r]) => r.Properties?.['CodeUri'] === `dist/${functionName}`) ?? [];
  if (!id) throw new Error(`no function with CodeUri dist/${functionName}`);
  type Policy = { Statement?: Array<{ Effect?: string; Action?: unknown }>; 'Fn::If'?: [string, Policy, unknown] };
  const policies = (effectiveFunctionProperties(template, id)['Policies'] ?? []) as Policy[];
  return new Set(
    policies
      .map((p) => p['Fn::If']?.[1] ?? p)
      .flatMap((p) => p.Statement ?? [])
      .filter((s) => s.Effect === 'Allow')
      .flatMap((s) => [s.Action].flat().map(String)),
  );
}
