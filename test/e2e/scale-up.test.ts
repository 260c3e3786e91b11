// scale-up end to end: pending pods marked Unschedulable by the real kube-scheduler reach the provisioning
// batcher through the bridge; NodeClaims are created, launched and registered; the scheduler binds every
// pod and the kubelet simulator runs it.
import { expect, test } from 'vitest';
import { scaleUp } from '../../local/scenarios/scale-up.js';
import { expectInvariantsHold, playEndToEnd } from './e2e-stack.js';

test(
  '60 pending pods become Running on NodeClaims that provisioning created',
  { timeout: 300_000 },
  async () => {
    const report = await playEndToEnd(scaleUp);
    expectInvariantsHold(report);
    expect(report.outcome.figures.nodeClaims).toBeGreaterThan(0);
  },
);
