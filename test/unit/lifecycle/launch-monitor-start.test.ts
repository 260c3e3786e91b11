// Starting and restarting the launch monitor, against in-memory fakes: started once per NodeClaim, a
// concurrent start is the outcome wanted, and a launched NodeClaim whose monitor is missing, ended
// without an outcome or stuck gets one that can still write the outcome. The monitor's own polling runs
// against the ARM emulator in test/integration/launch.test.ts.
import { beforeEach, describe, expect, test } from 'vitest';
import { vmNameFor } from '../../../shared/cloudprovider/azure/decisions/vm-spec.js';
import { d2sV5Offering, d2sV5Sku as d2s } from '../../support/offering.js';
import {
  ensureLaunchMonitor,
  startLaunchMonitor,
} from '../../../shared/lifecycle/launch/launch-monitor-start.js';
import {
  launchMonitorInstanceId,
  type LaunchMonitorInput,
} from '../../../shared/lifecycle/launch/launch-monitor.js';
import { ConditionTypes, WellKnown, type NodeClaim } from '../../../shared/models/karpenter.js';
import { LaunchMonitorNames } from '../../../shared/runtime/function-names.js';
import {
  FAKE_NOW,
  fakeLifecycle,
  FakeOrchestrations,
  type FakeLifecycle,
} from '../../support/fake-lifecycle.js';

const nodeClassRef = { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' };
const instanceId = launchMonitorInstanceId('uid-general-a');

/** A NodeClaim whose VM PUT was accepted (providerID set) and whose launch outcome is still unknown. */
function launching(launched?: 'True' | 'False'): NodeClaim {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: { name: 'general-a', uid: 'uid-general-a', labels: { [WellKnown.nodePoolLabel]: 'general' } },
    spec: { nodeClassRef, requirements: [] },
    status: {
      providerID: 'azure:///subscriptions/s/resourcegroups/rg/providers/Microsoft.Compute/virtualMachines/x',
      conditions: [
        {
          type: ConditionTypes.launched,
          status: launched ?? 'Unknown',
          reason: launched ? 'Launched' : 'Launching',
          message: '',
          lastTransitionTime: '2026-11-30T11:58:00Z',
        },
      ],
    },
  };
}

const input: LaunchMonitorInput = {
  nodeClaim: { name: 'general-a', uid: 'uid-general-a' },
  vmName: vmNameFor('general-a'),
  offering: d2sV5Offering({ acceleratedNetworking: false }),
  startedAt: '2026-11-30T11:58:00Z',
  pollIntervalSeconds: 5,
  maxPollIntervalSeconds: 30,
  deadlineMinutes: 15,
};

describe('startLaunchMonitor', () => {
  let fake: FakeLifecycle;
  let orchestrations: FakeOrchestrations;
  beforeEach(() => {
    fake = fakeLifecycle();
    orchestrations = new FakeOrchestrations();
  });

  test('starts the monitor once, its first poll paced by the launches in flight', async () => {
    fake.launchesInFlight = async () => 250;
    await startLaunchMonitor(fake.deps, launching(), { orchestrations }, input);
    await startLaunchMonitor(fake.deps, launching(), { orchestrations }, input);

    expect(orchestrations.started).toEqual([
      { name: LaunchMonitorNames.orchestrationV2, instanceId, input: { ...input, inFlightLaunches: 250 } },
    ]);
    // The second call saw the instance and did not try to start another.
    expect(orchestrations.startCalls).toBe(1);
  });

  test('starts it unpaced when the count of launches in flight cannot be read', async () => {
    fake.launchesInFlight = () => Promise.reject(new Error('watch not synced'));
    await startLaunchMonitor(fake.deps, launching(), { orchestrations }, input);

    expect(orchestrations.started.map((s) => s.input)).toEqual([input]);
  });

  test('another delivery starting it between the check and the start is the outcome wanted', async () => {
    orchestrations.beforeStart = (id) => orchestrations.seed(id, LaunchMonitorNames.orchestration, 'Running');
    await expect(
      startLaunchMonitor(fake.deps, launching(), { orchestrations }, input),
    ).resolves.toBeUndefined();
  });

  test('a start that fails with no instance behind it fails the caller, which is retried', async () => {
    orchestrations.beforeStart = () => {
      throw new Error('task hub unavailable');
    };
    await expect(startLaunchMonitor(fake.deps, launching(), { orchestrations }, input)).rejects.toThrow(
      'task hub unavailable',
    );
  });
});

