// Launch as lifecycle, against in-memory fakes: what the NodeClaim shows (Launched, the finalizer, the
// offering's labels, the providerID), the monitor it starts, and how each typed error of the cloud
// provider is sorted: name conflicts and unresolved images wait visibly, no capacity fails and deletes
// the NodeClaim, a refused permission waits without retrying, a refused create records the failure, a
// VM created meanwhile is adopted, a contended reservation is chosen around once. What Azure's side
// chooses and how ARM answers run against the emulator in test/integration/launch*.test.ts.
import { beforeEach, describe, expect, test } from 'vitest';
import {
  AuthorizationError,
  CreateError,
  ImageNotResolvedError,
  InstanceExistsError,
  ReservationContendedError,
  TransientCloudError,
} from '../../../shared/cloudprovider/types.js';
import { vmNameFor } from '../../../shared/cloudprovider/azure/decisions/vm-spec.js';
import { LaunchInProgressError, reconcileLaunch } from '../../../shared/lifecycle/launch/launch.js';
import { launchMonitorInstanceId } from '../../../shared/lifecycle/launch/launch-monitor.js';
import type { AKSNodeClass, NodeClaim, NodePool } from '../../../shared/models/index.js';
import { ConditionTypes, WellKnown } from '../../../shared/models/karpenter.js';
import { LaunchMonitorNames, TerminationNames } from '../../../shared/runtime/function-names.js';
import { fakeLifecycle, FakeOrchestrations, type FakeLifecycle } from '../../support/fake-lifecycle.js';
import { d2sV5Offering, d2sV5Sku as d2sSku } from '../../support/offering.js';

const nodeClassRef = { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' };

const nodeClass: AKSNodeClass = {
  apiVersion: 'karpenter.azure.com/v1beta1',
  kind: 'AKSNodeClass',
  metadata: { name: 'default' },
  spec: {},
};

const nodePool: NodePool = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'general' },
  spec: { template: { spec: { nodeClassRef, requirements: [] } } },
};

function pending(overrides: Partial<NodeClaim['metadata']> = {}): NodeClaim {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: { name: 'general-a', labels: { [WellKnown.nodePoolLabel]: 'general' }, ...overrides },
    spec: { nodeClassRef, requirements: [] },
  };
}

const launchedCondition = (nodeClaim: NodeClaim | undefined) =>
  nodeClaim?.status?.conditions?.find((c) => c.type === ConditionTypes.launched);

