// Launch end to end: a NodeClaim event on the queue → the queue-triggered function PUTs one VM and returns
// while the LRO still runs → the launch monitor (driven by durable-functions' replay engine in the
// in-process host) writes the outcome onto the NodeClaim. Real control plane, Azurite, ARM emulator
// through the real @azure/arm-compute client.
import { randomUUID } from 'node:crypto';
import { QueueClient } from '@azure/storage-queue';
import { afterAll, afterEach, beforeAll, describe, expect, inject, test } from 'vitest';
import type { AsyncFaultEffect, SyncFaultEffect } from '../../local/arm-emulator/faults.js';
import { parseNodeCustomData } from '../../shared/cloudprovider/azure/decisions/aks-node-config.js';
import { decodeCustomData } from '../../shared/cloudprovider/azure/decisions/bootstrap.js';
import { findCondition } from '../../shared/decisions/conditions.js';
import { vmNameFor } from '../../shared/cloudprovider/azure/decisions/vm-spec.js';
import { launchMonitorInstanceId } from '../../shared/lifecycle/launch/launch-monitor.js';
import { LAUNCH_GRACE_MS } from '../../shared/lifecycle/sweep/steps/launch.js';
import type { NodeClaim } from '../../shared/models/index.js';
import { isOrchestrationActive } from '../../shared/runtime/definitions.js';
import { exampleRequirements, nodeClass, nodeClassRef, nodePool } from '../support/fixtures.js';
import {
  eventsAboutNodeClaim,
  eventually,
  startLaunchStack,
  watchNodeClaim,
  type LaunchStack,
} from '../support/launch-stack.js';
import { nextHostEvent } from '../support/local-hosts.js';

let stack: LaunchStack;
const suffix = randomUUID().slice(0, 6);
const nodePoolName = `launch-${suffix}`;
const nodeClassName = `launch-${suffix}`;

beforeAll(async () => {
  stack = await startLaunchStack();
  await stack.admin.objects.nodeClasses.create(nodeClass(nodeClassName, 'Ubuntu2204'));
  await stack.admin.objects.nodePools.create(
    nodePool(nodePoolName, nodeClassName, {
      budgets: [{ nodes: '5' }],
      labels: { 'kubernetes.azure.com/ebpf-dataplane': 'cilium' },
    }),
  );
});

afterEach(async () => {
  await stack.clearUnavailableOfferings();
});

afterAll(async () => {
  await stack?.stop();
});

let counter = 0;
async function createNodeClaim(overrides: Partial<NodeClaim['spec']> = {}, nodeClassRefName = nodeClassName) {
  counter += 1;
  const nodeClaim: NodeClaim = {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name: `${nodePoolName}-${counter}-${randomUUID().slice(0, 4)}`,
      labels: {
        'karpenter.sh/nodepool': nodePoolName,
        'kubernetes.azure.com/ebpf-dataplane': 'cilium',
        [stack.runLabel.key]: stack.runLabel.value,
      },
    },
    spec: {
      nodeClassRef: nodeClassRef(nodeClassRefName),
      requirements: exampleRequirements,
      taints: [{ key: 'dedicated', value: 'infra', effect: 'NoSchedule' }],
      startupTaints: [{ key: 'node.cilium.io/agent-not-ready', value: 'true', effect: 'NoExecute' }],
      ...overrides,
    },
  };
  const created = await stack.deps.objects.nodeClaims.create(nodeClaim);
  return created;
}

/**
 * The monitor's status once it has left Running: it completes once its last activity (the one that wrote
 * Launched=True) has returned to it, a moment after that write is visible.
 */
function monitorFinished(instanceId: string) {
  return eventually(async () => {
    const status = await stack.host.orchestrations.getStatus(instanceId);
    return status && !isOrchestrationActive(status) ? status : undefined;
  }, `launch monitor ${instanceId} to finish`);
}

/**
 * Runs `act` while the VM's creation is held in the emulator, so it is still running whatever the
 * machine's speed; then lets the creation end.
 */
