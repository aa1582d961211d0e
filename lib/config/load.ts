import { parseJson, whereJsonFails } from '../shared/json.js';
import { type JsonSyntaxProblem, jsonSyntaxError } from '../shared/json-syntax.js';
import { describeIssues, joinPath } from '../shared/zod-issues.js';
import { ConfigInvalidError } from './errors.js';
import { type RelayConfig, referenceProblems, relayConfigSchema } from './schema.js';

/** A validated configuration and, for versioned stores, since when it is current. */
export interface LoadedConfig {
  config: RelayConfig;
  currentSince?: Date;
}

/**
 * Validates a configuration's text; a JSON syntax error names its line and column. For tools,
 * which want the answer at once; the relay reads with readRelayConfig.
 */
export function parseRelayConfig(text: string): RelayConfig {
  const json = parseJson(text);
  if (!json.ok) throw notJsonError(jsonSyntaxError(text));
  return validateRelayConfig(json.value);
}

/** parseRelayConfig for the relay's cold path: the syntax scanner loads only for a text that is not JSON. */
export async function readRelayConfig(text: string): Promise<RelayConfig> {
  const json = parseJson(text);
  if (!json.ok) throw notJsonError(await whereJsonFails(text));
  return validateRelayConfig(json.value);
}

function notJsonError(where: JsonSyntaxProblem | undefined): ConfigInvalidError {
  return new ConfigInvalidError([
    where
      ? { path: `line ${where.line}, column ${where.column}`, problem: `not valid JSON: ${where.problem}` }
      : { path: '(root)', problem: 'is not valid JSON' },
  ]);
}

function validateRelayConfig(value: unknown): RelayConfig {
  // zod skips an own `__proto__` key of a record, so such a destination would vanish without a word.
  const destinations = (value as { destinations?: unknown } | null)?.destinations;
  if (typeof destinations === 'object' && destinations !== null && Object.hasOwn(destinations, '__proto__')) {
    throw new ConfigInvalidError([{ path: 'destinations.__proto__', problem: 'is not a usable destination name' }]);
  }
  const result = relayConfigSchema.safeParse(value);
  if (result.success) return result.data;
  // Every problem in one list: what the parts say of each other too, though a part is wrong.
  const problems = describeIssues(result.error, relayConfigSchema);
  const seen = new Set(problems.map((p) => `${p.path} ${p.problem}`));
  for (const { path, message } of referenceProblems(value)) {
    const problem = { path: joinPath(path), problem: message };
    if (!seen.has(`${problem.path} ${problem.problem}`)) problems.push(problem);
  }
  throw new ConfigInvalidError(problems);
}
