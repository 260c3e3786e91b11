// Azure capacity reservations end to end: a Capacity Reservation Group of 3 × Standard_D4s_v5 in zone 1,
// defined in the ARM emulator and named by CAPACITY_RESERVATION_GROUP_IDS. Four NodeClaims that allow
// reserved and on-demand capacity launch at once: exactly three go into the reservation (their VM PUTs
// name the group, the group's instance view lists their VMs, their Nodes carry the reservation label)
// and the fourth is on-demand. Then one reserved node is deleted, freeing a slot, and consolidation
// replaces the on-demand node with a reserved one. Nothing is mocked; the app reads the group as the
// shipped identity, whose roles the emulator enforces.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import type { CoreV1Api } from '@kubernetes/client-node';
import { LOCAL_SUBSCRIPTION_ID } from '../../local/stack/app-settings.js';
import { reservationIdOf } from '../../shared/cloudprovider/azure/decisions/capacity-reservation-groups.js';
import { vmNameFor } from '../../shared/cloudprovider/azure/decisions/vm-spec.js';
import { resetEventDedupe } from '../../shared/lifecycle/disruption/blocked-events.js';
import type { NodeClaim, NodePool } from '../../shared/models/index.js';
import { WellKnown } from '../../shared/models/karpenter.js';
import { nodeClass, nodeClassRef } from '../support/fixtures.js';
import { eventually } from '../support/launch-stack.js';
import { isInitialized, startDisruptionStack, type DisruptionStack } from '../support/disruption-stack.js';
import { printStackLogOnFailure } from '../support/stack-log-on-failure.js';

vi.hoisted(() => {
  process.env.SWEEP_SCHEDULE = '0 0 0 1 1 *';
});

const suffix = randomUUID().slice(0, 6);
const poolName = `reserved-${suffix}`;
const className = `reserved-${suffix}`;
const namespace = 'default';
const groupName = `crg-${suffix}`;
const groupResourceGroup = `reservations-${suffix}`;
const groupId = `/subscriptions/${LOCAL_SUBSCRIPTION_ID}/resourceGroups/${groupResourceGroup}/providers/Microsoft.Compute/capacityReservationGroups/${groupName}`;
const reservationId = reservationIdOf(groupName, 'd4s-zone1');
let env: DisruptionStack;
printStackLogOnFailure(() => env.stack);
let core: CoreV1Api;

const requirements = [
  { key: WellKnown.capacityTypeLabel, operator: 'In' as const, values: ['reserved', 'on-demand'] },
  { key: WellKnown.instanceTypeLabel, operator: 'In' as const, values: ['Standard_D4s_v5'] },
  { key: WellKnown.zoneLabel, operator: 'In' as const, values: ['westus2-1'] },
];

const nodePool = (budget: string): NodePool => ({
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: poolName },
  spec: {
    disruption: {
      consolidationPolicy: 'WhenEmptyOrUnderutilized',
      consolidateAfter: '2s',
      budgets: [{ nodes: budget }],
    },
    template: { spec: { nodeClassRef: nodeClassRef(className), requirements } },
  },
});

beforeAll(async () => {
  env = await startDisruptionStack({
    leaseName: `sweep-reserved-${suffix}`,
    latencies: { createMs: 1_000, deleteMs: 300, retryAfterSeconds: 0.3 },
    env: { CONSOLIDATION_VALIDATION_SECONDS: '1', CAPACITY_RESERVATION_GROUP_IDS: groupId },
  });
  env.stack.emulator.controls.defineCapacityReservationGroup({
    subscriptionId: LOCAL_SUBSCRIPTION_ID,
    resourceGroup: groupResourceGroup,
    name: groupName,
    location: 'westus2',
    reservations: [{ name: 'd4s-zone1', vmSize: 'Standard_D4s_v5', zone: '1', capacity: 3 }],
  });
  core = (await env.stack.admin.kube()).core;
  resetEventDedupe();
  await env.stack.admin.objects.nodeClasses.create(nodeClass(className, 'Ubuntu2204'));
  // Consolidation held at budget 0 until the second test opens it.
  await env.stack.admin.objects.nodePools.create(nodePool('0'));
});

afterAll(async () => {
  await core?.deleteCollectionNamespacedPod({
    namespace,
    labelSelector: `test=${suffix}`,
    gracePeriodSeconds: 0,
  });
  await env?.stack.admin.objects.nodePools.delete(poolName);
  await env?.stop();
});

const capacityTypeOf = (claim: NodeClaim) => claim.metadata.labels?.[WellKnown.capacityTypeLabel];
const reservationOf = (claim: NodeClaim) => claim.metadata.labels?.[WellKnown.capacityReservationIdLabel];

/** The VMs Azure (the emulator) lists in the reservation, read through the app's own adapter. */
async function allocatedVms(): Promise<string[]> {
  env.stack.deps.azure.reservations.invalidate();
  const records = await env.stack.deps.azure.reservations.records();
  return records.flatMap((r) => r.allocatedVmNames).sort();
}