async function whileCreating<T>(vmName: string, act: () => Promise<T>): Promise<T> {
  stack.emulator.controls.holdProvisioning(vmName);
  try {
    return await act();
  } finally {
    stack.emulator.controls.releaseProvisioning(vmName);
  }
}

/**
 * Launches the NodeClaim and terminates its monitor, as a host crash would end it, before the VM's creation
 * ends: the monitor never sees the outcome. With `loseHistory`, its history is purged too. A sweep on its
 * schedule may restart the monitor at any moment after that, so the termination is taken from the host's
 * event, not from a status read that a restart could already have changed. `thenWhileCreating` runs before
 * the creation is let end: Durable's terminate does not stop an activity that is running, so the killed
 * monitor's last wait (awaitVmCreation) goes on polling and writes the outcome itself once the VM exists.
 */
async function launchThenKillMonitor(
  nodeClaim: NodeClaim,
  instanceId: string,
  {
    loseHistory = false,
    thenWhileCreating,
  }: { loseHistory?: boolean; thenWhileCreating?: () => Promise<void> } = {},
) {
  const vmName = vmNameFor(nodeClaim.metadata.name);
  await whileCreating(vmName, async () => {
    await announce(nodeClaim);
    await eventually(async () => (await get(nodeClaim.metadata.name))?.status?.providerID, 'providerID');
    await eventually(() => stack.host.orchestrations.getStatus(instanceId), 'monitor started');
    const terminated = nextHostEvent(
      stack.host,
      (event) => event.type === 'orchestration.terminated' && event.instanceId === instanceId,
    );
    await stack.host.orchestrations.terminate(instanceId, 'test: the monitor died');
    await terminated;
    if (loseHistory) await stack.host.orchestrations.purge(instanceId);
    expect(vmOf(vmName)?.provisioningState).toBe('Creating');
    await thenWhileCreating?.();
  });
}

async function announce(nodeClaim: NodeClaim, changeType: 'ADDED' | 'MODIFIED' | 'RESYNC' = 'ADDED') {
  await stack.publish({
    kind: 'NodeClaim',
    name: nodeClaim.metadata.name,
    uid: nodeClaim.metadata.uid ?? '',
    resourceVersion: nodeClaim.metadata.resourceVersion ?? '1',
    changeType,
  });
}

const get = (name: string) => stack.deps.objects.nodeClaims.get(name);
const puts = (vmName: string) => stack.emulator.controls.requests({ kind: 'putVm', vmName, method: 'PUT' });
const vmOf = (vmName: string) => stack.emulator.controls.vms().find((vm) => vm.name === vmName);

