// Launch-funnel metrics per NodePool. Each observation is written as a structured log record with a
// `metric` field (in Application Insights the JSON line is the trace's message, which the portal workbook
// in infra/monitoring parses) and kept in process counters, which the local stack's view and tests read.
import type { Logger } from './logger.js';

export type MetricName =
  | 'nodeclaims_launch_started'
  | 'nodeclaims_launched'
  | 'nodeclaims_launch_failed'
  | 'nodeclaims_registered'
  | 'nodeclaims_initialized'
  | 'nodeclaims_registration_timeout'
  | 'nodeclaims_disrupted'
  | 'vm_creation_seconds'
  | 'launch_to_registered_seconds';

export type MetricDimensions = Readonly<Record<string, string>>;

export interface Metrics {
  increment(name: MetricName, dimensions: MetricDimensions): void;
  observe(name: MetricName, value: number, dimensions: MetricDimensions): void;
  /** Sum of counts (or of observed values) for `name` whose dimensions include `filter`. */
  total(name: MetricName, filter?: MetricDimensions): number;
  count(name: MetricName, filter?: MetricDimensions): number;
}

interface Series {
  name: MetricName;
  dimensions: MetricDimensions;
  count: number;
  sum: number;
}

export function createMetrics(log: Logger): Metrics {
  const series = new Map<string, Series>();
  const record = (name: MetricName, value: number, dimensions: MetricDimensions): void => {
    const key = `${name}|${JSON.stringify(Object.entries(dimensions).sort())}`;
    const entry = series.get(key) ?? { name, dimensions, count: 0, sum: 0 };
    entry.count += 1;
    entry.sum += value;
    series.set(key, entry);
    log.info('metric', { metric: name, value, ...dimensions });
  };
  const matching = (name: MetricName, filter: MetricDimensions = {}): Series[] =>
    [...series.values()].filter(
      (s) => s.name === name && Object.entries(filter).every(([k, v]) => s.dimensions[k] === v),
    );
  return {
    increment: (name, dimensions) => record(name, 1, dimensions),
    observe: (name, value, dimensions) => record(name, value, dimensions),
    total: (name, filter) => matching(name, filter).reduce((sum, s) => sum + s.sum, 0),
    count: (name, filter) => matching(name, filter).reduce((sum, s) => sum + s.count, 0),
  };
}
