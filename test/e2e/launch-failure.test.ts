// launch-failure end to end: the ARM emulator fails one VM creation in its LRO (zonal allocation) and
// refuses another PUT (family quota). Each NodeClaim must carry its reason as soon as Azure's answer is
// seen (the first poll after the failure, or the PUT itself), and each replacement must avoid the failed
// offering, which the emulator keeps failing.
import { expect, test } from 'vitest';
import { launchFailure } from '../../local/scenarios/launch-failure.js';
import { expectInvariantsHold, playEndToEnd } from './e2e-stack.js';

test(
  'Launched=False with the reason at the first poll; the replacement avoids the offering',
  { timeout: 180_000 },
  async () => {
    const report = await playEndToEnd(launchFailure);
    expectInvariantsHold(report);
    const reasons = report.timelines.map((t) => t.failureReason).filter(Boolean);
    expect(reasons.sort()).toEqual(['SubscriptionQuotaReached', 'ZonalAllocationFailure']);
  },
);
