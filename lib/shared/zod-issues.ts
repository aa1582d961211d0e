/** A validation problem reduced to where it is and what is wrong, never the offending value. */
export interface FieldProblem {
  path: string;
  problem: string;
}

/** The part of a zod issue (classic or mini) this module reads. */
interface Issue {
  code?: string;
  path: ReadonlyArray<PropertyKey>;
  message: string;
  keys?: readonly string[];
}

/** The part of a zod error (classic or mini) that names problems. */
export interface IssueList {
  issues: ReadonlyArray<Issue>;
}

/** Enough of a zod schema's internals to find the keys an object accepts at a path. */
interface SchemaNode {
  _zod: { def: Record<string, unknown> & { type: string } };
}

export const joinPath = (path: ReadonlyArray<PropertyKey>) => (path.length > 0 ? path.map(String).join('.') : '(root)');

/** A problem at its path as a list of keys, for validations that nest one schema's problems in another's. */
export interface PathProblem {
  path: PropertyKey[];
  problem: string;
}

/**
 * The problems of a failed validation at their paths. With the schema, an unknown key becomes one
 * problem per key, at its own path, with the nearest known key as a hint.
 */
export function pathProblems(error: IssueList, schema?: unknown): PathProblem[] {
  return error.issues.flatMap((issue): PathProblem[] => {
    if (issue.code !== 'unrecognized_keys' || !issue.keys) return [{ path: [...issue.path], problem: issue.message }];
    const known = schema ? knownKeysAt(schema as SchemaNode, issue.path) : [];
    return issue.keys.map((key) => {
      const hint = closestKey(key, known);
      return { path: [...issue.path, key], problem: hint ? `unknown key; did you mean "${hint}"?` : 'unknown key' };
    });
  });
}

/**
 * The problems of a failed validation, by path: `auth.header: unknown key; did you mean "headers"?`.
 */
export function describeIssues(error: IssueList, schema?: unknown): FieldProblem[] {
  return pathProblems(error, schema).map(({ path, problem }) => ({ path: joinPath(path), problem }));
}

/** `path problem` lines, for messages that list everything wrong at once. */
export function issueLines(error: IssueList, schema?: unknown): string[] {
  return describeIssues(error, schema).map((p) => `${p.path} ${p.problem}`);
}

/** The keys an object schema accepts at `path`, following arrays, records and wrappers. */
export function knownKeysAt(schema: SchemaNode, path: ReadonlyArray<PropertyKey>): string[] {
  let node: SchemaNode | undefined = schema;
  let rest = [...path];
  for (let guard = 0; node && guard < 64; guard++) {
    const def: SchemaNode['_zod']['def'] = node._zod.def;
    switch (def.type) {
      case 'optional':
      case 'default':
      case 'nullable':
      case 'prefault':
      case 'nonoptional':
      case 'readonly':
      case 'catch':
        node = def['innerType'] as SchemaNode;
        continue;
      case 'pipe':
        node = def['in'] as SchemaNode;
        continue;
    }
    if (rest.length === 0) return def.type === 'object' ? Object.keys(def['shape'] as object) : [];
    const [head, ...tail] = rest;
    rest = tail;
    if (def.type === 'object') {
      const shape = def['shape'] as Record<string, SchemaNode>;
      node = Object.hasOwn(shape, String(head)) ? shape[String(head)] : undefined;
    } else if (def.type === 'array') node = def['element'] as SchemaNode;
    else if (def.type === 'record') node = def['valueType'] as SchemaNode;
    else node = undefined;
  }
  return [];
}

/** The known key a typo most likely meant: same letters ignoring case, or at most two edits away. */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  let best: { key: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = candidate.toLowerCase() === key.toLowerCase() ? 0 : editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance <= Math.min(2, Math.floor(candidate.length / 3) + 1) && (!best || distance < best.distance))
      best = { key: candidate, distance };
  }
  return best?.key;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, d[i - 2]![j - 2]! + 1);
      d[i]![j] = value;
    }
  }
  return d[a.length]![b.length]!;
}
