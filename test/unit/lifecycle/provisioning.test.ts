// A provisioning window against in-memory fakes with the emulator's SKU catalog and the shipped prices,
// as Karpenter tests its provisioner: the window's provisionable pods get one NodeClaim per node the
// solve needs, named by the window (so a rerun creates nothing more) and each pod a Nominated event
// naming it; a pod that fits on an existing Node or an in-flight NodeClaim is nominated there and no
// NodeClaim is made for it; a pod that fits nowhere gets FailedScheduling saying why. A provisionable pod
// signals the batcher, starting it first when it is not running. Against the real control plane:
// test/integration/provisioning-bad-input.test.ts and test/e2e/.
import type { V1Pod } from '@kubernetes/client-node';
import { beforeEach, describe, expect, test } from 'vitest';
import { skuCatalog } from '../../../local/arm-emulator/sku-catalog.js';
import type { SkuRecord } from '../../../shared/decisions/offerings.js';
import {
  provisionPendingPods,
  ProvisioningEvents,
} from '../../../shared/lifecycle/provisioning/provision.js';
import { signalProvisioning } from '../../../shared/lifecycle/provisioning/signal.js';
import { ProvisioningNames } from '../../../shared/runtime/function-names.js';
import { WellKnown, type NodePool } from '../../../shared/models/karpenter.js';
import {
  FAKE_NOW,
  fakeLifecycle,
  FakeOrchestrations,
  type FakeLifecycle,
} from '../../support/fake-lifecycle.js';
import { nodeClass, nodeClassRef } from '../../support/fixtures.js';

const WINDOW = 'window-1';

const pool: NodePool = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'general', uid: 'uid-general' },
  spec: {
    template: {
      spec: {
        nodeClassRef: nodeClassRef('default'),
        requirements: [
          { key: WellKnown.capacityTypeLabel, operator: 'In', values: ['on-demand'] },
          { key: 'karpenter.azure.com/sku-family', operator: 'In', values: ['D'] },
        ],
      },
    },
  },
};

/** A pod kube-scheduler marked Unschedulable, of a ReplicaSet, requesting `cpu`. */
function pendingPod(name: string, cpu = '500m'): V1Pod {
  return {
    metadata: {
      name,
      namespace: 'apps',
      uid: `uid-${name}`,
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'rs', controller: true },
      ],
    },
    spec: { containers: [{ name: 'app', resources: { requests: { cpu, memory: '256Mi' } } }] },
    status: {
      phase: 'Pending',
      conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }],
    },
  };
}

