// `whatIf` against in-memory fakes with the emulator's SKU catalog and the shipped prices: pods get the
// NodeClaims a provisioning window would create (NodePool, instance types, zones, price) or their
// reason for fitting nowhere; a changed AKSNodeClass drifts the NodeClaims stamped with the old hash, in
// the waves of the Drifted budget under either rollout policy; anything but a Pod, a karpenter.sh/v1
// NodePool or an AKSNodeClass is refused naming its index and kind; and nothing is ever written. The
// real control plane's version: test/e2e/what-if-drift.test.ts.
import type { V1Pod } from '@kubernetes/client-node';
import { beforeEach, describe, expect, test } from 'vitest';
import { skuCatalog } from '../../../local/arm-emulator/sku-catalog.js';
import { hashAnnotations } from '../../../shared/decisions/hash.js';
import type { SkuRecord } from '../../../shared/decisions/offerings.js';
import { RolloutAnnotations } from '../../../shared/decisions/rollout.js';
import { renderWhatIf, whatIf, WhatIfInputError } from '../../../shared/lifecycle/explain/what-if.js';
import {
  ConditionTypes,
  WellKnown,
  type AKSNodeClass,
  type NodeClaim,
  type NodePool,
} from '../../../shared/models/index.js';
import { FAKE_NOW, fakeLifecycle, type FakeLifecycle } from '../../support/fake-lifecycle.js';
import { runningPod } from '../../support/consolidation-fixtures.js';
import { nodeClass, nodeClassRef } from '../../support/fixtures.js';

const pool: NodePool = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'general', uid: 'uid-general' },
  spec: {
    disruption: { budgets: [{ nodes: '30%' }], consolidateAfter: 'Never' },
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

function pod(name: string, cpu = '500m'): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'apps' },
    spec: { containers: [{ name: 'app', resources: { requests: { cpu, memory: '256Mi' } } }] },
  };
}

function launchedClaim(name: string, cls: AKSNodeClass): NodeClaim {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name,
      uid: `uid-${name}`,
      labels: {
        [WellKnown.nodePoolLabel]: 'general',
        [WellKnown.instanceTypeLabel]: 'Standard_D2as_v5',
        [WellKnown.capacityTypeLabel]: 'on-demand',
      },
      annotations: hashAnnotations(pool, cls),
    },
    spec: { nodeClassRef: nodeClassRef('default'), requirements: pool.spec.template.spec.requirements },
    status: {
      providerID: `azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/aks-${name}`,
      conditions: [
        {
          type: ConditionTypes.initialized,
          status: 'True',
          reason: 'Initialized',
          message: '',
          lastTransitionTime: FAKE_NOW.toISOString(),
        },
      ],
    },
  };
}