describe('launch', () => {
  test('one VM PUT with the registration taint; providerID set while the LRO still runs; then Launched=True', async () => {
    const nodeClaim = await createNodeClaim();
    const vmName = vmNameFor(nodeClaim.metadata.name);
    const withProvider = await whileCreating(vmName, async () => {
      await announce(nodeClaim);
      const current = await eventually(async () => {
        const read = await get(nodeClaim.metadata.name);
        return read?.status?.providerID ? read : undefined;
      }, 'providerID');
      // The VM is still being created when the NodeClaim already has its providerID.
      expect(vmOf(vmName)?.provisioningState).toBe('Creating');
      return current;
    });
    expect(withProvider.status?.providerID).toBe(
      `azure:///subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/${stack.settings.azure.resourceGroup.toLowerCase()}/providers/Microsoft.Compute/virtualMachines/${vmName}`,
    );
    expect(findCondition(withProvider.status?.conditions, 'Launched')).toMatchObject({
      status: 'Unknown',
      reason: 'VMProvisioning',
    });
    expect(withProvider.metadata.labels).toMatchObject({
      'node.kubernetes.io/instance-type': expect.stringMatching(/^Standard_D2/),
      'karpenter.sh/capacity-type': 'on-demand',
      'topology.kubernetes.io/zone': expect.stringMatching(/^westus2-[123]$/),
    });
    expect(withProvider.metadata.finalizers).toContain('karpenter.sh/termination');
    expect(withProvider.metadata.annotations?.['karpenter.sh/nodepool-hash']).toBeTruthy();

    const [put, ...morePuts] = puts(vmName);
    expect(morePuts).toHaveLength(0);
    const body = put?.body as {
      properties?: { osProfile?: { customData?: string } };
      osProfile?: { customData?: string };
    };
    const customData = body.properties?.osProfile?.customData ?? body.osProfile?.customData ?? '';
    const config = parseNodeCustomData(decodeCustomData(customData));
    expect(config.kubelet_config.kubelet_flags['--register-with-taints']).toBe(
      'karpenter.sh/unregistered:NoExecute,dedicated=infra:NoSchedule,node.cilium.io/agent-not-ready=true:NoExecute',
    );
    expect(config.kubelet_config.kubelet_node_labels['karpenter.sh/nodepool']).toBe(nodePoolName);

    const launched = await eventually(async () => {
      const current = await get(nodeClaim.metadata.name);
      return findCondition(current?.status?.conditions, 'Launched')?.status === 'True' ? current : undefined;
    }, 'Launched=True');
    expect(launched.status?.capacity?.cpu).toBe('2');
    expect(launched.status?.allocatable?.cpu).toBeTruthy();
    // Ubuntu2204 on the local control plane's Kubernetes 1.34, newest published version.
    expect(launched.status?.imageID).toBe(
      '/CommunityGalleries/AKSUbuntu-38d80f77-467a-481f-a8d4-09b6d4220bd2/images/2204gen2containerd/versions/202608.20.0',
    );
    const monitor = await monitorFinished(launchMonitorInstanceId(nodeClaim.metadata.uid ?? ''));
    expect(monitor?.runtimeStatus).toBe('Completed');
  });

  test('launch takes the cheapest offering by the prices read from the Retail Prices API, not the first by shape and name', async () => {
    // The stack's price catalog reads the ARM emulator's /api/retail/prices (its endpoint and CA come
    // from the local app settings); the first read starts the refresh.
    await eventually(
      () => (stack.deps.azure.pricing.prices().source === 'retail-prices-api' ? true : undefined),
      'prices refreshed from the emulator',
    );
    const prices = stack.deps.azure.pricing.prices();
    // Same shape (2 vCPUs, 8 GiB): shape order would take D2ds_v5, first by name; D2s_v5 is cheaper.
    expect(prices.onDemand.get('Standard_D2s_v5')).toBeLessThan(prices.onDemand.get('Standard_D2ds_v5') ?? 0);
    const nodeClaim = await createNodeClaim({
      requirements: [
        ...exampleRequirements,
        {
          key: 'node.kubernetes.io/instance-type',
          operator: 'In',
          values: ['Standard_D2ds_v5', 'Standard_D2s_v5'],
        },
      ],
    });
    await announce(nodeClaim);
    const launched = await eventually(async () => {
      const current = await get(nodeClaim.metadata.name);
      return current?.status?.providerID ? current : undefined;
    }, 'providerID');
    expect(launched.metadata.labels).toMatchObject({
      'node.kubernetes.io/instance-type': 'Standard_D2s_v5',
      'karpenter.sh/capacity-type': 'on-demand',
      'topology.kubernetes.io/zone': expect.stringMatching(/^westus2-[123]$/),
    });
    expect(vmOf(vmNameFor(nodeClaim.metadata.name))?.vmSize).toBe('Standard_D2s_v5');
  });

  test("the launch function returns before the LRO ends, whatever the LRO's latency (100×)", async () => {
    const outcomes: { latencyMs: number; functionMs: number; stateAtReturn: string | undefined }[] = [];
    for (const latencyMs of [300, 30_000]) {
      stack.emulator.controls.setLatencies({ createMs: latencyMs });
      const nodeClaim = await createNodeClaim();
      const vmName = vmNameFor(nodeClaim.metadata.name);
      const finished = new Promise<number>((resolve) => {
        let started = 0;
        const off = stack.host.on((event) => {
          if (event.type === 'function.invoked' && event.functionName === 'objectEvents')
            started = Date.now();
          if (event.type === 'function.succeeded' && event.functionName === 'objectEvents' && vmOf(vmName)) {
            off();
            resolve(Date.now() - started);
          }
        });
      });
      await announce(nodeClaim);
      const functionMs = await finished;
      outcomes.push({ latencyMs, functionMs, stateAtReturn: vmOf(vmName)?.provisioningState });
    }
    // With a 30 s LRO the function has returned while the VM is still being created: it never waits.
    expect(outcomes[1]?.stateAtReturn).toBe('Creating');
    console.log('launch function duration by LRO latency:', JSON.stringify(outcomes));
    stack.emulator.controls.setLatencies({ createMs: 1_500 });
  });

  const failureCases: { name: string; effect: SyncFaultEffect | AsyncFaultEffect; reason: string }[] = [
    { name: 'family quota on the PUT', effect: { type: 'familyQuota' }, reason: 'SubscriptionQuotaReached' },
    { name: 'SKU not available on the PUT', effect: { type: 'skuNotAvailable' }, reason: 'SKUNotAvailable' },
    {
      name: 'zonal allocation in the LRO',
      effect: { type: 'ZonalAllocationFailed' },
      reason: 'ZonalAllocationFailure',
    },
    { name: 'allocation in the LRO', effect: { type: 'AllocationFailed' }, reason: 'AllocationFailure' },
    {
      name: 'overconstrained allocation in the LRO',
      effect: { type: 'OverconstrainedAllocationRequest' },
      reason: 'OverconstrainedAllocationFailure',
    },
    {
      name: 'overconstrained zonal allocation in the LRO',
      effect: { type: 'OverconstrainedZonalAllocationRequest' },
      reason: 'OverconstrainedZonalAllocationFailure',
    },
  ];

  test.each(failureCases)(
    '$name → Launched=False $reason, then no VM and no NodeClaim; the next launch avoids the offering',
    async ({ effect, reason }) => {
      const nodeClaim = await createNodeClaim();
      const vmName = vmNameFor(nodeClaim.metadata.name);
      const rule = stack.emulator.controls.injectFault({ match: { vmName }, effect, times: 1 });
      // The NodeClaim lives only until termination has removed its VM, so every version is recorded.
      const watch = await watchNodeClaim(inject('kubeconfigPath'), nodeClaim.metadata.name);
      try {
        await announce(nodeClaim);
        await eventually(
          async () => ((await get(nodeClaim.metadata.name)) ? undefined : true),
          'NodeClaim deleted',
        );
        await eventually(() => (vmOf(vmName) ? undefined : true), 'VM deleted');
      } finally {
        watch.stop();
      }
      expect(rule.id).toBeTruthy();
      const index = watch.versions.findIndex(
        (v) => findCondition(v.status?.conditions, 'Launched')?.status === 'False',
      );
      expect(index).toBeGreaterThanOrEqual(0);
      const failed = watch.versions[index] as NodeClaim;
      const launched = findCondition(failed.status?.conditions, 'Launched');
      expect(launched?.reason).toBe(reason);
      expect(launched?.message.length).toBeGreaterThan(10);
      // That the reason is written at the first poll after Azure reports the failure is checked by what
      // happened, not by the clock: in launch-monitor.test.ts and the launch-failure scenario.
      const offering = `${failed.metadata.labels?.['node.kubernetes.io/instance-type']}/${failed.metadata.labels?.['topology.kubernetes.io/zone']}`;

      const next = await createNodeClaim();
      await announce(next);
      const relaunched = await eventually(async () => {
        const current = await get(next.metadata.name);
        return current?.status?.providerID ? current : undefined;
      }, 'next providerID');
      const nextOffering = `${relaunched.metadata.labels?.['node.kubernetes.io/instance-type']}/${relaunched.metadata.labels?.['topology.kubernetes.io/zone']}`;
      expect(nextOffering).not.toBe(offering);
    },
  );

  /**
   * Plays the event bridge's part for a relaunch: each version that cleared the providerID of a failed VM
   * (Launched=Unknown LaunchRetrying) is announced, as the bridge announces every MODIFIED NodeClaim.
   */
  function announceRelaunches(name: string): () => void {
    let stopped = false;
    const announced = new Set<string>();
    void (async () => {
      while (!stopped) {
        const current = await get(name).catch(() => undefined);
        const launched = findCondition(current?.status?.conditions, 'Launched');
        const version = current?.metadata.resourceVersion ?? '';
        if (
          current &&
          !current.status?.providerID &&
          launched?.reason === 'LaunchRetrying' &&
          !announced.has(version)
        ) {
          announced.add(version);
          await announce(current, 'MODIFIED');
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })();
    return () => {
      stopped = true;
    };
  }

  test('a transient error in the LRO relaunches the same NodeClaim: the failed VM deleted, one more PUT, Launched=True', async () => {
    const nodeClaim = await createNodeClaim();
    const vmName = vmNameFor(nodeClaim.metadata.name);
    stack.emulator.controls.injectFault({
      match: { vmName },
      effect: {
        type: 'asyncError',
        code: 'InternalExecutionError',
        message: 'An internal execution error occurred.',
      },
      times: 1,
    });
    const changes: string[] = [];
    const off = stack.emulator.controls.onVmChange((change) => {
      if (change.vm.name === vmName) changes.push(change.type);
    });
    const watch = await watchNodeClaim(inject('kubeconfigPath'), nodeClaim.metadata.name);
    const stopAnnouncing = announceRelaunches(nodeClaim.metadata.name);
    try {
      await announce(nodeClaim);
      const launched = await eventually(
        async () => {
          const current = await get(nodeClaim.metadata.name);
          return findCondition(current?.status?.conditions, 'Launched')?.status === 'True'
            ? current
            : undefined;
        },
        'Launched=True after the relaunch',
        45_000,
      );
      expect(launched.metadata.uid).toBe(nodeClaim.metadata.uid);
      expect(launched.metadata.annotations?.['karpenter.azure.com/launch-retries']).toBe('1');
    } finally {
      stopAnnouncing();
      off();
      watch.stop();
    }
    const created = puts(vmName).filter((e) => e.status >= 200 && e.status < 300);
    expect(created).toHaveLength(2);
    // The first VM failed and was deleted before the second PUT created the VM again.
    expect(changes).toEqual(['creating', 'failed', 'deleting', 'deleted', 'creating', 'succeeded']);
    expect(vmOf(vmName)?.provisioningState).toBe('Succeeded');
    const retrying = watch.versions
      .map((v) => findCondition(v.status?.conditions, 'Launched'))
      .find((c) => c?.reason === 'LaunchRetrying');
    expect(retrying?.status).toBe('Unknown');
    expect(retrying?.message).toMatch(/^InternalExecutionError: .*retry 1 of 2$/);
    expect(
      watch.versions.some((v) => findCondition(v.status?.conditions, 'Launched')?.status === 'False'),
    ).toBe(false);
    const monitor = await eventually(async () => {
      const status = await stack.host.orchestrations.getStatus(
        launchMonitorInstanceId(nodeClaim.metadata.uid ?? '', 1),
      );
      return status?.runtimeStatus === 'Completed' ? status : undefined;
    }, 'the relaunch monitor to complete');
    expect(monitor.runtimeStatus).toBe('Completed');
  });

  test('a transient error on every attempt ends Launched=False after the bound, with no VM left', async () => {
    const nodeClaim = await createNodeClaim();
    const vmName = vmNameFor(nodeClaim.metadata.name);
    const rule = stack.emulator.controls.injectFault({
      match: { vmName },
      effect: { type: 'asyncError', code: 'ServiceUnavailable', message: 'The service is unavailable.' },
    });
    const watch = await watchNodeClaim(inject('kubeconfigPath'), nodeClaim.metadata.name);
    const stopAnnouncing = announceRelaunches(nodeClaim.metadata.name);
    try {
      await announce(nodeClaim);
      await eventually(
        async () => ((await get(nodeClaim.metadata.name)) ? undefined : true),
        'NodeClaim deleted',
        60_000,
      );
      await eventually(() => (vmOf(vmName) ? undefined : true), 'VM deleted');
    } finally {
      stopAnnouncing();
      stack.emulator.controls.removeFault(rule.id);
      watch.stop();
    }
    // The first launch and two relaunches, each a new VM after the failed one was deleted.
    expect(puts(vmName).filter((e) => e.status >= 200 && e.status < 300)).toHaveLength(3);
    const reasons = watch.versions.map((v) => findCondition(v.status?.conditions, 'Launched'));
    const retries = reasons
      .filter((c) => c?.reason === 'LaunchRetrying')
      .map((c) => /retry \d of \d$/.exec(c?.message ?? '')?.[0]);
    expect([...new Set(retries)]).toEqual(['retry 1 of 2', 'retry 2 of 2']);
    const failed = reasons.find((c) => c?.status === 'False');
    expect(failed).toMatchObject({ reason: 'LaunchFailed' });
    expect(failed?.message).toMatch(/^ServiceUnavailable: /);
  });

  test('the same event three times, concurrently and out of order, creates one VM', async () => {
    const nodeClaim = await createNodeClaim();
    const vmName = vmNameFor(nodeClaim.metadata.name);
    await Promise.all([
      announce(nodeClaim, 'MODIFIED'),
      announce(nodeClaim, 'ADDED'),
      announce(nodeClaim, 'RESYNC'),
    ]);
    await eventually(async () => {
      const current = await get(nodeClaim.metadata.name);
      return findCondition(current?.status?.conditions, 'Launched')?.status === 'True' ? current : undefined;
    }, 'Launched=True');
    await stack.host.waitForIdle();
    expect(stack.emulator.controls.vms().filter((vm) => vm.name === vmName)).toHaveLength(1);
    expect(puts(vmName)).toHaveLength(1);
  });

  test.each([
    { how: 'terminated', lose: false },
    { how: 'terminated and its history lost', lose: true },
  ])(
    'a launch monitor that was $how is restarted by the sweep, which reads the outcome from ARM',
    async ({ lose }) => {
      const nodeClaim = await createNodeClaim();
      const vmName = vmNameFor(nodeClaim.metadata.name);
      const instanceId = launchMonitorInstanceId(nodeClaim.metadata.uid ?? '');
      await launchThenKillMonitor(nodeClaim, instanceId, {
        loseHistory: lose,
        // While the VM is still being created nothing can write the outcome: only a sweep notices that
        // the monitor is gone, and starts another that polls the VM by GET.
        thenWhileCreating: async () => {
          await stack.host.triggerTimer('lifecycleSweep');
          await eventually(async () => {
            const status = await stack.host.orchestrations.getStatus(instanceId);
            return status && isOrchestrationActive(status) ? true : undefined;
          }, 'a new launch monitor started by the sweep');
        },
      });
      const launched = await eventually(async () => {
        const current = await get(nodeClaim.metadata.name);
        return findCondition(current?.status?.conditions, 'Launched')?.status === 'True'
          ? current
          : undefined;
      }, 'Launched=True after the sweep');
      expect(launched.status?.capacity?.cpu).toBe('2');
      const monitor = await monitorFinished(instanceId);
      expect(monitor?.runtimeStatus).toBe('Completed');
      expect(puts(vmName)).toHaveLength(1);
    },
  );

  test("a monitor restarted after the VM failed reads Azure's reason from the VM: the failure is classified and its offering avoided", async () => {
    const nodeClaim = await createNodeClaim();
    const vmName = vmNameFor(nodeClaim.metadata.name);
    const instanceId = launchMonitorInstanceId(nodeClaim.metadata.uid ?? '');
    stack.emulator.controls.injectFault({
      match: { vmName },
      effect: { type: 'ZonalAllocationFailed' },
      times: 1,
    });
    const watch = await watchNodeClaim(inject('kubeconfigPath'), nodeClaim.metadata.name);
    // Recorded as it happens: a sweep on its schedule may act on the failure, and delete the VM, before a
    // read of the VM's state would see it.
    let vmFailed = false;
    const off = stack.emulator.controls.onVmChange((change) => {
      if (change.vm.name === vmName && change.type === 'failed') vmFailed = true;
    });
    try {
      // The monitor and its poller are gone: the restarted one can only GET the VM.
      await launchThenKillMonitor(nodeClaim, instanceId, { loseHistory: true });
      await eventually(() => (vmFailed ? true : undefined), 'VM failed');
      await stack.host.triggerTimer('lifecycleSweep');
      await eventually(
        async () => ((await get(nodeClaim.metadata.name)) ? undefined : true),
        'NodeClaim deleted',
      );
    } finally {
      off();
      watch.stop();
    }
    const failed = watch.versions.find(
      (v) => findCondition(v.status?.conditions, 'Launched')?.status === 'False',
    );
    const launched = findCondition(failed?.status?.conditions, 'Launched');
    expect(launched?.reason).toBe('ZonalAllocationFailure');
    expect(launched?.message).toContain('sufficient capacity for the requested VM size in this zone');
    const zone = failed?.metadata.labels?.['topology.kubernetes.io/zone'] ?? '';
    const blocks = await stack.deps.azure.unavailable.listActive(new Date());
    expect(blocks.map((b) => [b.reason, b.block.where])).toContainEqual(['ZonalAllocationFailure', { zone }]);
    expect(puts(vmName)).toHaveLength(1);
  });

  test('a missing AKSNodeClass blocks the launch visibly, without a VM', async () => {
    const nodeClaim = await createNodeClaim({}, `missing-${suffix}`);
    await announce(nodeClaim);
    const blocked = await eventually(async () => {
      const current = await get(nodeClaim.metadata.name);
      const launched = findCondition(current?.status?.conditions, 'Launched');
      return launched?.status === 'False' ? launched : undefined;
    }, 'Launched=False NodeClassNotFound');
    expect(blocked.reason).toBe('NodeClassNotFound');
    expect(blocked.message).toContain(`missing-${suffix}`);
    expect(puts(vmNameFor(nodeClaim.metadata.name))).toHaveLength(0);
    const events = await eventsAboutNodeClaim(stack, nodeClaim.metadata.name);
    expect(events.map((e) => [e.type, e.reason])).toContainEqual(['Warning', 'NodeClassNotFound']);
    await stack.deps.objects.nodeClaims.delete(nodeClaim.metadata.name);
  });

  test('the sweep launches a NodeClaim whose launch was blocked, once its AKSNodeClass exists, without any event', async () => {
    const lateClass = `late-${suffix}`;
    const nodeClaim = await createNodeClaim({}, lateClass);
    await announce(nodeClaim);
    await eventually(async () => {
      const current = await get(nodeClaim.metadata.name);
      return findCondition(current?.status?.conditions, 'Launched')?.reason === 'NodeClassNotFound'
        ? true
        : undefined;
    }, 'Launched=False NodeClassNotFound');
    await stack.admin.objects.nodeClasses.create(nodeClass(lateClass, 'AzureLinux'));
    // No event announces the new class: the sweep's launch step (after its grace period) is the safety net.
    const created = Date.parse(nodeClaim.metadata.creationTimestamp ?? '');
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, created + LAUNCH_GRACE_MS + 1_000 - Date.now())),
    );
    await stack.host.triggerTimer('lifecycleSweep');
    const launched = await eventually(async () => {
      const current = await get(nodeClaim.metadata.name);
      return current?.status?.providerID ? current : undefined;
    }, 'providerID after the sweep');
    expect(findCondition(launched.status?.conditions, 'Launched')?.reason).toBe('VMProvisioning');
    expect(puts(vmNameFor(nodeClaim.metadata.name))).toHaveLength(1);
    await stack.deps.objects.nodeClaims.delete(nodeClaim.metadata.name);
    await stack.admin.objects.nodeClasses.delete(lateClass);
  });

  test("a NodeClaim nothing fits gets InsufficientCapacity (upstream's InsufficientCapacityError Event) and is deleted", async () => {
    const nodeClaim = await createNodeClaim({ resources: { requests: { cpu: '64' } } });
    const watch = await watchNodeClaim(inject('kubeconfigPath'), nodeClaim.metadata.name);
    try {
      await announce(nodeClaim);
      await eventually(
        async () => ((await get(nodeClaim.metadata.name)) ? undefined : true),
        'NodeClaim deleted',
      );
      const conditions = watch.versions.map((v) => findCondition(v.status?.conditions, 'Launched'));
      expect(conditions).toContainEqual(
        expect.objectContaining({
          status: 'False',
          reason: 'InsufficientCapacity',
          message: expect.stringContaining('cpu 64000m'),
        }),
      );
      expect(puts(vmNameFor(nodeClaim.metadata.name))).toHaveLength(0);
      const events = await eventsAboutNodeClaim(stack, nodeClaim.metadata.name);
      expect(events.map((e) => [e.type, e.involvedObject.kind, e.reason])).toEqual([
        ['Warning', 'NodeClaim', 'InsufficientCapacityError'],
      ]);
    } finally {
      watch.stop();
    }
  });

  test('a NodeClaim deleted while its VM is being created ends with no VM left', async () => {
    const nodeClaim = await createNodeClaim();
    const vmName = vmNameFor(nodeClaim.metadata.name);
    await whileCreating(vmName, async () => {
      await announce(nodeClaim);
      await eventually(async () => (await get(nodeClaim.metadata.name))?.status?.providerID, 'providerID');
      expect(vmOf(vmName)?.provisioningState).toBe('Creating');
      await stack.deps.objects.nodeClaims.delete(nodeClaim.metadata.name);
      await announce(nodeClaim, 'MODIFIED');
      await eventually(
        async () => ((await get(nodeClaim.metadata.name)) ? undefined : true),
        'NodeClaim gone',
        45_000,
      );
    });
    expect(vmOf(vmName)).toBeUndefined();
  });

  test('a malformed message goes to the poison queue with the reason, with no side effects', async () => {
    // Other work may still be going on: a sweep reads ARM, an earlier test's termination may still be
    // deleting its VM. What a message that names no object could wrongly do is create one: no PUT.
    const writes = () => stack.emulator.controls.requests().filter((r) => r.method === 'PUT').length;
    const before = writes();
    await stack.sendRaw(
      '{"specversion":"1.0","id":"x","source":"s","type":"t","time":"now","data":{"kind":"ConfigMap"}}',
    );
    const poison = new QueueClient(
      stack.settings.storage.connectionString ?? '',
      `${stack.queueName}-poison`,
    );
    const message = await eventually(async () => {
      if (!(await poison.exists())) return undefined;
      const peeked = await poison.peekMessages();
      return peeked.peekedMessageItems[0];
    }, 'poisoned message');
    expect(message.messageText).toContain('"kind":"ConfigMap"');
    const reasonLogged = stack.logs.some((l) =>
      JSON.stringify(l.record).includes('data.kind must be one of'),
    );
    expect(reasonLogged).toBe(true);
    expect(writes()).toBe(before);
  });
});
