// The lifecycle metrics reach OpenTelemetry as real instruments with Karpenter's names and labels
// (counters and histograms read back through the SDK's in-memory exporter), and the Application Insights
// settings select the exporter's authentication.
import {
  AggregationTemporality,
  DataPointType,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { afterEach, describe, expect, it } from 'vitest';
import { azureMonitorCredentials } from '../../shared/observability/metric-export.js';
import { createMetrics } from '../../shared/observability/metrics.js';
import { createLogger } from '../../shared/observability/logger.js';

const lines: string[] = [];
const log = createLogger({ component: 'test', sink: (_level, line) => lines.push(line) });

describe('metrics', () => {
  let provider: MeterProvider | undefined;
  /** Metrics recorded through a real MeterProvider into an in-memory exporter, flushed on demand. */
  const inMemoryMetrics = (temporality: AggregationTemporality) => {
    const exporter = new InMemoryMetricExporter(temporality);
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
    provider = new MeterProvider({ readers: [reader] });
    const meter = provider.getMeter('test');
    return { exporter, reader, metrics: createMetrics(log, () => meter) };
  };
  afterEach(async () => {
    await provider?.shutdown();
    lines.length = 0;
  });

  it('records counters and histograms as OpenTelemetry instruments with Karpenter labels', async () => {
    const { exporter, reader, metrics } = inMemoryMetrics(AggregationTemporality.CUMULATIVE);

    const created = { reason: 'provisioning', nodepool: 'general', min_values_relaxed: 'false' };
    metrics.increment('karpenter_nodeclaims_created_total', created);
    metrics.increment('karpenter_nodeclaims_created_total', created);
    metrics.increment('karpenter_cloudprovider_errors_total', {
      controller: 'nodeclaim.lifecycle',
      nodepool: 'general',
      method: 'Create',
      provider: 'azure',
      error: 'ZonalAllocationFailure',
    });
    metrics.observe('karpenter_nodeclaims_instance_creation_duration_seconds', 42, { nodepool: 'general' });
    metrics.observe('karpenter_nodeclaims_instance_creation_duration_seconds', 8, { nodepool: 'general' });
    await reader.forceFlush();

    const exported = exporter.getMetrics().flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics));
    const byName = new Map(exported.map((m) => [m.descriptor.name, m]));
    const launched = byName.get('karpenter_nodeclaims_created_total');
    expect(launched?.dataPointType).toBe(DataPointType.SUM);
    expect(launched?.dataPoints.map((p) => [p.attributes, p.value])).toEqual([[created, 2]]);
    expect(byName.get('karpenter_cloudprovider_errors_total')?.dataPoints[0]?.attributes).toEqual({
      controller: 'nodeclaim.lifecycle',
      nodepool: 'general',
      method: 'Create',
      provider: 'azure',
      error: 'ZonalAllocationFailure',
    });
    const creation = byName.get('karpenter_nodeclaims_instance_creation_duration_seconds');
    expect(creation?.dataPointType).toBe(DataPointType.HISTOGRAM);
    expect(creation?.descriptor.unit).toBe('s');
    expect(creation?.dataPoints[0]?.value).toMatchObject({ count: 2, sum: 50, min: 8, max: 42 });

    // The same observations stay readable in process; only the histogram the catalog marks
    // logObservations (the workbook's percentiles) is also a log record, never a counter.
    expect(metrics.count('karpenter_nodeclaims_created_total', { nodepool: 'general' })).toBe(2);
    expect(
      lines.filter((l) => l.includes('"metric":"karpenter_nodeclaims_instance_creation_duration_seconds"')),
    ).toHaveLength(2);
    expect(lines).toHaveLength(2);
  });

  // With delta temporality, which the Azure Monitor exporter selects for gauges; a cumulative reader of
  // the OpenTelemetry JS SDK keeps reporting every attribute set it has seen.
  it('reports gauges as the last set of series, dropping series no longer set', async () => {
    const { exporter, reader, metrics } = inMemoryMetrics(AggregationTemporality.DELTA);
    const series = (nodepool: string, value: number) => ({
      labels: { nodepool, resource_type: 'cpu' },
      value,
    });

    metrics.setGauge('karpenter_nodepools_usage', [series('a', 4), series('b', 8)]);
    await reader.forceFlush();
    metrics.setGauge('karpenter_nodepools_usage', [series('b', 16)]);
    await reader.forceFlush();

    const last =
      exporter
        .getMetrics()
        .at(-1)
        ?.scopeMetrics.flatMap((s) => s.metrics) ?? [];
    const usage = last.find((m) => m.descriptor.name === 'karpenter_nodepools_usage');
    expect(usage?.dataPointType).toBe(DataPointType.GAUGE);
    expect(usage?.dataPoints.map((p) => [p.attributes, p.value])).toEqual([
      [{ nodepool: 'b', resource_type: 'cpu' }, 16],
    ]);
    expect(metrics.total('karpenter_nodepools_usage')).toBe(16);
    expect(metrics.count('karpenter_nodepools_usage', { nodepool: 'a' })).toBe(0);
  });
});

describe('Application Insights settings', () => {
  it('exports only with a connection string, with the app identity when Entra authentication is required', () => {
    expect(azureMonitorCredentials({})).toBeUndefined();
    expect(
      azureMonitorCredentials({ APPLICATIONINSIGHTS_CONNECTION_STRING: 'InstrumentationKey=k' }),
    ).toEqual({
      connectionString: 'InstrumentationKey=k',
    });
    expect(
      azureMonitorCredentials({
        APPLICATIONINSIGHTS_CONNECTION_STRING: 'InstrumentationKey=k',
        APPLICATIONINSIGHTS_AUTHENTICATION_STRING: 'ClientId=1234;Authorization=AAD',
      }),
    ).toEqual({ connectionString: 'InstrumentationKey=k', clientId: '1234' });
  });
});
