import type { LogSink } from '../log/logger.js';
import { writeStdoutLine } from '../log/stdout.js';
import { METRICS_NAMESPACE, type MetricPoint, type Metrics, noMetrics } from './metrics.js';

/** The `CloudWatchMetrics` directive of a point, as JSON: the same for every point of one catalogue entry. */
function directiveJson(point: MetricPoint, full: readonly string[]): string {
  const sets = point.rollups.map((rollup) => ['service', ...rollup]);
  if (full.length > 0 || sets.length === 0) sets.push(['service', ...full]);
  return JSON.stringify([{ Namespace: METRICS_NAMESPACE, Dimensions: sets, Metrics: [{ Name: point.name, Unit: point.unit }] }]);
}

// The catalogue is fixed (lib/metrics/metrics.ts), so this holds a handful of entries.
const directives = new Map<string, string>();

/**
 * One point as a CloudWatch Embedded Metric Format document: every dimension set (the rollups,
 * then the full set) with `service` first, the dimension values and the value at the top level.
 * The directive, the same for every point of a kind, is serialised once per kind: per delivery
 * only the timestamp and the values are new.
 */
export function emfLine(service: string, point: MetricPoint, timestamp: number): string {
  const full = Object.keys(point.dimensions);
  // Dimension names are our own words; the counts keep [] and [[]] (or [[a], [b]] and [[a, b]]) apart.
  const rollups = point.rollups.map((rollup) => rollup.join(',')).join('|');
  const key = `${point.name}|${point.unit}|${full.join(',')}|${point.rollups.length}|${rollups}`;
  let directive = directives.get(key);
  if (directive === undefined) {
    directive = directiveJson(point, full);
    directives.set(key, directive);
  }
  const values = JSON.stringify({ service, ...point.dimensions, [point.name]: point.value });
  return `{"_aws":{"Timestamp":${timestamp},"CloudWatchMetrics":${directive}},${values.slice(1)}\n`;
}

/**
 * Metrics in CloudWatch Embedded Metric Format on stdout: Lambda ships the line to CloudWatch
 * Logs, which turns it into metrics with no API call and nothing to flush. Each point is
 * written as its own line at once, so a crash later in the invocation loses none.
 * `service` (the function) is a dimension of every set. Written here rather than with
 * Powertools Metrics: our catalogue is fixed and far inside EMF's limits, and Powertools'
 * validation and buffering cost time on every warm delivery and bytes on the cold path
 * (bench/README.md).
 */
export function emfMetrics(service: string, sink: LogSink = writeStdoutLine, now: () => number = Date.now): Metrics {
  return {
    add(point: MetricPoint) {
      sink(emfLine(service, point, now()));
    },
  };
}

/**
 * The functions' metrics: EMF lines, unless `POWERTOOLS_METRICS_DISABLED` is `true` (the
 * switch Powertools Metrics read; kept, so that existing setups and `npm start` stay quiet).
 */
export function metricsFromEnvironment(service: string, env: Record<string, string | undefined>): Metrics {
  return env['POWERTOOLS_METRICS_DISABLED']?.trim().toLowerCase() === 'true' ? noMetrics : emfMetrics(service);
}
