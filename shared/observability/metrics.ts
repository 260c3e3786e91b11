// Lifecycle metrics, recorded from one call as OpenTelemetry instruments of the global MeterProvider
// (exported to Application Insights' customMetrics in Azure, see metric-export.ts, and to
// results/<run>/metrics.jsonl by the local stack) and in process counters that the local view and tests
// read. Only the histograms the catalog marks `logObservations` (one observation per launch, the
// workbook's percentiles: the Azure Monitor exporter sends a histogram as sum, count, min and max only)
// are also a structured `metric` log record, so log volume follows the launch rate, never the sweep rate
// or the cluster's size. Labels are typed from the catalog: a call with a label set other than the
// metric's (upstream's) does not compile.
// Gauges (the state of the cluster as the last sweep saw it) are observable instruments whose series the
// sweep replaces as a whole, so a deleted Node's series goes away as it does in Karpenter's metric store.
import {
  metrics as openTelemetry,
  type Attributes,
  type Counter,
  type Histogram,
  type Meter,
  type ObservableGauge,
} from '@opentelemetry/api';
import type { Logger } from './logger.js';
import {
  metricCatalog,
  type GaugeName,
  type MetricDefinition,
  type MetricLabelsOf,
  type MetricName,
} from './metric-catalog.js';

export type { GaugeName, MetricLabelsOf, MetricName } from './metric-catalog.js';

/** Karpenter's label names: nodepool, reason, error, … */
export type MetricLabels = Readonly<Record<string, string>>;

export interface Metrics {
  increment<N extends MetricName>(name: N, labels: MetricLabelsOf<N>): void;
  observe<N extends MetricName>(name: N, value: number, labels: MetricLabelsOf<N>): void;
  /** Replaces every series of a gauge: what is not in `series` is no longer reported. */
  setGauge(name: GaugeName, series: readonly GaugeSeries[]): void;
  /** Sum of counts (or of observed values) for `name` whose labels include `filter`. */
  total(name: MetricName, filter?: MetricLabels): number;
  count(name: MetricName, filter?: MetricLabels): number;
}

export interface GaugeSeries {
  labels: MetricLabels;
  value: number;
}

export const METER_NAME = 'nodeclaim-azure-functions';

interface Series {
  name: MetricName;
  labels: MetricLabels;
  count: number;
  sum: number;
}

/** OpenTelemetry instruments, created on first use from the MeterProvider registered by then. */
function instruments(meter: () => Meter): (name: MetricName) => Counter | Histogram | ObservableGauge {
  const created = new Map<MetricName, Counter | Histogram | ObservableGauge>();
  return (name) => {
    let instrument = created.get(name);
    if (!instrument) {
      const definition: MetricDefinition = metricCatalog[name];
      instrument =
        definition.kind === 'counter'
          ? meter().createCounter(name, { description: definition.description })
          : definition.kind === 'gauge'
            ? meter().createObservableGauge(name, { description: definition.description })
            : meter().createHistogram(name, {
                description: definition.description,
                ...(definition.unit ? { unit: definition.unit } : {}),
                advice: { explicitBucketBoundaries: [...(definition.buckets ?? [])] },
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
  const gauges = new Map<GaugeName, readonly GaugeSeries[]>();
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
    const definition: MetricDefinition = metricCatalog[name];
    if (definition.logObservations) log.info('metric', { metric: name, value, ...labels });
  };
  const matching = (name: MetricName, filter: MetricLabels = {}): Series[] =>
    [...series.values()].filter(
      (s) => s.name === name && Object.entries(filter).every(([k, v]) => s.labels[k] === v),
    );
  const matchingGauge = (name: MetricName, filter: MetricLabels = {}): readonly GaugeSeries[] =>
    (gauges.get(name as GaugeName) ?? []).filter((s) =>
      Object.entries(filter).every(([k, v]) => s.labels[k] === v),
    );
  // Not logged: a gauge is the whole cluster's state every sweep, which the export already carries.
  const setGauge = (name: GaugeName, current: readonly GaugeSeries[]): void => {
    if (!gauges.has(name)) {
      (instrument(name) as ObservableGauge).addCallback((result) => {
        for (const s of gauges.get(name) ?? []) result.observe(s.value, s.labels as Attributes);
      });
    }
    gauges.set(name, current);
  };
  const isGauge = (name: MetricName): boolean => metricCatalog[name].kind === 'gauge';
  return {
    increment: (name, labels) => record(name, 1, labels),
    observe: (name, value, labels) => record(name, value, labels),
    setGauge,
    total: (name, filter) =>
      isGauge(name)
        ? matchingGauge(name, filter).reduce((sum, s) => sum + s.value, 0)
        : matching(name, filter).reduce((sum, s) => sum + s.sum, 0),
    count: (name, filter) =>
      isGauge(name)
        ? matchingGauge(name, filter).length
        : matching(name, filter).reduce((sum, s) => sum + s.count, 0),
  };
}
