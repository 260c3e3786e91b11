// The two places the lifecycle removes VMs, against in-memory fakes: termination's VM step (stop the
// launch monitor, delete the NodeClaim's own VM once, never someone else's) and the collection of orphan
// VMs (tagged for this cluster, their NodeClaim gone, past the grace period). ARM's side of a delete runs
// against the emulator in test/integration/.
import { beforeEach, describe, expect, test } from 'vitest';
import { vmNameFor } from '../../../shared/cloudprovider/azure/decisions/vm-spec.js';
import { collectOrphanVms } from '../../../shared/lifecycle/garbage-collection/garbage-collection.js';
import { launchMonitorInstanceId } from '../../../shared/lifecycle/launch/launch-monitor.js';
import {
  deleteNodeClaimVm,
  type TerminationInput,
} from '../../../shared/lifecycle/termination/termination.js';
import type { NodeClaim } from '../../../shared/models/index.js';
import { LaunchMonitorNames } from '../../../shared/runtime/function-names.js';
import {
  FAKE_NOW,
  fakeLifecycle,
  FakeOrchestrations,
  type FakeLifecycle,
} from '../../support/fake-lifecycle.js';

const input: TerminationInput = {
  nodeClaim: { name: 'general-a', uid: 'uid-general-a' },
  vmName: vmNameFor('general-a'),
  pollIntervalSeconds: 5,
  drainPollSeconds: 5,
};

describe('deleteNodeClaimVm', () => {
  let fake: FakeLifecycle;
  let orchestrations: FakeOrchestrations;
  beforeEach(() => {
    fake = fakeLifecycle();
    orchestrations = new FakeOrchestrations();
  });

  test('stops the launch monitor and deletes the NodeClaim’s VM once', async () => {
    orchestrations.seed(
      launchMonitorInstanceId('uid-general-a'),
      LaunchMonitorNames.orchestration,
      'Running',
    );
    fake.cloud.seedInstance('general-a');

    expect(await deleteNodeClaimVm(fake.deps, input, { orchestrations })).toBe('Deleting');
    expect(await deleteNodeClaimVm(fake.deps, input, { orchestrations })).toBe('Deleting');

    expect(orchestrations.terminated).toEqual([launchMonitorInstanceId('uid-general-a')]);
    expect(fake.cloud.deleted).toEqual([vmNameFor('general-a')]);
  });

  test('is done once the cloud provider has no VM under the name', async () => {
    expect(await deleteNodeClaimVm(fake.deps, input, { orchestrations })).toBe('Gone');
    expect(fake.cloud.deleted).toEqual([]);
  });

  test('never deletes a VM under the name that is not this NodeClaim’s', async () => {
    fake.cloud.seedInstance('general-a', { tags: { 'karpenter.sh_nodeclaim': 'someone-else' } });

    expect(await deleteNodeClaimVm(fake.deps, input, { orchestrations })).toBe('Gone');
    expect(fake.cloud.deleted).toEqual([]);
  });
});

describe('collectOrphanVms', () => {
  let fake: FakeLifecycle;
  const minutesAgo = (minutes: number) => new Date(FAKE_NOW.getTime() - minutes * 60_000);
  const nodeClaim = (name: string): NodeClaim => ({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: { name },
    spec: {
      nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
      requirements: [],
    },
  });
  beforeEach(() => {
    fake = fakeLifecycle();
  });

  test('deletes this cluster’s VMs whose NodeClaim is gone, once past the grace period', async () => {
    const grace = fake.deps.settings.disruption.orphanVmGraceMinutes;
    fake.cloud.seedInstance('orphan', { createdAt: minutesAgo(grace + 1) });
    fake.cloud.seedInstance('young-orphan', { createdAt: minutesAgo(grace - 1) });
    fake.cloud.seedInstance('kept', { createdAt: minutesAgo(grace + 1) });
    fake.nodeClaims.seed(nodeClaim('kept'));
    fake.cloud.seedInstance('other-cluster', {
      createdAt: minutesAgo(grace + 1),
      tags: { 'karpenter.azure.com_cluster': 'other', 'karpenter.sh_nodeclaim': 'other-cluster' },
    });

    const result = await collectOrphanVms(fake.deps);

    expect(result.vms).toBe(4);
    expect(result.deleted.map((c) => c.vmName)).toEqual([vmNameFor('orphan')]);
    expect(fake.cloud.deleted).toEqual([vmNameFor('orphan')]);
  });
});