describe('provisionPendingPods', () => {
  let fake: FakeLifecycle;
  beforeEach(() => {
    fake = fakeLifecycle();
    fake.skus.push(...(skuCatalog as unknown as SkuRecord[]));
    fake.nodePools.seed(pool);
    fake.nodeClasses.seed(nodeClass('default', 'Ubuntu2204'));
  });

  const nominations = () =>
    fake.events
      .filter((e) => e.reason === ProvisioningEvents.nominated)
      .map((e) => [e.target.name, e.message]);

  test('no provisionable pod: nothing is created and nothing said', async () => {
    fake.pods.seed({ ...pendingPod('scheduling'), status: { phase: 'Pending' } });

    expect(await provisionPendingPods(fake.deps, WINDOW)).toMatchObject({
      pods: 0,
      created: [],
      unschedulable: 0,
    });
    expect(fake.nodeClaims.writes).toEqual([]);
    expect(fake.events).toEqual([]);
  });

  test('pending pods get a NodeClaim of the NodePool, and each pod a Nominated event naming it', async () => {
    fake.pods.seed(pendingPod('web-1'));
    fake.pods.seed(pendingPod('web-2'));

    const report = await provisionPendingPods(fake.deps, WINDOW);

    expect(report).toMatchObject({ pods: 2, alreadyCreated: 0, onExisting: 0, unschedulable: 0 });
    expect(report.created).toHaveLength(1);
    expect(report.launchPricePerHour).toBeGreaterThan(0);
    const [created] = await fake.nodeClaims.list();
    expect(created?.metadata.labels?.[WellKnown.nodePoolLabel]).toBe('general');
    expect(created?.spec.nodeClassRef.name).toBe('default');
    expect(nominations()).toEqual([
      ['web-1', `Pod should schedule on: nodeclaim/${report.created[0]}`],
      ['web-2', `Pod should schedule on: nodeclaim/${report.created[0]}`],
    ]);
  });

  test('a second run of the window creates nothing more: the pods go to the NodeClaim in flight', async () => {
    fake.pods.seed(pendingPod('web-1'));
    const first = await provisionPendingPods(fake.deps, WINDOW);

    const second = await provisionPendingPods(fake.deps, WINDOW);

    expect(second).toMatchObject({ created: [], onExisting: 1 });
    expect((await fake.nodeClaims.list()).map((c) => c.metadata.name)).toEqual(first.created);
    expect(nominations()).toEqual([
      ['web-1', `Pod should schedule on: nodeclaim/${first.created[0]}`],
      ['web-1', `Pod should schedule on: nodeclaim/${first.created[0]}`],
    ]);
  });

  test('two runs of the window at once make one NodeClaim: the later create meets AlreadyExists', async () => {
    fake.pods.seed(pendingPod('web-1'));

    const reports = await Promise.all([
      provisionPendingPods(fake.deps, WINDOW),
      provisionPendingPods(fake.deps, WINDOW),
    ]);

    expect(reports.map((r) => [r.created.length, r.alreadyCreated])).toEqual([
      [1, 0],
      [0, 1],
    ]);
    expect(await fake.nodeClaims.list()).toHaveLength(1);
    expect(nominations()).toHaveLength(1);
  });

  test('a pod that fits on an existing Node is nominated there, and no NodeClaim is made', async () => {
    fake.nodes.seed({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: 'aks-roomy',
        labels: {
          [WellKnown.nodePoolLabel]: 'general',
          [WellKnown.instanceTypeLabel]: 'Standard_D4s_v5',
          [WellKnown.capacityTypeLabel]: 'on-demand',
          'kubernetes.io/hostname': 'aks-roomy',
        },
      },
      spec: {},
      status: {
        allocatable: { cpu: '3860m', memory: '12Gi', pods: '110' },
        conditions: [{ type: 'Ready', status: 'True' }],
      },
    });
    fake.pods.seed(pendingPod('web-1'));

    expect(await provisionPendingPods(fake.deps, WINDOW)).toMatchObject({ created: [], onExisting: 1 });
    expect(fake.nodeClaims.writes).toEqual([]);
    expect(nominations()).toEqual([['web-1', 'Pod should schedule on: node/aks-roomy']]);
  });

  test('a pod that fits nowhere gets FailedScheduling saying why, and no NodeClaim', async () => {
    fake.pods.seed(pendingPod('huge', '1000'));

    const report = await provisionPendingPods(fake.deps, WINDOW);
    expect(report).toMatchObject({ created: [], unschedulable: 1 });
    expect(fake.nodeClaims.writes).toEqual([]);
    expect(fake.events).toEqual([
      expect.objectContaining({
        type: 'Warning',
        reason: ProvisioningEvents.failedScheduling,
        target: expect.objectContaining({ kind: 'Pod', name: 'huge', namespace: 'apps' }),
        message: expect.stringMatching(
          /^Failed to schedule pod, .*no instance type has room for the pod \(cpu/,
        ),
      }),
    ]);
    // The window's record says the same, per NodePool, for explain.
    expect(report.recorded).toBe(true);
    const record = fake.decisionRecords.records.at(-1);
    expect(record).toMatchObject({ kind: 'provisioning', id: WINDOW, launches: [] });
    expect(record?.kind === 'provisioning' && record.pods).toEqual([
      expect.objectContaining({
        pod: 'apps/huge',
        excluded: [expect.objectContaining({ cause: 'Resources' })],
      }),
    ]);
  });

  test('MIN_VALUES_POLICY=BestEffort: the NodeClaim is created with minValues relaxed, annotated and counted so', async () => {
    // Three instance types asked for, two of them in the catalog.
    fake.nodePools.seed({
      ...pool,
      spec: {
        template: {
          spec: {
            nodeClassRef: nodeClassRef('default'),
            requirements: [
              {
                key: WellKnown.instanceTypeLabel,
                operator: 'In',
                values: ['Standard_D2s_v5', 'Standard_D4s_v5', 'Standard_Nope_v9'],
                minValues: 3,
              },
            ],
          },
        },
      },
    });
    fake.pods.seed(pendingPod('web-1'));
    const under = (minValuesPolicy: 'Strict' | 'BestEffort') => ({
      ...fake.deps,
      settings: {
        ...fake.deps.settings,
        scheduling: { preferencePolicy: 'Respect' as const, minValuesPolicy },
      },
    });

    const strict = await provisionPendingPods(under('Strict'), WINDOW);
    expect(strict).toMatchObject({ created: [], unschedulable: 1 });

    const relaxed = await provisionPendingPods(under('BestEffort'), WINDOW);
    expect(relaxed.created).toHaveLength(1);
    const [created] = await fake.nodeClaims.list();
    expect(created?.metadata.annotations?.[WellKnown.minValuesRelaxedAnnotation]).toBe('true');
    expect(created?.spec.requirements.find((r) => r.key === WellKnown.instanceTypeLabel)?.minValues).toBe(2);
    expect(
      fake.deps.metrics.count('karpenter_nodeclaims_created_total', { min_values_relaxed: 'true' }),
    ).toBe(1);
    expect(
      fake.deps.metrics.count('karpenter_nodeclaims_created_total', { min_values_relaxed: 'false' }),
    ).toBe(0);
  });
});

