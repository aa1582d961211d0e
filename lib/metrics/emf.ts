import { Metrics as PowertoolsMetrics } from '@aws-lambda-powertools/metrics';
import type { Logger } from '../log/logger.js';
import { METRICS_NAMESPACE, type MetricPoint, type Metrics } from './metrics.js';

/**
 * Metrics in CloudWatch Embedded Metric Format on stdout, written by Powertools for AWS Lambda:
 * Lambda ships the line to CloudWatch Logs, which turns it into metrics with no API call and
 * nothing to flush. Each point is published as its own line at once, so a crash later in the
 * invocation loses none.
 * `service` (the function) is a dimension of every set.
 */
export function emfMetrics(service: string, logger: Logger): Metrics {
  // Powertools' own warnings (a key in two dimension sets is expected here) are debug noise.
  const to = (level: 'debug' | 'warn') => (message: string) => logger[level]('metrics', { detail: message });
  const quiet = { trace: to('debug'), debug: to('debug'), info: to('debug'), warn: to('debug'), error: to('warn') };
  const metrics = new PowertoolsMetrics({ namespace: METRICS_NAMESPACE, serviceName: service, logger: quiet });
  return {
    add(point: MetricPoint) {
      // One instance, published per point: `singleMetric()` would build a new Metrics and a new
      // Console for every point, the largest cost on the warm path (a CPU profile showed it).
      for (const rollup of point.rollups) {
        metrics.addDimensions(Object.fromEntries(rollup.map((key) => [key, point.dimensions[key] ?? ''])));
      }
      if (Object.keys(point.dimensions).length > 0 || point.rollups.length === 0) metrics.addDimensions({ ...point.dimensions });
      metrics.addMetric(point.name, point.unit, point.value);
      metrics.publishStoredMetrics();
    },
  };
}
