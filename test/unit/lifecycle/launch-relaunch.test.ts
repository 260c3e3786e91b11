// The hand-off from a VM whose creation failed transiently to a relaunch, against in-memory fakes: the
// NodeClaim is marked LaunchRetrying, the failed VM deleted and waited for, the retry counted once, and
// only then the providerID cleared, each call converging from wherever the last one stopped. The whole
// monitor, from the emulator's failed operation to the relaunched VM, runs in
// test/integration/launch-monitor.test.ts.
import { beforeEach, describe, expect, test } from 'vitest';
import { LAUNCH_RETRIES_ANNOTATION, LAUNCH_RETRYING_REASON } from '../../../shared/decisions/launch-retry.js';
import type { LaunchFailure } from '../../../shared/cloudprovider/azure/decisions/launch-errors.js';
import { vmNameFor } from '../../../shared/cloudprovider/azure/decisions/vm-spec.js';
import type { LaunchMonitorInput } from '../../../shared/lifecycle/launch/launch-monitor.js';
import { handOffToRelaunch } from '../../../shared/lifecycle/launch/launch-relaunch.js';
import type { NodeClaim } from '../../../shared/models/index.js';
import { ConditionTypes } from '../../../shared/models/karpenter.js';
import { fakeLifecycle, type FakeLifecycle } from '../../support/fake-lifecycle.js';
import { d2sV5Offering } from '../../support/offering.js';

const failure: LaunchFailure = {
  reason: 'LaunchFailed',
  message: 'InternalExecutionError',
  cloudCode: 'InternalExecutionError',
  retryable: true,
};

const monitor: LaunchMonitorInput = {
  nodeClaim: { name: 'general-a', uid: 'uid-general-a', nodePool: 'general' },
  vmName: vmNameFor('general-a'),
  offering: d2sV5Offering(),
  startedAt: '2026-11-30T11:58:00Z',
  pollIntervalSeconds: 5,
  maxPollIntervalSeconds: 30,
  deadlineMinutes: 15,
};

function launched(): NodeClaim {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: { name: 'general-a', uid: 'uid-general-a' },
    spec: {
      nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
      requirements: [],
    },
    status: {
      providerID: 'azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/x',
      conditions: [
        {
          type: ConditionTypes.launched,
          status: 'Unknown',
          reason: 'VMProvisioning',
          message: '',
          lastTransitionTime: '2026-11-30T11:58:00Z',
        },
      ],
    },
  };
}

describe('handOffToRelaunch', () => {
  let fake: FakeLifecycle;
  beforeEach(() => {
    fake = fakeLifecycle();
  });

  test('marks the NodeClaim, deletes the failed VM and waits for it, then counts and releases once', async () => {
    fake.nodeClaims.seed(launched());
    fake.cloud.seedInstance('general-a', { state: 'Failed' });

    expect(await handOffToRelaunch(fake.deps, monitor, failure, 'retrying')).toBe('VmDeleting');
    expect(await handOffToRelaunch(fake.deps, monitor, failure, 'retrying')).toBe('VmDeleting');
    expect(fake.cloud.deleted).toEqual([vmNameFor('general-a')]);
    expect(fake.nodeClaims.peek('general-a')?.status?.conditions?.[0]).toMatchObject({
      status: 'Unknown',
      reason: LAUNCH_RETRYING_REASON,
    });

    fake.cloud.instances.clear();
    expect(await handOffToRelaunch(fake.deps, monitor, failure, 'retrying')).toBe('HandedOff');
    const released = fake.nodeClaims.peek('general-a');
    expect(released?.metadata.annotations?.[LAUNCH_RETRIES_ANNOTATION]).toBe('1');
    expect(released?.status?.providerID).toBeUndefined();
    // One event and one error count for the hand-off, however many calls it took.
    expect(fake.events.map((e) => e.reason)).toEqual([LAUNCH_RETRYING_REASON]);

    // A call repeated after the release (a retried activity) changes nothing.
    const writes = fake.nodeClaims.writes.length;
    expect(await handOffToRelaunch(fake.deps, monitor, failure, 'retrying')).toBe('HandedOff');
    expect(fake.nodeClaims.writes).toHaveLength(writes);
  });

  test('a NodeClaim that is gone hands off nothing; its VM is deleted rather than left', async () => {
    fake.cloud.seedInstance('general-a', { state: 'Failed' });

    expect(await handOffToRelaunch(fake.deps, monitor, failure, 'retrying')).toBe('HandedOff');
    expect(fake.cloud.deleted).toEqual([vmNameFor('general-a')]);
  });
});
