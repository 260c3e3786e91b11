// consolidation end to end: the scale-up Deployments run on nodes provisioning launched, are scaled down
// to a third behind PodDisruptionBudgets, and the NodePool consolidates: empty nodes first, underutilized
// ones deleted or replaced by cheaper ones, never more than the budget at once, no PDB broken.
import { expect, test } from 'vitest';
import { consolidation } from '../../local/scenarios/consolidation.js';
import { expectInvariantsHold, playEndToEnd } from './e2e-stack.js';

test(
  'after a scale-down to a third, consolidation empties and packs the nodes within budget and PDBs',
  { timeout: 600_000 },
  async () => {
    const report = await playEndToEnd(consolidation);
    expectInvariantsHold(report);
    expect(report.outcome.figures.nodesAfter).toBeLessThan(Number(report.outcome.figures.nodesBefore));
  },
);
