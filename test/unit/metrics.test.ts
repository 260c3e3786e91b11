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
import { metricCatalog } from '../../shared/observability/metric-catalog.js';
import { azureMonitorCredentials } from '../../shared/observability/metric-export.js';
import { createMetrics } from '../../shared/observability/metrics.js';
import { createLogger } from '../../shared/observability/logger.js';

const lines: string[] = [];
const log = createLogger({ component: 'test', sink: (_level, line) => lines.push(line) });

describe('metrics', () => {
  let provider: MeterProvider | undefined;
  afterEach(async () => {
    await provider?.shutdown();
    lines.length = 0;
  });

  it('records counters and histograms as OpenTelemetry instruments with Karpenter labels', async () => {
    const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
    provider = new MeterProvider({ readers: [reader] });
    const meter = provider.getMeter('test');
    const metrics = createMetrics(log, () => meter);

    metrics.increment('karpenter_nodeclaims_launched_total', { nodepool: 'general' });
    metrics.increment('karpenter_nodeclaims_launched_total', { nodepool: 'general' });
    metrics.increment('karpenter_cloudprovider_errors_total', {
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
    const launched = byName.get('karpenter_nodeclaims_launched_total');
    expect(launched?.dataPointType).toBe(DataPointType.SUM);
    expect(launched?.dataPoints.map((p) => [p.attributes, p.value])).toEqual([[{ nodepool: 'general' }, 2]]);
    expect(byName.get('karpenter_cloudprovider_errors_total')?.dataPoints[0]?.attributes).toEqual({
      nodepool: 'general',
      method: 'Create',
      provider: 'azure',
      error: 'ZonalAllocationFailure',
    });
    const creation = byName.get('karpenter_nodeclaims_instance_creation_duration_seconds');
    expect(creation?.dataPointType).toBe(DataPointType.HISTOGRAM);
    expect(creation?.descriptor.unit).toBe('s');
    expect(creation?.dataPoints[0]?.value).toMatchObject({ count: 2, sum: 50, min: 8, max: 42 });

    // The same observations stay readable in process and as log records (the workbook's percentiles).
    expect(metrics.count('karpenter_nodeclaims_launched_total', { nodepool: 'general' })).toBe(2);
    expect(
      lines.filter((l) => l.includes('"metric":"karpenter_nodeclaims_instance_creation_duration_seconds"')),
    ).toHaveLength(2);
  });

  it('names every metric after Karpenter (karpenter_ prefix, _total counters, _seconds histograms but for the dimensionless score)', () => {
    for (const [name, definition] of Object.entries(metricCatalog)) {
      expect(name).toMatch(/^karpenter_[a-z_]+$/);
      if (definition.kind === 'counter') expect(name).toMatch(/_total$/);
      else expect(name).toMatch(definition.unit === '1' ? /_score$/ : /_seconds$/);
    }
    expect(Object.keys(metricCatalog)).toEqual(
      expect.arrayContaining([
        'karpenter_nodeclaims_created_total',
        'karpenter_nodeclaims_terminated_total',
        'karpenter_nodes_created_total',
        'karpenter_nodeclaims_disrupted_total',
        'karpenter_voluntary_disruption_decisions_total',
      ]),
    );
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
