// The telemetry budget holds: for synthetic clusters of N nodes in P NodePools, the series the app can
// export (the gauges as the sweep computes them, every counter and histogram at the most label sets its
// label domains allow) stay within the budget docs/metrics.md states, and without METRICS_PER_NODE they
// do not grow with the number of nodes at all. A new metric, a new label or a wider label domain that
// breaks the budget fails here; so does a budget in the doc that is not the one enforced.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSettings } from '../../shared/config/settings.js';
import { clusterGauges } from '../../shared/decisions/cluster-gauges.js';
import { metricCatalog, type MetricName } from '../../shared/observability/metric-catalog.js';
import {
  exportedSeries,
  labelDomains,
  publishedGauges,
  SERIES_BUDGET,
} from '../../shared/observability/series-budget.js';
import { localAppSettings } from '../../local/stack/app-settings.js';
import { syntheticCluster } from '../bench/synthetic-cluster.js';

const shapes = [
  [0, 1],
  [100, 1],
  [100, 3],
  [1000, 3],
  [1000, 10],
  [5000, 10],
] as const;

const budget = (nodes: number, nodePools: number, perNode: boolean): number =>
  SERIES_BUDGET.fixed + SERIES_BUDGET.perNodePool * nodePools + (perNode ? SERIES_BUDGET.perNode * nodes : 0);

describe('series budget', () => {
  it('declares a domain for exactly the labels of every metric', () => {
    for (const name of Object.keys(metricCatalog) as MetricName[]) {
      expect(Object.keys(labelDomains[name]).sort(), name).toEqual([...metricCatalog[name].labels].sort());
    }
  });

  it.each(shapes)('%i nodes in %i NodePools: within the budget, per node only when asked', (nodes, pools) => {
    const cluster = syntheticCluster(nodes, pools);
    const shape = { nodePools: pools, zones: 3 };
    const off = exportedSeries(cluster, shape, { perNode: false });
    const on = exportedSeries(cluster, shape, { perNode: true });
    expect(off.samples).toBeLessThanOrEqual(budget(nodes, pools, false));
    expect(on.samples).toBeLessThanOrEqual(budget(nodes, pools, true));
    // Without per-node series the count is the same for an empty cluster of the same NodePools.
    expect(off.samples).toBe(exportedSeries(syntheticCluster(0, pools), shape, { perNode: false }).samples);
    expect(off.byMetric.karpenter_nodes_allocatable).toBe(0);
    expect(off.byMetric.operator_nodeclaim_status_condition_count).toBe(0);
    if (nodes > 0) expect(on.samples).toBeGreaterThan(off.samples + nodes);
  });

  it('publishes the per-node gauges only when enabled, and METRICS_PER_NODE is off unless set', () => {
    const gauges = clusterGauges(syntheticCluster(10, 2));
    expect(publishedGauges(gauges, true)).toEqual(gauges);
    const off = publishedGauges(gauges, false);
    expect(off.karpenter_nodes_allocatable).toEqual([]);
    expect(off.operator_nodeclaim_status_condition_count).toEqual([]);
    expect(off.karpenter_nodepools_usage).toEqual(gauges.karpenter_nodepools_usage);
    expect(off.karpenter_nodepools_usage.length).toBeGreaterThan(0);

    const env = localAppSettings({
      kubeconfigPath: '/tmp/admin.kubeconfig',
      armEndpoint: 'https://127.0.0.1:8443',
      armCaCertPem: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
      bootstrapCaCertPem: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
      storageConnectionString: 'UseDevelopmentStorage=true',
      queueName: 'nodeclaim-events',
      unavailableOfferingsTable: 'unavailableofferings',
    });
    const { METRICS_PER_NODE: _ignored, ...withoutSetting } = env;
    expect(loadSettings(withoutSetting).metricsPerNode).toBe(false);
    expect(loadSettings({ ...withoutSetting, METRICS_PER_NODE: 'true' }).metricsPerNode).toBe(true);
    expect(() => loadSettings({ ...withoutSetting, METRICS_PER_NODE: 'yes' })).toThrow(/METRICS_PER_NODE/);
  });

  it('is the budget docs/metrics.md states', () => {
    const doc = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'metrics.md'), 'utf8');
    const stated = (row: string): number => {
      const match = new RegExp(`^\\| ${row} +\\| +([0-9,]+) +\\|`, 'm').exec(doc);
      return Number((match?.[1] ?? '').replace(/,/g, ''));
    };
    expect(stated('fixed')).toBe(SERIES_BUDGET.fixed);
    expect(stated('per NodePool')).toBe(SERIES_BUDGET.perNodePool);
    expect(stated('per node \\(`METRICS_PER_NODE=true` only\\)')).toBe(SERIES_BUDGET.perNode);
  });
});
