// The two parts of the app's bill that are not Flex Consumption's and that `npm run cost` used to leave
// out: telemetry ingestion (the metrics the telemetry bench measures, the metric log records, and the
// Functions host's own request and trace rows) and the Azure Storage transactions of the Durable Task
// Azure Storage backend and the queue trigger (idle polling, lease renewals, and the queue and table work
// of every message and orchestration step). The polling intervals are read from host.json at run time,
// so a change there (Durable's maxQueuePollingInterval is still being chosen) changes the bill here. The
// prices are public list prices, not read from an API here: each names its source and date.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MINUTES_PER_MONTH, type TelemetryVolume } from './telemetry-bench.js';

/**
 * Public list prices (USD, pay-as-you-go, East US), as published on the pages named; this machine has no
 * network, so they were not re-read when this was written (2026-12) and should be checked before use.
 */
export const TELEMETRY_PRICES = {
  /** Log Analytics Analytics Logs ingestion, which workspace-based Application Insights bills its rows at. https://azure.microsoft.com/pricing/details/monitor/ (Analytics Logs, pay-as-you-go, $2.30/GB; also https://monitoringcost.com/azure-monitor-cost, 2026). */
  analyticsLogsPerGb: 2.3,
  /** Azure Monitor managed service for Prometheus, metrics ingestion: $0.16 per 10 million samples. https://azure.microsoft.com/pricing/details/monitor/ (Metrics, Prometheus). */
  prometheusPerSample: 0.16 / 10_000_000,
  /** Azure Queue Storage, general purpose v2, LRS: $0.004 per 10,000 operations (class 1; class 2 is no dearer). https://azure.microsoft.com/pricing/details/storage/queues/ */
  queuePerOperation: 0.004 / 10_000,
  /** Azure Table Storage, LRS: $0.00036 per 10,000 transactions. https://azure.microsoft.com/pricing/details/storage/tables/ */
  tablePerTransaction: 0.00036 / 10_000,
  /** Block blob, hot, LRS: "all other operations" (reads, leases) $0.004 per 10,000. https://azure.microsoft.com/pricing/details/storage/blobs/ */
  blobOtherPerOperation: 0.004 / 10_000,
  /** Block blob, hot, LRS: list and create container operations $0.05 per 10,000. https://azure.microsoft.com/pricing/details/storage/blobs/ */
  blobListPerOperation: 0.05 / 10_000,
} as const;

/**
 * The Functions host's own rows per execution in Application Insights, an estimate (not measured here):
 * one `requests` row and the "Executing"/"Executed" `traces` rows the Function category logs at
 * Information (host.json), about 500 bytes each as stored.
 */
export const HOST_ROWS_PER_EXECUTION = 3;
export const HOST_BYTES_PER_ROW = 500;

export interface HostPolling {
  /** Durable control queues (storageProvider.partitionCount, default 4). */
  partitionCount: number;
  /** Durable's idle queue polling backs off to this (maxQueuePollingInterval, default 30 s). */
  maxQueuePollingSeconds: number;
  /** The queue trigger's idle polling backs off to this (extensions.queues.maxPollingInterval, default 1 min). */
  queueMaxPollingSeconds: number;
}

/** "hh:mm:ss" (or "d.hh:mm:ss") as host.json writes a TimeSpan, in seconds. */
export function timeSpanSeconds(value: string): number {
  const match = /^(?:(\d+)\.)?(\d+):(\d+):(\d+(?:\.\d+)?)$/.exec(value.trim());
  if (!match) throw new Error(`host.json: ${JSON.stringify(value)} is not a TimeSpan (hh:mm:ss)`);
  const [, days = '0', hours = '0', minutes = '0', seconds = '0'] = match;
  return ((Number(days) * 24 + Number(hours)) * 60 + Number(minutes)) * 60 + Number(seconds);
}

interface HostJson {
  extensions?: {
    queues?: { maxPollingInterval?: string };
    durableTask?: {
      maxQueuePollingInterval?: string;
      storageProvider?: { partitionCount?: number; maxQueuePollingInterval?: string };
    };
  };
}

/** The polling settings from host.json (the deployed one by default), with the hosts' defaults. */
export function hostPolling(
  hostJson: string = readFileSync(join(import.meta.dirname, '..', '..', 'host.json'), 'utf8'),
): HostPolling {
  const host = JSON.parse(hostJson) as HostJson;
  const durable = host.extensions?.durableTask;
  const maxQueuePolling =
    durable?.storageProvider?.maxQueuePollingInterval ?? durable?.maxQueuePollingInterval;
  return {
    partitionCount: durable?.storageProvider?.partitionCount ?? 4,
    maxQueuePollingSeconds: timeSpanSeconds(maxQueuePolling ?? '00:00:30'),
    queueMaxPollingSeconds: timeSpanSeconds(host.extensions?.queues?.maxPollingInterval ?? '00:01:00'),
  };
}

