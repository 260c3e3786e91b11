// What the app's telemetry would put into Azure Monitor, measured rather than estimated: a synthetic
// cluster of 100 or 1,000 nodes goes through the real sweep metrics step and the real metrics code for a
// simulated hour (a sweep every SWEEP_SCHEDULE period, the launches and terminations of a fleet replaced
// once a week, provisioning windows), and every export interval the real Azure Monitor exporter converts
// and sends what the SDK collected to a counting HTTP client in place of the ingestion endpoint. A second,
// cumulative reader counts the samples the same instruments would be in managed Prometheus. The log
// records the metrics code writes are counted at its logger's sink. `npm run cost` prices these figures.
import { gunzipSync } from 'node:zlib';
import type { AzureMonitorExporterOptions } from '@azure/monitor-opentelemetry-exporter';
import { createHttpHeaders } from '@azure/core-rest-pipeline';
import {
  AggregationTemporality,
  DataPointType,
  MeterProvider,
  PeriodicExportingMetricReader,
  type PushMetricExporter,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { pathToFileURL } from 'node:url';
import { DEFAULT_SWEEP_SCHEDULE } from '../../shared/config/settings.js';
import type { NodeClaim } from '../../shared/models/index.js';
import { nodeClaimLifecycleLabels } from '../../shared/decisions/cluster-gauges.js';
import { metricsStep } from '../../shared/lifecycle/sweep/steps/metrics.js';
import type { SweepContext } from '../../shared/lifecycle/sweep-step/sweep-step.js';
import { createLogger } from '../../shared/observability/logger.js';
import { EXPORT_INTERVAL_MS } from '../../shared/observability/metric-export.js';
import { createMetrics, type Metrics } from '../../shared/observability/metrics.js';
import { recordNodeClaimTransition } from '../../shared/observability/nodeclaim-status-metrics.js';
import { syntheticCluster, type SyntheticCluster } from './synthetic-cluster.js';

type HttpClient = NonNullable<AzureMonitorExporterOptions['httpClient']>;

/** A month as the cost model counts it: 730 hours. */
export const MINUTES_PER_MONTH = 730 * 60;
const SIMULATED_SECONDS = 3600;

export interface TelemetryVolume {
  nodes: number;
  nodePools: number;
  perNode: boolean;
  exportIntervalSeconds: number;
  /** Application Insights customMetrics rows (one per exported data point) a minute. */
  metricRowsPerMinute: number;
  /** Their uncompressed JSON envelope bytes a minute (the size Azure Monitor bills on). */
  metricBytesPerMinute: number;
  /** Bytes on the wire a minute (gzip), for comparison only. */
  wireBytesPerMinute: number;
  /** The same instruments as Prometheus samples a minute at the same interval (cumulative: every series). */
  prometheusSamplesPerMinute: number;
  /** Log records the metrics code writes a minute, and their bytes. */
  logRecordsPerMinute: number;
  logBytesPerMinute: number;
}

/** The ingestion endpoint's stand-in: counts the envelopes and bytes the exporter sends, answers 200. */
function countingIngestion(): { client: HttpClient; rows: number; bytes: number; wireBytes: number } {
  const counts = { rows: 0, bytes: 0, wireBytes: 0 };
  const client: HttpClient = {
    async sendRequest(request) {
      const raw = request.body;
      const buffer =
        typeof raw === 'string'
          ? Buffer.from(raw)
          : raw instanceof Uint8Array
            ? Buffer.from(raw)
            : Buffer.alloc(0);
      counts.wireBytes += buffer.length;
      const text =
        request.headers.get('Content-Encoding') === 'gzip'
          ? gunzipSync(buffer).toString()
          : buffer.toString();
      const envelopes: unknown[] = text.trim().startsWith('[')
        ? (JSON.parse(text) as unknown[])
        : text
            .split('\n')
            .filter((line) => line.trim() !== '')
            .map((line) => JSON.parse(line) as unknown);
      for (const envelope of envelopes) {
        counts.rows += 1;
        counts.bytes += Buffer.byteLength(JSON.stringify(envelope));
      }
      const body = JSON.stringify({
        itemsReceived: envelopes.length,
        itemsAccepted: envelopes.length,
        errors: [],
      });
      return {
        request,
        status: 200,
        headers: createHttpHeaders({ 'content-type': 'application/json' }),
        bodyAsText: body,
      };
    },
  };
  return {
    client,
    get rows() {
      return counts.rows;
    },
    get bytes() {
      return counts.bytes;
    },
    get wireBytes() {
      return counts.wireBytes;
    },
  };
}

/** Counts Prometheus samples: a histogram data point is its buckets, +Inf, _sum and _count. */
class PrometheusSampleCounter implements PushMetricExporter {
  samples = 0;
  export(metrics: ResourceMetrics, done: (result: ExportResult) => void): void {
    for (const scope of metrics.scopeMetrics)
      for (const metric of scope.metrics)
        for (const point of metric.dataPoints) {
          if (metric.dataPointType === DataPointType.HISTOGRAM) {
            const value = point.value as { buckets: { counts: number[] } };
            this.samples += value.buckets.counts.length + 2;
          } else this.samples += 1;
        }
    done({ code: ExportResultCode.SUCCESS });
  }
  selectAggregationTemporality(): AggregationTemporality {
    return AggregationTemporality.CUMULATIVE;
  }
  async forceFlush(): Promise<void> {}
  async shutdown(): Promise<void> {}
}

function sweepContext(cluster: SyntheticCluster, metrics: Metrics, perNode: boolean): SweepContext {
  const context = {
    deps: { metrics, settings: { metricsPerNode: perNode } },
    view: {
      snapshot: { nodePools: cluster.nodePools, nodes: cluster.nodes },
      nodeClaims: () => cluster.nodeClaims,
    },
  };
  return context as unknown as SweepContext;
}

/** One NodeClaim's launch as the lifecycle records it: created, VM accepted and created, three conditions. */
function recordLaunch(metrics: Metrics, nodeClaim: NodeClaim, at: Date): void {
  const { nodepool } = nodeClaimLifecycleLabels(nodeClaim);
  metrics.increment('karpenter_nodeclaims_created_total', {
    reason: 'drifted',
    nodepool,
    min_values_relaxed: 'false',
  });
  metrics.increment('karpenter_nodeclaims_launch_started_total', { nodepool });
  metrics.observe('karpenter_nodeclaims_instance_creation_duration_seconds', 90, { nodepool });
  for (const [type, seconds] of [
    ['Launched', 90],
    ['Registered', 60],
    ['Initialized', 20],
  ] as const) {
    recordNodeClaimTransition(metrics, nodeClaim, {
      type,
      status: 'True',
      reason: type,
      previousSince: new Date(at.getTime() - seconds * 1000).toISOString(),
      previousStatus: 'Unknown',
      at,
    });
  }
  metrics.increment('karpenter_nodes_created_total', { nodepool });
}

/** The replaced NodeClaim's disruption and termination. */
function recordReplacement(metrics: Metrics, nodeClaim: NodeClaim): void {
  const labels = nodeClaimLifecycleLabels(nodeClaim);
  metrics.increment('karpenter_voluntary_disruption_decisions_total', {
    decision: 'replace',
    reason: 'drifted',
    consolidation_type: '',
  });
  metrics.increment('karpenter_nodeclaims_disrupted_total', {
    reason: 'drifted',
    nodepool: labels.nodepool,
    capacity_type: labels.capacity_type,
    consolidation_policy: 'WhenEmptyOrUnderutilized',
    termination_mode: 'graceful',
  });
  metrics.increment('karpenter_nodeclaims_terminated_total', labels);
  metrics.increment('karpenter_nodes_terminated_total', { nodepool: labels.nodepool });
}

/** Seconds between runs of an NCRONTAB "*\/N * * * * *". */
function sweepPeriodSeconds(): number {
  const seconds = /^\*\/(\d+) /.exec(DEFAULT_SWEEP_SCHEDULE)?.[1];
  if (!seconds) throw new Error(`cannot read a period from ${DEFAULT_SWEEP_SCHEDULE}`);
  return Number(seconds);
}

export async function measureTelemetry(options: {
  nodes: number;
  nodePools: number;
  perNode: boolean;
}): Promise<TelemetryVolume> {
  // The exporter's own telemetry about itself (statsbeat, SDK stats) is not the app's; it stays off here.
  process.env['APPLICATION_INSIGHTS_NO_STATSBEAT'] = 'true';
  process.env['APPLICATIONINSIGHTS_SDKSTATS_DISABLED'] = 'true';
  const { AzureMonitorMetricExporter } = await import('@azure/monitor-opentelemetry-exporter');
  const ingestion = countingIngestion();
  const exporter = new AzureMonitorMetricExporter({
    connectionString:
      'InstrumentationKey=00000000-0000-0000-0000-000000000000;IngestionEndpoint=https://eastus-8.in.applicationinsights.azure.com/',
    disableOfflineStorage: true,
    httpClient: ingestion.client,
  });
  const prometheus = new PrometheusSampleCounter();
  const never = 24 * 3_600_000;
  const readers = [
    new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: never }),
    new PeriodicExportingMetricReader({ exporter: prometheus, exportIntervalMillis: never }),
  ];
  const provider = new MeterProvider({ readers });
  const logs = { records: 0, bytes: 0 };
  const log = createLogger({
    component: 'bench',
    sink: (_level, line) => {
      logs.records += 1;
      logs.bytes += Buffer.byteLength(line);
    },
  });
  const metrics = createMetrics(log, () => provider.getMeter('nodeclaim-azure-functions'));
  const cluster = syntheticCluster(options.nodes, options.nodePools);
  const context = sweepContext(cluster, metrics, options.perNode);

  // Every node replaced once a week; 2,000 provisioning windows a month (the cost model's workload).
  const launchesPerSecond = options.nodes / (168 * 3600);
  const windowsPerSecond = 2000 / (730 * 3600);
  const sweep = sweepPeriodSeconds();
  const exportEvery = EXPORT_INTERVAL_MS / 1000;
  const start = Date.parse('2026-01-01T00:00:00Z');
  let launched = 0;
  let windows = 0;
  for (let t = 0; t < SIMULATED_SECONDS; t++) {
    const at = new Date(start + t * 1000);
    if (t % sweep === 0) await metricsStep.run(context);
    while (launched < Math.floor((t + 1) * launchesPerSecond + 0.5) && cluster.nodeClaims.length > 0) {
      const nodeClaim = cluster.nodeClaims[launched % cluster.nodeClaims.length];
      if (nodeClaim) {
        recordReplacement(metrics, nodeClaim);
        recordLaunch(metrics, nodeClaim, at);
      }
      launched += 1;
    }
    while (windows < Math.floor((t + 1) * windowsPerSecond + 0.5)) {
      metrics.observe('karpenter_scheduler_scheduling_duration_seconds', 0.2, {});
      windows += 1;
    }
    if ((t + 1) % exportEvery === 0) await Promise.all(readers.map((r) => r.forceFlush()));
  }
  await provider.shutdown();
  const minutes = SIMULATED_SECONDS / 60;
  return {
    ...options,
    exportIntervalSeconds: exportEvery,
    metricRowsPerMinute: ingestion.rows / minutes,
    metricBytesPerMinute: ingestion.bytes / minutes,
    wireBytesPerMinute: ingestion.wireBytes / minutes,
    prometheusSamplesPerMinute: prometheus.samples / minutes,
    logRecordsPerMinute: logs.records / minutes,
    logBytesPerMinute: logs.bytes / minutes,
  };
}

