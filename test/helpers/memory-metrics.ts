import type { MetricPoint, Metrics } from '../../lib/metrics/metrics.js';

/** Keeps every metric point in memory, for tests that assert what was counted. */
export function memoryMetrics(): Metrics & { points: MetricPoint[]; count(name: string, dimensions?: Record<string, string>): number } {
  const points: MetricPoint[] = [];
  return {
    points,
    add: (point) => {
      points.push(point);
    },
    count: (name, dimensions = {}) =>
      points
        .filter((p) => p.name === name && Object.entries(dimensions).every(([k, v]) => p.dimensions[k] === v))
        .reduce((sum, p) => sum + p.value, 0),
  };
}

/** The EMF lines among captured stdout lines, parsed. */
export function emfRecords(lines: readonly string[]): Array<
  Record<string, unknown> & {
    _aws: { CloudWatchMetrics: Array<{ Namespace: string; Dimensions: string[][]; Metrics: Array<{ Name: string; Unit: string }> }> };
  }
> {
  return lines.flatMap((line) => {
    try {
      const value = JSON.parse(line) as Record<string, unknown>;
      return value && typeof value === 'object' && '_aws' in value ? [value as never] : [];
    } catch {
      return [];
    }
  });
}