export interface Workload {
  /** Executions of every function a month (the host's rows follow them). */
  executions: number;
  /** Messages through the events queue a month. */
  queueMessages: number;
  /** Durable executions (orchestrator episodes and activities) a month. */
  durableExecutions: number;
}

export interface CostLine {
  item: string;
  quantity: string;
  usd: number;
}

const millions = (n: number): string => `${(n / 1e6).toFixed(2)} M`;

/**
 * Storage transactions a month. Idle, all the time: each Durable worker polls its control queues and the
 * work-item queue at the backed-off interval, renews a blob lease per partition every 10 s and checks the
 * leases (a list and a read per partition) every 10 s (DurableTask.AzureStorage's default lease
 * intervals); the queue trigger polls the events queue at its backed-off interval. Per message: get and
 * delete by the trigger, the put by the bridge. Per durable execution: about 4 queue operations (the
 * message's put, get and delete, and the next one's put) and 3 table operations (history read, history
 * write, instance row). One Durable worker and one queue listener, the default always-ready instances.
 */
export function storageTransactions(polling: HostPolling, workload: Workload): CostLine[] {
  const perMonth = (perMinute: number) => perMinute * MINUTES_PER_MONTH;
  const p = TELEMETRY_PRICES;
  const durablePolls = perMonth(((polling.partitionCount + 1) * 60) / polling.maxQueuePollingSeconds);
  const leaseRenewals = perMonth(polling.partitionCount * 6);
  const leaseLists = perMonth(6);
  const leaseReads = perMonth(polling.partitionCount * 6);
  const triggerPolls = perMonth(60 / polling.queueMaxPollingSeconds);
  const messageOps = workload.queueMessages * 3;
  const durableQueueOps = workload.durableExecutions * 4;
  const durableTableOps = workload.durableExecutions * 3;
  return [
    {
      item: `Durable idle polling: ${polling.partitionCount} control + 1 work-item queue every ${polling.maxQueuePollingSeconds} s`,
      quantity: millions(durablePolls),
      usd: durablePolls * p.queuePerOperation,
    },
    {
      item: `Durable partition leases: ${polling.partitionCount} renewals and reads, 1 list, every 10 s`,
      quantity: millions(leaseRenewals + leaseReads + leaseLists),
      usd: (leaseRenewals + leaseReads) * p.blobOtherPerOperation + leaseLists * p.blobListPerOperation,
    },
    {
      item: `queue trigger idle polling every ${polling.queueMaxPollingSeconds} s`,
      quantity: millions(triggerPolls),
      usd: triggerPolls * p.queuePerOperation,
    },
    {
      item: 'events queue messages (put, get, delete)',
      quantity: millions(messageOps),
      usd: messageOps * p.queuePerOperation,
    },
    {
      item: 'durable executions (4 queue, 3 table operations each)',
      quantity: `${millions(durableQueueOps)} + ${millions(durableTableOps)}`,
      usd: durableQueueOps * p.queuePerOperation + durableTableOps * p.tablePerTransaction,
    },
  ];
}

/** Application Insights ingestion a month: the measured metrics and metric log records, the host's rows. */
export function telemetryIngestion(volume: TelemetryVolume, workload: Workload): CostLine[] {
  const gb = (bytesPerMinute: number) => (bytesPerMinute * MINUTES_PER_MONTH) / 1e9;
  const metricsGb = gb(volume.metricBytesPerMinute);
  const logsGb = gb(volume.logBytesPerMinute);
  const hostGb = (workload.executions * HOST_ROWS_PER_EXECUTION * HOST_BYTES_PER_ROW) / 1e9;
  const price = TELEMETRY_PRICES.analyticsLogsPerGb;
  return [
    {
      item: `metrics (customMetrics, measured: ${volume.metricRowsPerMinute.toFixed(1)} rows/min)`,
      quantity: `${metricsGb.toFixed(3)} GB`,
      usd: metricsGb * price,
    },
    {
      item: `metric log records (measured: ${volume.logRecordsPerMinute.toFixed(2)}/min)`,
      quantity: `${logsGb.toFixed(4)} GB`,
      usd: logsGb * price,
    },
    {
      item: `host rows (estimate: ${HOST_ROWS_PER_EXECUTION} × ${HOST_BYTES_PER_ROW} B per execution)`,
      quantity: `${hostGb.toFixed(3)} GB`,
      usd: hostGb * price,
    },
  ];
}

/** The same metrics in managed Prometheus instead of customMetrics, for comparison. */
export function prometheusIngestion(volume: TelemetryVolume): CostLine {
  const samples = volume.prometheusSamplesPerMinute * MINUTES_PER_MONTH;
  return {
    item: `metrics in managed Prometheus instead (measured: ${volume.prometheusSamplesPerMinute.toFixed(1)} samples/min)`,
    quantity: millions(samples),
    usd: samples * TELEMETRY_PRICES.prometheusPerSample,
  };
}

export const totalUsd = (lines: readonly CostLine[]): number =>
  lines.reduce((sum, line) => sum + line.usd, 0);
