// Every metric name the app can emit is upstream Karpenter's (docs/reference/karpenter-metrics.txt, with
// where it came from) or one of the Azure-specific ones docs/metrics.md lists, so a Karpenter dashboard or
// alert built on upstream names finds the app's series. The names are scraped twice: from what an
// OpenTelemetry reader exports after every catalog metric is recorded once, and from every metric-like
// string literal in the app's sources (a name typed outside the catalog would show up there).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../shared/observability/logger.js';
import {
  metricCatalog,
  type GaugeName,
  type MetricLabelsOf,
  type MetricName,
} from '../../shared/observability/metric-catalog.js';
import { createMetrics } from '../../shared/observability/metrics.js';

const root = join(import.meta.dirname, '..', '..');
const read = (path: string): string => readFileSync(join(root, path), 'utf8');

const upstream = new Set(
  read('docs/reference/karpenter-metrics.txt')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#')),
);

/** The backticked names in the "Azure-specific metrics" section of docs/metrics.md. */
const azureSpecific = (() => {
  const doc = read('docs/metrics.md');
  const start = doc.indexOf('## Azure-specific metrics');
  const end = doc.indexOf('\n## ', start + 1);
  const section = doc.slice(start, end === -1 ? undefined : end);
  return new Set([...section.matchAll(/`((?:karpenter|operator)_[a-z0-9_]+)`/g)].map((m) => m[1] as string));
})();

function sourceFiles(directory: string): string[] {
  return readdirSync(join(root, directory)).flatMap((entry) => {
    const path = join(directory, entry);
    if (statSync(join(root, path)).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

async function exportedNames(): Promise<string[]> {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const provider = new MeterProvider({ readers: [reader] });
  const metrics = createMetrics(silentLogger, () => provider.getMeter('test'));
  for (const [name, definition] of Object.entries(metricCatalog) as [
    MetricName,
    { kind: string; labels: readonly string[] },
  ][]) {
    const labels = Object.fromEntries(definition.labels.map((l) => [l, ''])) as MetricLabelsOf<typeof name>;
    if (definition.kind === 'counter') metrics.increment(name, labels);
    else if (definition.kind === 'histogram') metrics.observe(name, 1, labels);
    else metrics.setGauge(name as GaugeName, [{ labels: {}, value: 1 }]);
  }
  await reader.forceFlush();
  const names = exporter
    .getMetrics()
    .flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics.map((m) => m.descriptor.name)));
  await provider.shutdown();
  return [...new Set(names)];
}

describe('metric names', () => {
  it('has a reference list and an Azure-specific list to check against', () => {
    expect(upstream.size).toBeGreaterThan(100);
    expect(upstream).toContain('operator_nodeclaim_status_condition_count');
    expect(azureSpecific.size).toBeGreaterThan(0);
    for (const name of azureSpecific) expect(upstream.has(name), `${name} is upstream's`).toBe(false);
  });

  it('exports only upstream names or documented Azure-specific ones', async () => {
    const names = await exportedNames();
    expect(names.sort()).toEqual(Object.keys(metricCatalog).sort());
    expect(names.filter((n) => !upstream.has(n) && !azureSpecific.has(n))).toEqual([]);
  });

  it('marks as Azure-specific exactly the catalog entries upstream does not have', () => {
    for (const [name, definition] of Object.entries(metricCatalog)) {
      expect(definition.origin, name).toBe(upstream.has(name) ? 'upstream' : 'azure');
    }
  });

  it('names no metric in the sources outside those lists', () => {
    const literals = ['shared', 'functions', 'bridge', 'local'].flatMap(sourceFiles).flatMap((file) =>
      [...read(file).matchAll(/['"`]((?:karpenter|operator)_[a-z0-9]+_[a-z0-9_]+)['"`]/g)].map((m) => ({
        file,
        name: m[1] as string,
      })),
    );
    // Label names such as karpenter_sh_nodepool look like metric names; the catalog declares them.
    const labelNames = new Set(Object.values(metricCatalog).flatMap((d): readonly string[] => d.labels));
    expect(literals.length).toBeGreaterThan(10);
    expect(
      literals.filter(({ name }) => !upstream.has(name) && !azureSpecific.has(name) && !labelNames.has(name)),
    ).toEqual([]);
  });
});