describe('reconcileLaunch', () => {
  let fake: FakeLifecycle;
  let orchestrations: FakeOrchestrations;
  const context = () => ({ orchestrations, invocationId: 'invocation-1' });
  beforeEach(() => {
    fake = fakeLifecycle();
    orchestrations = new FakeOrchestrations();
    fake.nodeClasses.seed(nodeClass);
    fake.nodePools.seed(nodePool);
    fake.cloud.offering = d2sV5Offering();
  });

  test('claims the NodeClaim, has the VM created, records the providerID and starts the monitor', async () => {
    const result = await reconcileLaunch(fake.deps, 'general-a', context());
    fake.nodeClaims.seed(pending());
    const launched = await reconcileLaunch(fake.deps, 'general-a', context());

    expect(result).toEqual({ action: 'skipped', why: 'NodeClaim not found' });
    expect(launched).toMatchObject({ action: 'launched', vmName: vmNameFor('general-a'), createdVm: true });
    expect(fake.cloud.created).toEqual([vmNameFor('general-a')]);
    const nodeClaim = fake.nodeClaims.peek('general-a');
    expect(nodeClaim?.metadata.finalizers).toEqual([WellKnown.terminationFinalizer]);
    expect(nodeClaim?.metadata.labels).toMatchObject({
      [WellKnown.instanceTypeLabel]: 'Standard_D2s_v5',
      [WellKnown.capacityTypeLabel]: 'on-demand',
      [WellKnown.zoneLabel]: 'westus2-1',
    });
    expect(nodeClaim?.status?.providerID).toBe(fake.cloud.instances.get(vmNameFor('general-a'))?.providerID);
    expect(launchedCondition(nodeClaim)).toMatchObject({ status: 'Unknown', reason: 'VMProvisioning' });
    expect(orchestrations.started).toEqual([
      expect.objectContaining({
        name: LaunchMonitorNames.orchestrationV2,
        instanceId: launchMonitorInstanceId('uid-general-a'),
        input: expect.objectContaining({ pollerState: `poller-${vmNameFor('general-a')}` }),
      }),
    ]);
  });

  test('a launched NodeClaim is not launched again', async () => {
    fake.nodeClaims.seed(pending());
    await reconcileLaunch(fake.deps, 'general-a', context());
    expect(await reconcileLaunch(fake.deps, 'general-a', context())).toEqual({
      action: 'skipped',
      why: 'already launched',
    });
    expect(fake.cloud.created).toHaveLength(1);
  });

  test('adopts the VM an earlier delivery created, without creating another', async () => {
    fake.skus.push(d2sSku);
    fake.cloud.seedInstance('general-a', { vmSize: 'Standard_D2s_v5', zoneNumber: '1', state: 'Creating' });
    fake.nodeClaims.seed(pending());

    const result = await reconcileLaunch(fake.deps, 'general-a', context());

    expect(result).toMatchObject({ action: 'launched', createdVm: false });
    expect(fake.cloud.created).toEqual([]);
    expect(orchestrations.started[0]?.input).not.toHaveProperty('pollerState');
  });

  test('a VM under its name that is someone else’s blocks the launch, visibly, and is left alone', async () => {
    fake.cloud.seedInstance('general-a', { tags: { 'karpenter.azure.com_cluster': 'other' } });
    fake.nodeClaims.seed(pending());

    const result = await reconcileLaunch(fake.deps, 'general-a', context());

    expect(result).toMatchObject({ action: 'blocked', reason: 'VMNameConflict' });
    expect(launchedCondition(fake.nodeClaims.peek('general-a'))).toMatchObject({
      status: 'False',
      reason: 'VMNameConflict',
    });
    expect(fake.events.map((e) => e.reason)).toEqual(['VMNameConflict']);
    expect(fake.cloud.deleted).toEqual([]);
  });

  test('an image that does not resolve blocks the launch with one event however often it is tried', async () => {
    fake.cloud.failNext('plan', new ImageNotResolvedError('no image version'));
    fake.cloud.failNext('plan', new ImageNotResolvedError('no image version'));
    fake.nodeClaims.seed(pending());

    await reconcileLaunch(fake.deps, 'general-a', context());
    const again = await reconcileLaunch(fake.deps, 'general-a', context());

    expect(again).toEqual({ action: 'blocked', reason: 'ImageNotResolved', message: 'no image version' });
    expect(fake.events.map((e) => e.reason)).toEqual(['ImageNotResolved']);
  });

  test('a missing AKSNodeClass blocks the launch before the cloud provider is asked', async () => {
    fake.nodeClaims.seed({
      ...pending(),
      spec: { nodeClassRef: { ...nodeClassRef, name: 'gone' }, requirements: [] },
    });
    fake.cloud.failNext('plan', new Error('the cloud provider must not be asked'));

    expect(await reconcileLaunch(fake.deps, 'general-a', context())).toMatchObject({
      action: 'blocked',
      reason: 'NodeClassNotFound',
    });
  });

  test('an AKSNodeClass with a field that does not parse blocks the launch before the cloud provider is asked; fixed, it launches', async () => {
    const hostile = '100ms --anonymous-auth=true --authorization-mode=AlwaysAllow';
    fake.nodeClasses.seed({ ...nodeClass, spec: { kubelet: { cpuCFSQuotaPeriod: hostile } } });
    fake.nodeClaims.seed(pending());
    let plans = 0;
    const plan = fake.cloud.plan.bind(fake.cloud);
    fake.cloud.plan = (...args) => {
      plans += 1;
      return plan(...args);
    };

    const blocked = await reconcileLaunch(fake.deps, 'general-a', context());
    await reconcileLaunch(fake.deps, 'general-a', context());

    expect(blocked).toMatchObject({ action: 'blocked', reason: 'NodeClassInvalid' });
    const condition = launchedCondition(fake.nodeClaims.peek('general-a'));
    expect(condition).toMatchObject({ status: 'False', reason: 'NodeClassInvalid' });
    expect(condition?.message).toContain('spec.kubelet.cpuCFSQuotaPeriod: "100ms --anonymous-auth=true');
    expect(fake.events.map((e) => e.reason)).toEqual(['NodeClassInvalid']);
    expect(plans).toBe(0);
    expect(fake.cloud.created).toEqual([]);
    expect(fake.nodeClaims.peek('general-a')?.metadata.finalizers ?? []).toEqual([]);

    fake.nodeClasses.seed({ ...nodeClass, spec: { kubelet: { cpuCFSQuotaPeriod: '100ms' } } });
    expect(await reconcileLaunch(fake.deps, 'general-a', context())).toMatchObject({ action: 'launched' });
  });

  test('no offering that fits fails the launch and deletes the NodeClaim', async () => {
    fake.cloud.offering = undefined;
    fake.nodeClaims.seed(pending());

    const result = await reconcileLaunch(fake.deps, 'general-a', context());

    expect(result).toEqual({ action: 'failed', reason: 'InsufficientCapacity' });
    expect(fake.events.map((e) => e.reason)).toEqual(['InsufficientCapacityError']);
    expect(fake.nodeClaims.writes.at(-1)).toEqual({ verb: 'delete', name: 'general-a' });
    expect(fake.nodeClaims.peek('general-a')).toBeUndefined();
    // Upstream's error value for its typed error; no VM creation was tried.
    const metrics = fake.deps.metrics;
    expect(
      metrics.total('karpenter_cloudprovider_errors_total', { error: 'InsufficientCapacityError' }),
    ).toBe(1);
    expect(metrics.total('karpenter_nodeclaims_launch_attempts_total')).toBe(0);
  });

  test('a permission Azure refuses blocks the launch; no event brings it back to Azure', async () => {
    const failure = { reason: 'AuthorizationFailed' as const, message: 'no write on VMs', retryable: false };
    fake.cloud.failNext('create', new AuthorizationError(failure));
    fake.nodeClaims.seed(pending());

    const result = await reconcileLaunch(fake.deps, 'general-a', context());
    const again = await reconcileLaunch(fake.deps, 'general-a', context());

    expect(result).toMatchObject({ action: 'blocked', reason: 'AuthorizationFailed' });
    expect(again).toEqual({ action: 'skipped', why: 'Azure refused the VM for want of a permission' });
    expect(fake.cloud.created).toEqual([]);
  });

  test('a refused read is a permission block too, on a NodeClaim not yet claimed', async () => {
    const failure = { reason: 'AuthorizationFailed' as const, message: 'no read on SKUs', retryable: false };
    fake.cloud.failNext('plan', new AuthorizationError(failure));
    fake.nodeClaims.seed(pending());

    expect(await reconcileLaunch(fake.deps, 'general-a', context())).toMatchObject({
      action: 'blocked',
      reason: 'AuthorizationFailed',
    });
    expect(fake.nodeClaims.peek('general-a')?.metadata.finalizers).toBeUndefined();
  });

  test('a create Azure refuses is recorded on the NodeClaim, which is then terminated', async () => {
    const failure = { reason: 'LaunchFailed' as const, message: 'bad request', retryable: false };
    fake.cloud.failNext('create', new CreateError(failure));
    fake.nodeClaims.seed(pending());

    const result = await reconcileLaunch(fake.deps, 'general-a', context());

    expect(result).toEqual({ action: 'failed', reason: 'LaunchFailed' });
    const nodeClaim = fake.nodeClaims.peek('general-a');
    expect(launchedCondition(nodeClaim)).toMatchObject({ status: 'False', reason: 'LaunchFailed' });
    expect(nodeClaim?.metadata.deletionTimestamp).toBeDefined();
    expect(orchestrations.started.map((s) => s.name)).toEqual([TerminationNames.orchestrationV2]);
    // A refused PUT is a failed attempt, for the first-attempt success rate.
    expect(fake.deps.metrics.total('karpenter_nodeclaims_launch_attempts_total', { outcome: 'failed' })).toBe(
      1,
    );
  });

  test('a VM created meanwhile by another delivery is adopted from a fresh plan', async () => {
    fake.skus.push(d2sSku);
    fake.nodeClaims.seed(pending());
    fake.cloud.failNext('create', new InstanceExistsError('412'));
    // The other delivery's VM, there by the time this one plans again.
    const original = fake.cloud.create.bind(fake.cloud);
    fake.cloud.create = async (...args) => {
      fake.cloud.seedInstance('general-a', { vmSize: 'Standard_D2s_v5', zoneNumber: '1' });
      fake.cloud.create = original;
      return original(...args);
    };

    const result = await reconcileLaunch(fake.deps, 'general-a', context());

    expect(result).toMatchObject({ action: 'launched', createdVm: false });
  });

  test('a contended reservation is chosen around once, then left to a later retry', async () => {
    fake.nodeClaims.seed(pending());
    fake.cloud.failNext('create', new ReservationContendedError('slot taken'));
    expect(await reconcileLaunch(fake.deps, 'general-a', context())).toMatchObject({ action: 'launched' });

    fake.nodeClaims.seed(pending({ name: 'general-b' }));
    fake.cloud.failNext('create', new ReservationContendedError('slot taken'));
    fake.cloud.failNext('create', new ReservationContendedError('slot taken'));
    await expect(reconcileLaunch(fake.deps, 'general-b', context())).rejects.toBeInstanceOf(
      LaunchInProgressError,
    );
  });

  test('a transient answer from Azure is thrown for the caller to retry; nothing is recorded', async () => {
    fake.cloud.failNext('create', new TransientCloudError('throttled', 15));
    fake.nodeClaims.seed(pending());

    await expect(reconcileLaunch(fake.deps, 'general-a', context())).rejects.toBeInstanceOf(
      TransientCloudError,
    );
    expect(launchedCondition(fake.nodeClaims.peek('general-a'))).toBeUndefined();
    expect(fake.events).toEqual([]);
  });
});