export const gbPerMonth = (bytesPerMinute: number): number => (bytesPerMinute * MINUTES_PER_MONTH) / 1e9;

export async function runTelemetryBench(): Promise<TelemetryVolume[]> {
  const results: TelemetryVolume[] = [];
  for (const nodes of [100, 1000])
    for (const perNode of [false, true])
      results.push(await measureTelemetry({ nodes, nodePools: 3, perNode }));
  console.log(
    `\n== telemetry export: a simulated hour, 3 NodePools, sweep ${DEFAULT_SWEEP_SCHEDULE}, export every ${EXPORT_INTERVAL_MS / 1000} s, through the Azure Monitor exporter to a counting sink`,
  );
  const header = [
    'nodes',
    'METRICS_PER_NODE',
    'metric rows/min',
    'metric GB/month',
    'Prom samples/min',
    'log records/min',
    'log GB/month',
  ];
  const rows = results.map((r) => [
    r.nodes.toLocaleString('en-US'),
    String(r.perNode),
    r.metricRowsPerMinute.toFixed(1),
    gbPerMonth(r.metricBytesPerMinute).toFixed(3),
    r.prometheusSamplesPerMinute.toFixed(1),
    r.logRecordsPerMinute.toFixed(2),
    gbPerMonth(r.logBytesPerMinute).toFixed(4),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padStart(widths[i] ?? 0)).join(' | ')} |`;
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const row of rows) console.log(line(row));
  console.log(
    '  metric rows: customMetrics rows the exporter sent (one per data point; delta temporality, so a counter\n' +
      '  is a row only in an interval it changed); GB: their uncompressed JSON envelopes, 730 h a month.\n' +
      '  Prom samples: the same instruments cumulative, as managed Prometheus would ingest them at that interval.\n' +
      "  log records: the metrics code's own (the launch histograms' observations); decisions and errors are\n" +
      '  logged by the lifecycle as before and are not in this count.',
  );
  return results;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runTelemetryBench();
