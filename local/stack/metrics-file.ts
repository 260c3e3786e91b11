// The local stack's view of the app's OpenTelemetry metrics: the same instruments that go to Application
// Insights in Azure, read by a periodic reader and written as JSON lines (one line per metric and label
// set, cumulative values) to results/<run>/metrics.jsonl, and summarized on the terminal at the end.
import { appendFileSync } from 'node:fs';
import { metrics } from '@opentelemetry/api';
import {
  DataPointType,
  MeterProvider,
  PeriodicExportingMetricReader,
  type PushMetricExporter,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';

export interface MetricPoint {
  metric: string;
  attributes: Record<string, unknown>;
  /** Counter value, or a histogram's count/sum/min/max. */
  value: number | { count: number; sum: number; min?: number; max?: number };
}

function metricPoints(resourceMetrics: ResourceMetrics): MetricPoint[] {
  const points: MetricPoint[] = [];
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      for (const point of metric.dataPoints) {
        const value =
          metric.dataPointType === DataPointType.HISTOGRAM
            ? (() => {
                const h = point.value as { count: number; sum?: number; min?: number; max?: number };
                return {
                  count: h.count,
                  sum: h.sum ?? 0,
                  ...(h.min !== undefined ? { min: h.min } : {}),
                  ...(h.max !== undefined ? { max: h.max } : {}),
                };
              })()
            : (point.value as number);
        points.push({ metric: metric.descriptor.name, attributes: { ...point.attributes }, value });
      }
    }
  }
  return points;
}

class JsonLinesExporter implements PushMetricExporter {
  latest: MetricPoint[] = [];
  constructor(private readonly path: string) {}

  export(resourceMetrics: ResourceMetrics, done: Parameters<PushMetricExporter['export']>[1]): void {
    const points = metricPoints(resourceMetrics);
    if (points.length > 0) {
      this.latest = points;
      const time = new Date().toISOString();
      appendFileSync(this.path, points.map((p) => JSON.stringify({ time, ...p })).join('\n') + '\n');
    }
    done({ code: 0 });
  }

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

export interface LocalMetrics {
  path: string;
  /** Exports once more and returns the final totals, one line per metric and label set. */
  finish(): Promise<string[]>;
}

/** Registers the global MeterProvider of the local stack; call before anything records a metric. */
export function startLocalMetrics(path: string, intervalMs: number): LocalMetrics {
  const exporter = new JsonLinesExporter(path);
  const provider = new MeterProvider({
    readers: [new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: intervalMs })],
  });
  metrics.setGlobalMeterProvider(provider);
  return {
    path,
    async finish() {
      await provider.forceFlush();
      await provider.shutdown();
      return exporter.latest
        .map((p) => {
          const labels = Object.entries(p.attributes)
            .map(([k, v]) => `${k}="${String(v)}"`)
            .join(',');
          const value =
            typeof p.value === 'number'
              ? String(p.value)
              : `count=${p.value.count} sum=${p.value.sum.toFixed(1)}`;
          return `${p.metric}{${labels}} ${value}`;
        })
        .sort();
    },
  };
}
