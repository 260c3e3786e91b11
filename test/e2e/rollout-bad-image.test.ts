// Bad node images rolled back end to end, as `npm start` plays them: the rollout scenario (10 nodes, budget
// "3", one pod per node) first meets an image whose pods crash-loop, which its canary must catch and roll
// back with one VM ever running it, then a healthy image it rolls out in a canary and waves; and a smaller
// pool meets an image whose kubelet never goes Ready, caught by ReplacementFailed with no old node lost.
// The real control plane, Azurite, the ARM emulator and the kubelet simulator play it, with the rollout
// timings of the stack at the tests' speed; the invariants are the scenario's own.
import { expect, test } from 'vitest';
import { rollout, rolloutNeverReady } from '../../local/scenarios/rollout.js';
import { expectInvariantsHold, playEndToEnd } from './e2e-stack.js';

test(
  'a crash-looping image is rolled back after its canary; a healthy one rolls out in a canary and waves of 3',
  { timeout: 600_000 },
  async () => {
    const report = await playEndToEnd(rollout);
    expectInvariantsHold(report);
    const { figures } = report.outcome;
    expect(figures.badVersionVms).toBeLessThanOrEqual(1);
    expect(figures.rolledBackMs).toBeGreaterThan(0);
    expect(['PodRestarts', 'PodNotReady']).toEqual(
      expect.arrayContaining(String(figures.badGate).split(',')),
    );
    expect(figures.goodWaves).toBe(4);
  },
);

test(
  'an image whose kubelet never goes Ready fails ReplacementFailed and is rolled back; no old node is lost',
  { timeout: 420_000 },
  async () => {
    const report = await playEndToEnd(rolloutNeverReady);
    expectInvariantsHold(report);
    const { figures } = report.outcome;
    expect(figures.badVersionVms).toBeLessThanOrEqual(1);
    expect(figures.badGate).toBe('ReplacementFailed');
    expect(figures.badOldNodesDisrupted).toBeLessThanOrEqual(1);
  },
);