describe('ensureLaunchMonitor', () => {
  let fake: FakeLifecycle;
  let orchestrations: FakeOrchestrations;
  beforeEach(() => {
    fake = fakeLifecycle();
    orchestrations = new FakeOrchestrations();
    fake.skus.push(d2s);
    fake.cloud.seedInstance('general-a', { vmSize: 'Standard_D2s_v5', zoneNumber: '1' });
  });

  test('a NodeClaim with a launch outcome needs no monitor', async () => {
    const nodeClaim = fake.nodeClaims.seed(launching('True'));
    expect(await ensureLaunchMonitor(fake.deps, nodeClaim, { orchestrations })).toBe('healthy');
    expect(orchestrations.started).toEqual([]);
  });

  test('a missing monitor is started again for the VM that exists, from the Launched transition', async () => {
    const nodeClaim = fake.nodeClaims.seed(launching());

    expect(await ensureLaunchMonitor(fake.deps, nodeClaim, { orchestrations })).toBe('started');

    expect(orchestrations.started).toHaveLength(1);
    const started = orchestrations.started[0]?.input as LaunchMonitorInput;
    expect(started.nodeClaim).toEqual({ name: 'general-a', uid: 'uid-general-a', nodePool: 'general' });
    expect(started.vmName).toBe(vmNameFor('general-a'));
    expect(started.offering).toMatchObject({
      vmSize: 'Standard_D2s_v5',
      zoneNumber: '1',
      capacityType: 'on-demand',
    });
    expect(started.startedAt).toBe('2026-11-30T11:58:00Z');
  });

  test('a restarted monitor records the capacity the NodeClass gave the launch (max pods, OS disk)', async () => {
    fake.nodeClasses.seed({
      apiVersion: 'karpenter.azure.com/v1beta1',
      kind: 'AKSNodeClass',
      metadata: { name: 'default' },
      spec: { maxPods: 42, osDiskSizeGB: 64 },
    });
    const nodeClaim = fake.nodeClaims.seed(launching());

    expect(await ensureLaunchMonitor(fake.deps, nodeClaim, { orchestrations })).toBe('started');

    const started = orchestrations.started[0]?.input as LaunchMonitorInput;
    // The resources come from the cloud provider, sized with the NodeClass: its 42 pods and 64 GiB disk.
    expect(started.resources?.capacity).toMatchObject({ pods: '42', 'ephemeral-storage': '64Gi' });
    expect(started.resources?.allocatable).toMatchObject({ pods: '42' });
  });

  test('a monitor that ended without writing the outcome is purged and replaced', async () => {
    const nodeClaim = fake.nodeClaims.seed(launching());
    orchestrations.seed(instanceId, LaunchMonitorNames.orchestration, 'Failed');

    expect(await ensureLaunchMonitor(fake.deps, nodeClaim, { orchestrations })).toBe('started');

    expect(orchestrations.purged).toEqual([instanceId]);
    expect(orchestrations.instances.get(instanceId)?.runtimeStatus).toBe('Pending');
  });

  test('a monitor that wrote the outcome just before it ended is not replaced (judged from a fresh read)', async () => {
    const stale = fake.nodeClaims.seed(launching());
    fake.nodeClaims.seed(launching('True'));
    orchestrations.seed(instanceId, LaunchMonitorNames.orchestration, 'Completed');

    expect(await ensureLaunchMonitor(fake.deps, stale, { orchestrations })).toBe('healthy');
    expect(orchestrations.started).toEqual([]);
    expect(orchestrations.purged).toEqual([]);
  });

  test('a stuck monitor is terminated first, and replaced once it has ended', async () => {
    const nodeClaim = fake.nodeClaims.seed(launching());
    orchestrations.instances.set(instanceId, {
      instanceId,
      name: LaunchMonitorNames.orchestration,
      runtimeStatus: 'Running',
      lastUpdatedTime: new Date(FAKE_NOW.getTime() - 60 * 60_000),
    });

    expect(await ensureLaunchMonitor(fake.deps, nodeClaim, { orchestrations })).toBe('terminated');
    expect(orchestrations.terminated).toEqual([instanceId]);
    expect(orchestrations.started).toEqual([]);

    expect(await ensureLaunchMonitor(fake.deps, nodeClaim, { orchestrations })).toBe('started');
  });

  test('no VM behind the providerID: nothing to monitor, registration times the NodeClaim out', async () => {
    fake.cloud.instances.clear();
    const nodeClaim = fake.nodeClaims.seed(launching());

    expect(await ensureLaunchMonitor(fake.deps, nodeClaim, { orchestrations })).toBe('no-vm');
    expect(orchestrations.started).toEqual([]);
  });
});
