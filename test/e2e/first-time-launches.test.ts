// Launches that succeed the first time, end to end through the real @azure/arm-compute client: the ARM
// emulator keeps vCPU quota as state and scores placements from the faults it will answer with, and
// launch reads both before its PUT. A family quota with room for 2 of 5 wanted nodes launches 2 there and
// 3 in the next cheapest family, with no PUT refused; spot placement scores Low in zone 1 send a burst of
// spot NodeClaims to zones 2 and 3 with no failed launch; with the scores erroring, launch behaves as it
// did before scores existed (its first choice is zone 1, where the allocation fails). Real
// control plane, Azurite, the function app in the in-process host; nothing mocked.
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, expect, inject, test } from 'vitest';
import { findCondition } from '../../shared/decisions/conditions.js';
import { WellKnown, type NodeClaim } from '../../shared/models/karpenter.js';
import type { NodeSelectorRequirement } from '../../shared/models/kube.js';
import { nodeClass, nodeClassRef, nodePool } from '../support/fixtures.js';
import { eventually, startLaunchStack, watchNodeClaim, type LaunchStack } from '../support/launch-stack.js';

let stack: LaunchStack;
const suffix = randomUUID().slice(0, 6);
const poolName = `first-${suffix}`;
const className = `first-${suffix}`;