describe('whatIf', () => {
  let fake: FakeLifecycle;
  const live = nodeClass('default', 'Ubuntu2204');
  beforeEach(() => {
    fake = fakeLifecycle();
    fake.skus.push(...(skuCatalog as unknown as SkuRecord[]));
    fake.nodePools.seed(pool);
    fake.nodeClasses.seed(live);
  });

  const nothingWritten = () => {
    expect(fake.nodeClaims.writes).toEqual([]);
    expect(fake.nodePools.writes).toEqual([]);
    expect(fake.nodeClasses.writes).toEqual([]);
    expect(fake.events).toEqual([]);
  };
  /** A launched NodeClaim `general-<i>` of the live class, and its Ready Node with 2 CPUs and 8 GiB. */
  const seedLaunchedNode = (i: number) => {
    const claim = launchedClaim(`general-${i}`, live);
    fake.nodeClaims.seed({ ...claim, status: { ...claim.status, nodeName: `aks-general-${i}` } });
    fake.nodes.seed({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: `aks-general-${i}`, labels: claim.metadata.labels },
      spec: { providerID: claim.status?.providerID },
      status: {
        conditions: [{ type: 'Ready', status: 'True' }],
        allocatable: { cpu: '2', memory: '8Gi', pods: '110' },
      },
    });
  };

  test('pods: the NodeClaim the next window would create, its instance types, zones and price', async () => {
    const answer = await whatIf(fake.deps, [pod('web-1'), pod('web-2')]);

    expect(answer.pods?.launches).toHaveLength(1);
    const [launch] = answer.pods?.launches ?? [];
    expect(launch).toMatchObject({ nodePool: 'general', whatIfPods: ['apps/web-1', 'apps/web-2'] });
    expect(launch?.instanceTypes.length).toBeGreaterThan(0);
    expect(launch?.cheapest?.instanceType).toBe(launch?.instanceTypes[0]);
    expect(launch?.zones.length).toBeGreaterThan(0);
    expect(launch?.pricePerHour).toBeGreaterThan(0);
    expect(answer.pods?.pricePerHour).toEqual({ before: 0, after: launch?.pricePerHour });
    expect(answer.pods?.placements).toEqual([
      { pod: 'apps/web-1', on: 'new', launch: 0 },
      { pod: 'apps/web-2', on: 'new', launch: 0 },
    ]);
    expect(answer.drift).toEqual([]);
    expect(JSON.parse(JSON.stringify(answer))).toEqual(answer);
    nothingWritten();
  });

  test('a pod no instance type can hold is unschedulable, with the reason', async () => {
    const answer = await whatIf(fake.deps, [pod('huge', '5000')]);
    expect(answer.pods?.launches).toEqual([]);
    expect(answer.pods?.placements[0]).toMatchObject({ pod: 'apps/huge', on: 'nowhere' });
    const placement = answer.pods?.placements[0];
    expect(placement?.on === 'nowhere' && placement.reason.length).toBeGreaterThan(0);
    nothingWritten();
  });

  test('a changed AKSNodeClass drifts the 10 nodes: 4 waves at "30%", a canary then 3, 3, 3 by default', async () => {
    for (let i = 0; i < 10; i++) fake.nodeClaims.seed(launchedClaim(`general-${i}`, live));
    const changed = { ...live, spec: { ...live.spec, imageFamily: 'AzureLinux' as const } };

    const answer = await whatIf(fake.deps, [changed]);

    const [drift] = answer.drift;
    expect(drift).toMatchObject({ nodePool: 'general', nodeClass: 'default', policy: 'Canary', judged: 10 });
    expect(drift?.nodes.map((n) => n.reason)).toEqual(Array(10).fill('NodeClassDrifted'));
    expect(drift?.budget).toMatchObject({ perWave: 3, now: 3, total: 10 });
    expect(drift?.plan.kind === 'waves' && drift.plan.waves.map((w) => w.size)).toEqual([1, 3, 3, 3]);
    expect(drift?.replacement?.pricePerHour).toBeGreaterThan(0);
    expect(drift?.pricePerHour.before).toBeGreaterThan(0);
    expect(renderWhatIf(answer)).toContain('waves: 4 (canary 1 + 3 + 3 + 3)');

    const immediate: NodePool = {
      ...pool,
      metadata: { name: 'general', annotations: { [RolloutAnnotations.policy]: 'Immediate' } },
    };
    const [asImmediate] = (await whatIf(fake.deps, [changed, immediate])).drift;
    expect(asImmediate?.plan.kind === 'waves' && asImmediate.plan.waves.map((w) => w.size)).toEqual([
      3, 3, 3, 1,
    ]);
    nothingWritten();
  });

  test('a pod that fits on an existing Node goes there, and nothing launches for it', async () => {
    fake.nodes.seed({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'system-1', labels: { [WellKnown.zoneLabel]: 'westus2-1' } },
      spec: {},
      status: {
        conditions: [{ type: 'Ready', status: 'True' }],
        allocatable: { cpu: '4', memory: '16Gi', pods: '110' },
      },
    });
    const answer = await whatIf(fake.deps, [pod('web-1')]);
    expect(answer.pods?.launches).toEqual([]);
    expect(answer.pods?.placements).toEqual([{ pod: 'apps/web-1', on: 'Node', name: 'system-1' }]);
    expect(answer.pods?.pricePerHour).toEqual({ before: 0, after: 0 });
    nothingWritten();
  });

  test('a paused NodePool under the Canary policy replaces nothing', async () => {
    for (let i = 0; i < 4; i++) fake.nodeClaims.seed(launchedClaim(`general-${i}`, live));
    const paused: NodePool = {
      ...pool,
      metadata: { name: 'general', annotations: { [RolloutAnnotations.paused]: 'true' } },
    };
    const changed = { ...live, spec: { ...live.spec, imageFamily: 'AzureLinux' as const } };
    const [drift] = (await whatIf(fake.deps, [changed, paused])).drift;
    expect(drift?.nodes).toHaveLength(4);
    expect(drift?.plan).toMatchObject({ kind: 'never' });
    nothingWritten();
  });

  test('an unchanged class drifts nothing, and a budget of "0" never replaces', async () => {
    for (let i = 0; i < 4; i++) fake.nodeClaims.seed(launchedClaim(`general-${i}`, live));
    const same = await whatIf(fake.deps, [live]);
    expect(same.drift[0]?.nodes).toEqual([]);
    expect(same.drift[0]?.plan).toEqual({ kind: 'none' });

    const frozen: NodePool = {
      ...pool,
      spec: { ...pool.spec, disruption: { budgets: [{ nodes: '0' }] } },
    };
    const changed = { ...live, spec: { ...live.spec, imageFamily: 'AzureLinux' as const } };
    const [drift] = (await whatIf(fake.deps, [changed, frozen])).drift;
    expect(drift?.nodes).toHaveLength(4);
    expect(drift?.plan.kind).toBe('never');
    nothingWritten();
  });

  test('consolidation under the changed NodePool: empty nodes at its Empty budget', async () => {
    const consolidating: NodePool = {
      ...pool,
      spec: {
        ...pool.spec,
        disruption: {
          budgets: [{ nodes: '1' }],
          consolidateAfter: '0s',
          consolidationPolicy: 'WhenEmptyOrUnderutilized',
        },
      },
    };
    fake.nodePools.seed(consolidating);
    for (let i = 0; i < 3; i++) seedLaunchedNode(i);

    const now = await whatIf(fake.deps, []);
    expect(now.consolidation).toEqual([
      {
        nodePool: 'general',
        method: 'emptiness',
        decision: 'delete',
        nodes: ['general-0'],
        savingsPerHour: null,
      },
    ]);

    const wider: NodePool = {
      ...consolidating,
      spec: {
        ...consolidating.spec,
        disruption: { ...consolidating.spec.disruption, budgets: [{ nodes: '100%' }] },
      },
    };
    const changed = await whatIf(fake.deps, [wider]);
    expect(changed.consolidation[0]).toMatchObject({
      method: 'emptiness',
      nodes: ['general-0', 'general-1', 'general-2'],
    });
    nothingWritten();
    expect(fake.nodes.writes).toEqual([]);
  });

  test('consolidation of underutilized nodes once the changed NodePool allows it', async () => {
    const whenEmpty: NodePool = {
      ...pool,
      spec: {
        ...pool.spec,
        disruption: {
          budgets: [{ nodes: '100%' }],
          consolidateAfter: '0s',
          consolidationPolicy: 'WhenEmpty',
        },
      },
    };
    fake.nodePools.seed(whenEmpty);
    for (let i = 0; i < 2; i++) {
      seedLaunchedNode(i);
      fake.workloads.pods.push(runningPod(`web-${i}`, `aks-general-${i}`, { cpu: '100m', memory: '128Mi' }));
    }

    const now = await whatIf(fake.deps, []);
    expect(now.consolidation).toMatchObject([{ nodePool: 'general', method: 'none' }]);

    const underutilized: NodePool = {
      ...whenEmpty,
      spec: {
        ...whenEmpty.spec,
        disruption: { ...whenEmpty.spec.disruption, consolidationPolicy: 'WhenEmptyOrUnderutilized' },
      },
    };
    const [decided] = (await whatIf(fake.deps, [underutilized])).consolidation;
    expect(decided?.method).toMatch(/^(multi|single)-node-consolidation$/);
    expect(decided && decided.method !== 'none' && decided.nodes.length).toBeGreaterThan(0);
    expect(decided && decided.method !== 'none' && decided.savingsPerHour).toBeGreaterThan(0);
    nothingWritten();
  });

  test('anything else is refused, naming its index and kind', async () => {
    await expect(
      whatIf(fake.deps, [
        pod('ok'),
        { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' } },
      ]),
    ).rejects.toThrow(
      new WhatIfInputError(
        'objects[1] (Deployment apps/v1): only a Pod (v1), a NodePool (karpenter.sh/v1) or an AKSNodeClass (karpenter.azure.com/v1beta1 or karpenter.azure.com/v1alpha2) can be asked about',
      ),
    );
    await expect(whatIf(fake.deps, [{ ...pool, apiVersion: 'karpenter.sh/v1beta1' }])).rejects.toThrow(
      /^objects\[0\] \(NodePool karpenter.sh\/v1beta1\)/,
    );
    await expect(whatIf(fake.deps, ['text'])).rejects.toThrow('objects[0]: not an object');
    await expect(whatIf(fake.deps, [{ apiVersion: 'v1', kind: 'Pod', metadata: {} }])).rejects.toThrow(
      'objects[0]: Pod v1 has no metadata.name',
    );
  });
});
