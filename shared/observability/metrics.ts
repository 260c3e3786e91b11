// Lifecycle metrics, recorded three ways from one call: as OpenTelemetry instruments of the global
// MeterProvider (exported to Application Insights' customMetrics in Azure, see metric-export.ts, and to
// results/<run>/metrics.jsonl by the local stack), as a structured `metric` log record (the exact
// per-observation values, which the workbook's percentiles need: the Azure Monitor exporter sends a
// histogram as sum, count, min and max only), and in process counters that the local view and tests read.
import {
  metrics as openTelemetry,
  type Attributes,
  type Counter,
  type Histogram,
  type Meter,
} from '@opentelemetry/api';
import type { Logger } from './logger.js';
import { metricCatalog, type MetricName } from './metric-catalog.js';

export type { MetricName } from './metric-catalog.js';

/** Karpenter's label names: nodepool, reason, error, … */
export type MetricLabels = Readonly<Record<string, string>>;

export interface Metrics {
  increment(name: MetricName, labels: MetricLabels): void;
  observe(name: MetricName, value: number, labels: MetricLabels): void;
  /** Sum of counts (or of observed values) for `name` whose labels include `filter`. */
  total(name: MetricName, filter?: MetricLabels): number;
  count(name: MetricName, filter?: MetricLabels): number;
}

export const METER_NAME = 'nodeclaim-azure-functions';

interface Series {
  name: MetricName;
  labels: MetricLabels;
  count: number;
  sum: number;
}

/** OpenTelemetry instruments, created on first use from the MeterProvider registered by then. */
function instruments(meter: () => Meter): (name: MetricName) => Counter | Histogram {
  const created = new Map<MetricName, Counter | Histogram>();
  return (name) => {
    let instrument = created.get(name);
    if (!instrument) {
      const definition = metricCatalog[name];
      instrument =
        definition.kind === 'counter'
          ? meter().createCounter(name, { description: definition.description })
          : meter().createHistogram(name, {
              description: definition.description,
              unit: definition.unit,
              advice: { explicitBucketBoundaries: [...definition.buckets] },
            });
      created.set(name, instrument);
    }
    return instrument;
  };
}

export function createMetrics(
  log: Logger,
  meter: () => Meter = () => openTelemetry.getMeter(METER_NAME),
): Metrics {
  const series = new Map<string, Series>();
  const instrument = instruments(meter);
  const record = (name: MetricName, value: number, labels: MetricLabels): void => {
    const key = `${name}|${JSON.stringify(Object.entries(labels).sort())}`;
    const entry = series.get(key) ?? { name, labels, count: 0, sum: 0 };
    entry.count += 1;
    entry.sum += value;
    series.set(key, entry);
    const target = instrument(name);
    if (metricCatalog[name].kind === 'counter') (target as Counter).add(value, labels as Attributes);
    else (target as Histogram).record(value, labels as Attributes);
    log.info('metric', { metric: name, value, ...labels });
  };
  const matching = (name: MetricName, filter: MetricLabels = {}): Series[] =>
    [...series.values()].filter(
      (s) => s.name === name && Object.entries(filter).every(([k, v]) => s.labels[k] === v),
    );
  return {
    increment: (name, labels) => record(name, 1, labels),
    observe: (name, value, labels) => record(name, value, labels),
    total: (name, filter) => matching(name, filter).reduce((sum, s) => sum + s.sum, 0),
    count: (name, filter) => matching(name, filter).reduce((sum, s) => sum + s.count, 0),
  };
}
