/** One difference between two configurations, by path only: values may be secrets. */
export interface ConfigChange {
  path: string;
  change: 'added' | 'removed' | 'changed';
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const join = (base: string, key: string | number) =>
  typeof key === 'number'
    ? `${base}[${key}]`
    : /^[A-Za-z_$][\w$-]*$/.test(key)
      ? base
        ? `${base}.${key}`
        : key
      : `${base}[${JSON.stringify(key)}]`;

/**
 * Every leaf that differs between `before` and `after`, named by its path (`auth.basic.password`,
 * `destinations.ops.url`, `routes[0].to[1]`). It never returns a value, so its output is safe to
 * print for a configuration full of secrets. Keys are compared as own properties: `__proto__` or
 * `constructor` in a file is just a name.
 */
export function configChanges(before: unknown, after: unknown, path = ''): ConfigChange[] {
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((key) => {
      const inBefore = Object.hasOwn(before, key);
      const inAfter = Object.hasOwn(after, key);
      const at = join(path, key);
      if (!inBefore) return [{ path: at, change: 'added' as const }];
      if (!inAfter) return [{ path: at, change: 'removed' as const }];
      return configChanges(before[key], after[key], at);
    });
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    const length = Math.max(before.length, after.length);
    return Array.from({ length }, (_, i) => i).flatMap((i) => {
      const at = join(path, i);
      if (i >= before.length) return [{ path: at, change: 'added' as const }];
      if (i >= after.length) return [{ path: at, change: 'removed' as const }];
      return configChanges(before[i], after[i], at);
    });
  }
  return JSON.stringify(before) === JSON.stringify(after) ? [] : [{ path: path || '(root)', change: 'changed' }];
}
