// registration-race end to end: NodeClaims launched through the bridge and the host, Nodes registered by
// the kubelet simulator with the unregistered taint, two DaemonSets tolerating not-ready scheduled by the
// real kube-scheduler and DaemonSet controller. No pod may bind before registration synced its Node.
import { expect, test } from 'vitest';
import { registrationRace } from '../../local/scenarios/registration-race.js';
import { expectInvariantsHold, playEndToEnd } from './e2e-stack.js';

test('no pod binds to a Node before its labels and taints are synced', { timeout: 180_000 }, async () => {
  const report = await playEndToEnd(registrationRace);
  expectInvariantsHold(report);
  // Every bind is in the evidence: 2 DaemonSets × 4 Nodes.
  expect(report.outcome.figures.binds).toBe(8);
  expect(report.timelines.map((t) => t.segments.map((s) => s.phase))).toContainEqual(
    expect.arrayContaining(['Launching', 'Registered', 'Initialized']),
  );
});
