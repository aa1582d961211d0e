import { fileURLToPath } from 'node:url';
import {
  type CfnTemplate,
  conditionHolds,
  type Deployment,
  effectiveFunctionProperties,
  evaluate,
  loadTemplate,
} from '../test/helpers/cloudformation.js';

/**
 * The stack as template.yaml deploys it, read once for the simulation: each function's
 * environment (parameters at the values the run chose, resources as the stand-ins' names), its
 * timeout, the retry queue's visibility and redrive, and delivery-retry's event source mapping.
 * What the simulation runs is what the template says, not a copy of its numbers.
 */
export interface SimFunction {
  logicalId: string;
  timeoutMs: number;
  env: Record<string, string>;
}

export interface SimDeployment {
  relay: SimFunction;
  retry: SimFunction;
  triage: SimFunction;
  summary: SimFunction;
  directory: SimFunction;
  queue: { url: string; deadLetterUrl: string; visibilityTimeoutSeconds: number; maxReceiveCount: number };
  eventSource: { batchSize: number; maximumConcurrency: number };
  tableName: string;
  secrets: { config: string; triageKey: string; platform: string };
  /** Whether the stack runs directory-sync (OwnerRouting). */
  ownerRouting: boolean;
}

const TEMPLATE = fileURLToPath(new URL('../template.yaml', import.meta.url));

/** The names the stand-ins go by: a queue's URL, a table's name, a secret's ARN. */
function resourceName(template: CfnTemplate, id: string, attribute?: string): string {
  const type = template.Resources[id]?.Type;
  if (type === 'AWS::SQS::Queue') {
    return attribute === 'Arn' ? `arn:aws:sqs:us-east-1:123456789012:${id}` : `https://sqs.us-east-1.amazonaws.com/123456789012/${id}`;
  }
  if (type === 'AWS::DynamoDB::Table') return attribute === 'Arn' ? `arn:aws:dynamodb:us-east-1:123456789012:table/${id}` : id;
  if (type === 'AWS::SecretsManager::Secret') return `arn:aws:secretsmanager:us-east-1:123456789012:secret:${id}-Sim`;
  return `arn:aws:sim:us-east-1:123456789012:${id}`;
}

export function readDeployment(parameters: Record<string, string>): SimDeployment {
  const template = loadTemplate(TEMPLATE);
  const deployment: Deployment = { template, parameters, resolveResource: (id, attribute) => resourceName(template, id, attribute) };
  const fn = (logicalId: string): SimFunction => {
    const properties = evaluate(deployment, effectiveFunctionProperties(template, logicalId)) as {
      Timeout?: number | string;
      Environment?: { Variables?: Record<string, unknown> };
    };
    const env = Object.fromEntries(Object.entries(properties.Environment?.Variables ?? {}).map(([k, v]) => [k, String(v)]));
    return { logicalId, timeoutMs: Number(properties.Timeout ?? 3) * 1000, env };
  };
  const queue = evaluate(deployment, template.Resources['DeliveryQueue']?.Properties ?? {}) as {
    VisibilityTimeout?: number;
    RedrivePolicy?: { maxReceiveCount?: number };
  };
  const retryFunction = template.Resources['DeliveryRetryFunction']?.Properties as
    | { Events?: Record<string, { Properties?: Record<string, unknown> }> }
    | undefined;
  const retryEvents = retryFunction?.Events;
  const mapping = Object.values(retryEvents ?? {})[0]?.Properties ?? {};
  return {
    relay: fn('WebhookRelayFunction'),
    retry: fn('DeliveryRetryFunction'),
    triage: fn('TriageFunction'),
    summary: fn('SummaryFunction'),
    directory: fn('DirectorySyncFunction'),
    queue: {
      url: resourceName(template, 'DeliveryQueue'),
      deadLetterUrl: resourceName(template, 'DeliveryDeadLetterQueue'),
      visibilityTimeoutSeconds: Number(queue.VisibilityTimeout ?? 30),
      maxReceiveCount: Number(queue.RedrivePolicy?.maxReceiveCount ?? 10),
    },
    eventSource: {
      batchSize: Number(mapping['BatchSize'] ?? 10),
      maximumConcurrency: Number((mapping['ScalingConfig'] as { MaximumConcurrency?: number } | undefined)?.MaximumConcurrency ?? 1000),
    },
    tableName: resourceName(template, 'DedupTable'),
    secrets: {
      config: resourceName(template, 'RelayConfigSecret'),
      triageKey: resourceName(template, 'TriageKeySecret'),
      platform: resourceName(template, 'PlatformCredentialsSecret'),
    },
    ownerRouting: conditionHolds(deployment, 'RouteByOwner'),
  };
}