beforeAll(async () => {
  stack = await startLaunchStack();
  await stack.admin.objects.nodeClasses.create(nodeClass(className, 'Ubuntu2204'));
  await stack.admin.objects.nodePools.create(nodePool(poolName, className, { budgets: [{ nodes: '10' }] }));
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

afterEach(async () => {
  stack.emulator.controls.clearFaults();
  await stack.clearUnavailableOfferings();
});

const requirements = (sizes: string[], capacityType: 'spot' | 'on-demand'): NodeSelectorRequirement[] => [
  { key: WellKnown.instanceTypeLabel, operator: 'In', values: sizes },
  { key: WellKnown.capacityTypeLabel, operator: 'In', values: [capacityType] },
  { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
  { key: 'kubernetes.io/os', operator: 'In', values: ['linux'] },
];

/** `count` NodeClaims created together and announced together, as a provisioning window makes them. */
async function burst(
  tag: string,
  count: number,
  reqs: NodeSelectorRequirement[],
  names = Array.from({ length: count }, (_, i) => `${poolName}-${tag}-${i}-${randomUUID().slice(0, 4)}`),
): Promise<string[]> {
  const created = await Promise.all(
    names.map((name) =>
      stack.deps.objects.nodeClaims.create({
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodeClaim',
        metadata: {
          name,
          labels: { [WellKnown.nodePoolLabel]: poolName, [stack.runLabel.key]: stack.runLabel.value },
        },
        spec: { nodeClassRef: nodeClassRef(className), requirements: reqs },
      }),
    ),
  );
  await Promise.all(
    created.map((c) =>
      stack.publish({
        kind: 'NodeClaim',
        name: c.metadata.name,
        uid: c.metadata.uid ?? '',
        resourceVersion: c.metadata.resourceVersion ?? '1',
      }),
    ),
  );
  return created.map((c) => c.metadata.name);
}

async function launched(names: readonly string[]): Promise<NodeClaim[]> {
  return eventually(
    async () => {
      const claims = await Promise.all(names.map((name) => stack.deps.objects.nodeClaims.get(name)));
      const done = claims.filter(
        (c): c is NodeClaim => findCondition(c?.status?.conditions, 'Launched')?.status === 'True',
      );
      return done.length === names.length ? done : undefined;
    },
    `${names.length} NodeClaims Launched=True`,
    90_000,
  );
}

/** The VM PUTs of these NodeClaims that Azure refused (a 4xx/5xx answer). */
function refusedPuts(claims: readonly NodeClaim[]) {
  const vmNames = new Set(claims.map((c) => c.status?.providerID?.split('/').pop() ?? ''));
  return stack.emulator.controls
    .requests({ kind: 'putVm', method: 'PUT' })
    .filter((r) => r.vmName !== undefined && vmNames.has(r.vmName) && r.status >= 400);
}

const count = (claims: readonly NodeClaim[], label: string) =>
  claims.reduce<Record<string, number>>((counts, c) => {
    const value = c.metadata.labels?.[label] ?? '?';
    counts[value] = (counts[value] ?? 0) + 1;
    return counts;
  }, {});

test('a family quota with room for 2 of 5 wanted nodes: 2 there, 3 in the next cheapest family, no PUT refused', async () => {
  // Standard_D2as_v5 (standardDASv5Family) is the cheaper of the two; its family has room for 2 × 2 vCPUs.
  stack.emulator.controls.setQuotaLimit({ name: 'standardDASv5Family', limit: 4 });
  try {
    const names = await burst('quota', 5, requirements(['Standard_D2as_v5', 'Standard_D2s_v5'], 'on-demand'));
    const claims = await launched(names);
    expect(count(claims, WellKnown.instanceTypeLabel)).toEqual({ Standard_D2as_v5: 2, Standard_D2s_v5: 3 });
    expect(refusedPuts(claims)).toEqual([]);
    expect(stack.emulator.controls.requests({ kind: 'listUsages' }).length).toBeGreaterThan(0);
  } finally {
    stack.emulator.controls.setQuotaLimit({ name: 'standardDASv5Family', limit: 10_000 });
  }
}, 180_000);

test('spot scores Low in zone 1: the burst goes to zones 2 and 3, no launch fails', async () => {
  stack.emulator.controls.injectFault({
    match: { vmSize: 'Standard_D4as_v5', zone: '1', priority: 'Spot' },
    effect: { type: 'ZonalAllocationFailed' },
  });
  const names = await burst('spot', 5, requirements(['Standard_D4as_v5'], 'spot'));
  const claims = await launched(names);
  const zones = count(claims, WellKnown.zoneLabel);
  expect(zones['westus2-1']).toBeUndefined();
  expect((zones['westus2-2'] ?? 0) + (zones['westus2-3'] ?? 0)).toBe(5);
  expect(refusedPuts(claims)).toEqual([]);
  // No creation ended in the fault: no VM was ever put in zone 1.
  expect(
    stack.emulator.controls.requests({ kind: 'putVm', method: 'PUT' }).filter((r) => r.status >= 400),
  ).toEqual([]);
  expect(stack.emulator.controls.requests({ kind: 'spotPlacementScores' }).length).toBeGreaterThan(0);
}, 180_000);

test('with the scores erroring, launch chooses as it did before scores: zone 1 first, where it fails', async () => {
  // Another size, so no score of the test before is cached.
  stack.emulator.controls.injectFault({
    match: { vmSize: 'Standard_D8as_v5', zone: '1', priority: 'Spot' },
    effect: { type: 'ZonalAllocationFailed' },
  });
  stack.emulator.controls.injectFault({
    effect: { type: 'requestError', requestKind: 'spotPlacementScores', status: 500 },
  });
  // The failed NodeClaim is terminated within moments: every version of it is recorded through a watch.
  const name = `${poolName}-unscored-${randomUUID().slice(0, 4)}`;
  const watched = await watchNodeClaim(inject('kubeconfigPath'), name);
  try {
    await burst('unscored', 1, requirements(['Standard_D8as_v5'], 'spot'), [name]);
    const failed = await eventually(
      () => watched.versions.find((v) => findCondition(v.status?.conditions, 'Launched')?.status === 'False'),
      'the unscored launch failed in zone 1',
      90_000,
    );
    expect(failed.metadata.labels?.[WellKnown.zoneLabel]).toBe('westus2-1');
    expect(findCondition(failed.status?.conditions, 'Launched')?.reason).toBe('ZonalAllocationFailure');
  } finally {
    watched.stop();
  }
}, 180_000);
