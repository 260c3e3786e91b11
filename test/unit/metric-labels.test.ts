// Every metric's label set is upstream Karpenter's as docs/metrics.md's table states it, and the catalog
// the app records with (whose label sets type every increment and observe, so a call site with another
// set does not compile) is that table: a label added, dropped or renamed on either side fails here.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { metricCatalog } from '../../shared/observability/metric-catalog.js';

const doc = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'metrics.md'), 'utf8');

/** The "What is emitted" table: metric name → its labels, in the order written. */
function documentedLabels(): Map<string, string[]> {
  const start = doc.indexOf('## What is emitted');
  const section = doc.slice(start, doc.indexOf('\n## ', start + 1));
  const rows = new Map<string, string[]>();
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const name = /^`((?:karpenter|operator)_[a-z0-9_]+)`$/.exec(cells[1] ?? '')?.[1];
    if (!name) continue;
    rows.set(
      name,
      [...(cells[3] ?? '').matchAll(/`([a-z_]+)`/g)].map((m) => m[1] ?? ''),
    );
  }
  return rows;
}

describe('metric labels', () => {
  const documented = documentedLabels();

  it('documents every catalog metric with exactly its labels', () => {
    expect([...documented.keys()].sort()).toEqual(Object.keys(metricCatalog).sort());
    for (const [name, definition] of Object.entries(metricCatalog)) {
      expect(documented.get(name), name).toEqual([...definition.labels]);
    }
  });

  it("holds upstream's label sets for the NodeClaim lifecycle and cloud-provider counters", () => {
    expect(documented.get('karpenter_nodeclaims_created_total')).toEqual([
      'reason',
      'nodepool',
      'min_values_relaxed',
    ]);
    expect(documented.get('karpenter_nodeclaims_terminated_total')).toEqual([
      'nodepool',
      'capacity_type',
      'zone',
    ]);
    expect(documented.get('karpenter_nodeclaims_disrupted_total')).toEqual([
      'reason',
      'nodepool',
      'capacity_type',
      'consolidation_policy',
      'termination_mode',
    ]);
    // Upstream's four, and nodepool on purpose (metrics.md says why).
    expect(documented.get('karpenter_cloudprovider_errors_total')).toEqual([
      'controller',
      'method',
      'provider',
      'error',
      'nodepool',
    ]);
  });
});
