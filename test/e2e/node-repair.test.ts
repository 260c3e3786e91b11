// node-repair end to end, as `npm start` plays it: a kubelet stopped (Ready=Unknown from the real
// kube-controller-manager, rebooted after the toleration, back in service), a NodeHealthy=False that
// survives a reboot (rebooted once, then replaced), a spot VM preempted by the ARM emulator (replaced at
// once, drained); then 3 of 8 nodes unhealthy at once, held by the 20% breaker with NodeRepairBlocked,
// and repaired one at a time once one clears. The repair workflow runs in the app's in-process host as
// the shipped identities; the ARM emulator's request log counts the restarts.
import { expect, test } from 'vitest';
import { nodeRepair } from '../../local/scenarios/node-repair.js';
import { expectInvariantsHold, playEndToEnd } from './e2e-stack.js';

test(
  'NotReady rebooted, NodeHealthy=False rebooted then replaced, spot preempted; the breaker holds 3 of 8',
  { timeout: 480_000 },
  async () => {
    const report = await playEndToEnd(nodeRepair);
    expectInvariantsHold(report);
    expect(report.outcome.figures.maxInFlight).toBe(1);
  },
);
