import { describeIssues, type FieldProblem } from './zod-issues.js';

/** Any zod schema (classic or mini) that can check the environment. */
interface EnvironmentSchema<T> {
  safeParse(input: unknown): { success: true; data: T } | { success: false; error: Parameters<typeof describeIssues>[0] };
}

export type EnvironmentReading<T> = { ok: true; settings: T } | { ok: false; problems: FieldProblem[] };

/**
 * The one policy for every function's environment:
 * - a variable that is unset or blank (a template parameter left empty) takes its default;
 * - a variable that is set but invalid is an error naming the variable, never its value.
 * A function with a bad environment does not guess: it refuses to work, visibly (the relay
 * answers 503, the retry worker fails its invocation, the rotation fails its step).
 */
export function readEnvironment<T>(schema: EnvironmentSchema<T>, env: Record<string, string | undefined>): EnvironmentReading<T> {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== ''));
  const result = schema.safeParse(present);
  return result.success ? { ok: true, settings: result.data } : { ok: false, problems: describeIssues(result.error) };
}
