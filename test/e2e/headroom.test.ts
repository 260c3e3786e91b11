// headroom end to end: a CapacityBuffer's virtual pods join the provisioning solve and keep a warm node
// that consolidation (after 0 s) leaves alone; a burst that fits the buffer runs on it without waiting for
// a VM, faster than the same burst without a buffer, and the next solve refills the buffer on a new node.
// The stack runs as the shipped identities, so the buffer, PodTemplate and status verbs are the RBAC's.
import { expect, test } from 'vitest';
import { headroom } from '../../local/scenarios/headroom.js';
import { expectInvariantsHold, playEndToEnd } from './e2e-stack.js';

test(
  'a CapacityBuffer keeps a warm node; a burst runs on it without waiting for a VM, and it is refilled',
  { timeout: 300_000 },
  async () => {
    const report = await playEndToEnd(headroom);
    expectInvariantsHold(report);
    expect(Number(report.outcome.figures.bufferedBurstMs)).toBeLessThan(
      Number(report.outcome.figures.coldBurstMs),
    );
  },
);