/** A pod on `nodeName` that no other pod of this file may share a node with, so no two nodes merge. */
async function bindPod(name: string, nodeName: string) {
  await core.createNamespacedPod({
    namespace,
    body: {
      metadata: { name, namespace, labels: { test: suffix } },
      spec: {
        nodeName,
        nodeSelector: { [WellKnown.nodePoolLabel]: poolName },
        terminationGracePeriodSeconds: 0,
        affinity: {
          podAntiAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [
              { labelSelector: { matchLabels: { test: suffix } }, topologyKey: 'kubernetes.io/hostname' },
            ],
          },
        },
        containers: [
          {
            name: 'app',
            image: 'registry.k8s.io/pause:3.10',
            resources: { requests: { cpu: '100m', memory: '64Mi' } },
          },
        ],
      },
    },
  });
}

describe('capacity reservations', () => {
  const names = ['a', 'b', 'c', 'd'].map((n) => `${poolName}-${n}`);

  test('with 3 reserved D4s_v5, four launches at once: three use the reservation, the fourth is on-demand', async () => {
    await Promise.all(
      names.map((name) =>
        env.stack.admin.objects.nodeClaims.create({
          apiVersion: 'karpenter.sh/v1',
          kind: 'NodeClaim',
          metadata: { name, labels: { [WellKnown.nodePoolLabel]: poolName } },
          spec: { nodeClassRef: nodeClassRef(className), requirements },
        }),
      ),
    );
    const stop = env.sweepContinuously([poolName], 200);
    let claims: NodeClaim[];
    try {
      claims = await eventually(
        async () => {
          const all = await env.nodeClaimsOf(poolName);
          return all.length === 4 && all.every((c) => isInitialized(c) && c.status?.nodeName)
            ? all
            : undefined;
        },
        'four NodeClaims initialized with Nodes',
        90_000,
      );
    } finally {
      await stop();
    }
    const reserved = claims.filter((c) => capacityTypeOf(c) === 'reserved');
    const onDemand = claims.filter((c) => capacityTypeOf(c) === 'on-demand');
    expect(reserved).toHaveLength(3);
    expect(onDemand).toHaveLength(1);
    for (const claim of reserved) expect(reservationOf(claim)).toBe(reservationId);
    expect(reservationOf(onDemand[0] as NodeClaim)).toBeUndefined();
    // Azure's view: the three reserved VMs are the ones allocated to the reservation.
    expect(await allocatedVms()).toEqual(reserved.map((c) => vmNameFor(c.metadata.name)).sort());
    // The label reaches the Nodes, as every NodeClaim label does at registration.
    const nodes = await env.nodes();
    for (const claim of reserved) {
      const node = nodes.find((n) => n.metadata.name === claim.status?.nodeName);
      expect(node?.metadata.labels?.[WellKnown.capacityReservationIdLabel]).toBe(reservationId);
      expect(node?.metadata.labels?.[WellKnown.capacityTypeLabel]).toBe('reserved');
    }
  }, 150_000);

  test('a freed reservation slot: consolidation replaces the on-demand node with a reserved one', async () => {
    const claims = await env.nodeClaimsOf(poolName);
    const onDemand = claims.find((c) => capacityTypeOf(c) === 'on-demand');
    const freed = claims.find((c) => capacityTypeOf(c) === 'reserved');
    expect(onDemand && freed).toBeTruthy();
    for (const claim of claims) {
      if (claim !== freed) await bindPod(`pod-${claim.metadata.name}`, claim.status?.nodeName ?? '');
    }
    await env.stack.admin.objects.nodeClaims.delete(freed?.metadata.name ?? '');
    const stop = env.sweepContinuously([poolName], 200);
    let after: NodeClaim[];
    try {
      await eventually(
        async () =>
          (await env.stack.admin.objects.nodeClaims.get(freed?.metadata.name ?? '')) ? undefined : true,
        'the freed reserved NodeClaim gone',
        60_000,
      );
      expect(await allocatedVms()).toHaveLength(2);
      await env.stack.admin.objects.nodePools.mergePatch(poolName, {
        spec: { disruption: { budgets: [{ nodes: '1' }] } },
      });
      after = await eventually(
        async () => {
          const all = await env.nodeClaimsOf(poolName);
          const replaced = !all.some((c) => c.metadata.name === onDemand?.metadata.name);
          return replaced &&
            all.length === 3 &&
            all.every((c) => isInitialized(c) && !c.metadata.deletionTimestamp)
            ? all
            : undefined;
        },
        'the on-demand NodeClaim replaced by an initialized reserved one',
        120_000,
      );
    } finally {
      await stop();
    }
    expect(after.map(capacityTypeOf)).toEqual(['reserved', 'reserved', 'reserved']);
    expect(after.map(reservationOf)).toEqual([reservationId, reservationId, reservationId]);
    expect(await allocatedVms()).toEqual(after.map((c) => vmNameFor(c.metadata.name)).sort());
  }, 240_000);
});
