// What Lambda's Node.js 24 runtime gives a container, so that the benchmark's children run on the
// same Node, with the same V8 heap limits and the same environment as the deployed relay.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { type Document, isMap, isScalar, parseDocument } from 'yaml';

export const LAMBDA_NODE_MAJOR = 24;
export const LAMBDA_REGION = 'us-east-1';
const RELAY_RESOURCE = 'WebhookRelayFunction';
const DEFAULT_MEMORY_MB = 256;

/**
 * The node binary of Lambda's runtime major version: this one when it is that version,
 * otherwise the one npx installs (once; npx keeps it in its cache).
 */
export function lambdaNodeBinary(): string {
  if (Number(process.versions.node.split('.')[0]) === LAMBDA_NODE_MAJOR) return process.execPath;
  const printed = execFileSync('npx', ['-y', '-p', `node@${LAMBDA_NODE_MAJOR}`, '--', 'node', '-p', 'process.execPath'], {
    encoding: 'utf8',
    // npx's own warnings go to stderr; the path is the last line of stdout.
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const binary = printed.trim().split('\n').at(-1);
  if (!binary) throw new Error(`npx printed no path for node@${LAMBDA_NODE_MAJOR}`);
  return binary;
}

export function nodeVersion(binary: string): string {
  return execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim();
}

/**
 * The flags Lambda's bootstrap starts node with for a function of `memoryMb`: a tenth of the
 * memory for the young generation (half of it per semi space), the rest for the old one.
 */
export function lambdaNodeArgs(memoryMb: number): string[] {
  const newSpace = Math.floor(memoryMb / 10);
  return [
    '--expose-gc',
    '--max-http-header-size',
    '81920',
    `--max-semi-space-size=${Math.floor(newSpace / 2)}`,
    `--max-old-space-size=${memoryMb - newSpace}`,
  ];
}

/** The variables Lambda itself sets in every container, with dummy credentials. */
export function lambdaEnvironment(functionName: string, memoryMb: number, taskRoot: string): Record<string, string> {
  return {
    AWS_REGION: LAMBDA_REGION,
    AWS_DEFAULT_REGION: LAMBDA_REGION,
    AWS_ACCESS_KEY_ID: 'testing',
    AWS_SECRET_ACCESS_KEY: 'testing',
    // A role's credentials always come with a session token, which every signed request carries.
    AWS_SESSION_TOKEN: 'bench-session-token',
    AWS_LAMBDA_FUNCTION_NAME: functionName,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(memoryMb),
    AWS_EXECUTION_ENV: `AWS_Lambda_nodejs${LAMBDA_NODE_MAJOR}.x`,
    LANG: 'en_US.UTF-8',
    TZ: ':UTC',
    LAMBDA_TASK_ROOT: taskRoot,
  };
}

export interface RelayTemplate {
  memoryMb: number;
  /**
   * The relay's environment as the template declares it: literals and parameter defaults as
   * they are; a `!Ref` to a resource is taken from `resources` (the benchmark's stand-in for it),
   * and the variable is left out when the benchmark has none, as for a configuration without it.
   */
  environment(resources: Record<string, string>): Record<string, string>;
}

/** Reads the relay's MemorySize and environment from template.yaml, CloudFormation tags included. */
export function readRelayTemplate(templateFile: string): RelayTemplate {
  // Unknown tags (!Ref, !Sub, ...) only warn, and the node keeps its tag for us to read.
  const doc = parseDocument(readFileSync(templateFile, 'utf8'), { logLevel: 'silent' });
  const memory = Number(doc.getIn(['Resources', RELAY_RESOURCE, 'Properties', 'MemorySize']));
  const variables = [
    ...entries(doc, ['Globals', 'Function', 'Environment', 'Variables']),
    ...entries(doc, ['Resources', RELAY_RESOURCE, 'Properties', 'Environment', 'Variables']),
  ];
  return {
    memoryMb: Number.isInteger(memory) && memory > 0 ? memory : DEFAULT_MEMORY_MB,
    environment(resources) {
      const env: Record<string, string> = {};
      for (const { name, tag, value } of variables) {
        if (tag === undefined) env[name] = value;
        else if (tag === '!Ref' && resources[value] !== undefined) env[name] = resources[value];
        else if (tag === '!Ref' && doc.hasIn(['Parameters', value, 'Default']))
          env[name] = String(doc.getIn(['Parameters', value, 'Default']));
      }
      return env;
    },
  };
}

function entries(doc: Document, path: string[]): Array<{ name: string; tag: string | undefined; value: string }> {
  const node = doc.getIn(path, true);
  if (!isMap(node)) return [];
  return node.items.flatMap((pair) =>
    isScalar(pair.key) && isScalar(pair.value)
      ? [{ name: String(pair.key.value), tag: pair.value.tag, value: String(pair.value.value) }]
      : [],
  );
}