describe('signalProvisioning', () => {
  const settings = fakeLifecycle().deps.settings.provisioning;
  const signal = { instanceId: ProvisioningNames.instanceId, eventName: ProvisioningNames.podEvent };
  let orchestrations: FakeOrchestrations;
  beforeEach(() => {
    orchestrations = new FakeOrchestrations();
  });

  test('starts the batcher when it is not running, then signals it', async () => {
    expect(await signalProvisioning(orchestrations, settings)).toBe('started');

    expect(orchestrations.started).toEqual([
      {
        name: ProvisioningNames.orchestrationV2,
        instanceId: ProvisioningNames.instanceId,
        input: { idleMs: settings.batchIdleMs, maxMs: settings.batchMaxMs },
      },
    ]);
    expect(orchestrations.raised).toEqual([signal]);
  });

  test('a running batcher is only signalled', async () => {
    await signalProvisioning(orchestrations, settings);

    expect(await signalProvisioning(orchestrations, settings)).toBe('signalled');
    expect(orchestrations.startCalls).toBe(1);
    expect(orchestrations.raised).toEqual([signal, signal]);
  });

  test('a batcher another handler started meanwhile is signalled, not started twice', async () => {
    orchestrations.beforeStart = (instanceId) =>
      orchestrations.seed(instanceId, ProvisioningNames.orchestrationV2, 'Running');

    expect(await signalProvisioning(orchestrations, settings)).toBe('started');
    expect(orchestrations.started).toEqual([]);
    expect(orchestrations.raised).toEqual([signal]);
  });

  /** A second-version batcher whose window is open and last heard a signal at `lastSignalAt`. */
  function collecting(lastSignalAt: Date): void {
    orchestrations.instances.set(ProvisioningNames.instanceId, {
      instanceId: ProvisioningNames.instanceId,
      name: ProvisioningNames.orchestrationV2,
      runtimeStatus: 'Running',
      customStatus: { state: 'collecting', signals: 3, lastSignalAt: lastSignalAt.toISOString() },
    });
  }

  test('an open window that heard a signal within half its idle time gets none: it will list the pod', async () => {
    collecting(new Date(FAKE_NOW.getTime() - settings.batchIdleMs / 4));

    expect(await signalProvisioning(orchestrations, settings, FAKE_NOW)).toBe('batched');
    expect(orchestrations.raised).toEqual([]);
  });

  test('an open window quiet for half its idle time or more is signalled, so it stays open', async () => {
    collecting(new Date(FAKE_NOW.getTime() - settings.batchIdleMs / 2));

    expect(await signalProvisioning(orchestrations, settings, FAKE_NOW)).toBe('signalled');
    expect(orchestrations.raised).toEqual([signal]);
  });

  test('a first-version batcher between windows is terminated, and the next signal starts the second', async () => {
    orchestrations.instances.set(ProvisioningNames.instanceId, {
      instanceId: ProvisioningNames.instanceId,
      name: ProvisioningNames.orchestration,
      runtimeStatus: 'Running',
      customStatus: { state: 'waiting' },
    });

    expect(await signalProvisioning(orchestrations, settings, FAKE_NOW)).toBe('replacing');
    expect(orchestrations.terminated).toEqual([ProvisioningNames.instanceId]);
    expect(await signalProvisioning(orchestrations, settings, FAKE_NOW)).toBe('started');
    expect(orchestrations.started.map((s) => s.name)).toEqual([ProvisioningNames.orchestrationV2]);
    expect(orchestrations.raised).toEqual([signal]);
  });

  test('a first-version batcher in a window is signalled as before, to finish it', async () => {
    orchestrations.instances.set(ProvisioningNames.instanceId, {
      instanceId: ProvisioningNames.instanceId,
      name: ProvisioningNames.orchestration,
      runtimeStatus: 'Running',
      customStatus: { state: 'collecting', signals: 1 },
    });

    expect(await signalProvisioning(orchestrations, settings, FAKE_NOW)).toBe('signalled');
    expect(orchestrations.terminated).toEqual([]);
    expect(orchestrations.raised).toEqual([signal]);
  });
});
