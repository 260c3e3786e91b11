// Consolidation sees what launch sees, end to end: a node could be replaced by a cheaper instance type, but
// that type's offerings are blocked in the failure memory (the unavailable-offerings table launch reads),
// as after a launch failure. While the block lasts no disruption starts, the node is never tainted or
// marked, and one Unconsolidatable event says why; once the block expires the node is replaced, once.
// The block is written into this file's own unavailable-offerings table, so the test does not depend on
// what another test file left in its memory. Nothing is mocked.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import type { CoreV1Api } from '@kubernetes/client-node';
import { hasDisruptedTaint, isMarkedForDisruption } from '../../shared/decisions/disruption-state.js';
import { findNodesForClaim } from '../../shared/decisions/registration.js';
import { resetEventDedupe, UNCONSOLIDATABLE } from '../../shared/lifecycle/disruption/blocked-events.js';
import type { NodeClaim, NodePool } from '../../shared/models/index.js';
import { nodeClass, nodeClassRef } from '../support/fixtures.js';
import { eventually } from '../support/launch-stack.js';
import { isInitialized, startDisruptionStack, type DisruptionStack } from '../support/disruption-stack.js';
import { printStackLogOnFailure } from '../support/stack-log-on-failure.js';

vi.hoisted(() => {
  process.env.SWEEP_SCHEDULE = '0 0 0 1 1 *';
});

const suffix = randomUUID().slice(0, 6);
const poolName = `blocked-${suffix}`;
const className = `blocked-${suffix}`;
const namespace = 'default';
const expensive = 'Standard_D2s_v5';
const cheaper = 'Standard_D2as_v5';
const BLOCK_SECONDS = 25;
let env: DisruptionStack;
printStackLogOnFailure(() => env.stack);
let core: CoreV1Api;

const requirements = (types: string[]) => [
  { key: 'karpenter.sh/capacity-type', operator: 'In' as const, values: ['on-demand'] },
  { key: 'node.kubernetes.io/instance-type', operator: 'In' as const, values: types },
];

const nodePool: NodePool = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: poolName },
  spec: {
    disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '2s' },
    template: {
      spec: { nodeClassRef: nodeClassRef(className), requirements: requirements([expensive, cheaper]) },
    },
  },
};

beforeAll(async () => {
  env = await startDisruptionStack({
    leaseName: `sweep-blocked-${suffix}`,
    latencies: { createMs: 1_000, deleteMs: 300, retryAfterSeconds: 0.3 },
    env: { CONSOLIDATION_VALIDATION_SECONDS: '1' },
  });
  core = (await env.stack.admin.kube()).core;
  resetEventDedupe();
  await env.stack.admin.objects.nodeClasses.create(nodeClass(className, 'Ubuntu2204'));
  await env.stack.admin.objects.nodePools.create(nodePool);
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

describe('consolidation and the failure memory', () => {
  test('the only cheaper type is blocked: nothing is disrupted, one event says why; after the block, one replacement', async () => {
    const oldName = `${poolName}-old`;
    await env.stack.deps.objects.nodeClaims.create({
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: { name: oldName, labels: { 'karpenter.sh/nodepool': poolName } },
      spec: { nodeClassRef: nodeClassRef(className), requirements: requirements([expensive]) },
    });
    const launching = env.sweepContinuously([poolName], 200);
    const old = await eventually(
      async () => {
        const claim = await env.stack.deps.objects.nodeClaims.get(oldName);
        return claim && isInitialized(claim) && claim.status?.nodeName ? claim : undefined;
      },
      'the expensive NodeClaim initialized with a Node',
      60_000,
    );
    await launching();
    const oldUid = old.metadata.uid;
    await env.stack.deps.azure.unavailable.mark({
      block: { capacityType: 'on-demand', where: 'everywhere', sizes: { vmSize: cheaper } },
      reason: 'SkuNotAvailable',
      message: 'blocked by the test',
      expiresAt: new Date(Date.now() + BLOCK_SECONDS * 1000),
    });
    await core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name: `small-${suffix}`, namespace, labels: { test: suffix } },
        spec: {
          nodeName: old.status?.nodeName ?? '',
          // Only this file's nodes: other files' nodes on the shared control plane could take the pod, and
          // consolidation would then delete the node instead of considering its replacement.
          nodeSelector: { 'karpenter.sh/nodepool': poolName },
          terminationGracePeriodSeconds: 0,
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
    const blockEnds = Date.now() + BLOCK_SECONDS * 1000;

    const seen = new Set<string>();
    let disruptedWhileBlocked: string | undefined;
    const watchPool = async (): Promise<NodeClaim[]> => {
      const [claims, nodes] = await Promise.all([env.nodeClaimsOf(poolName), env.nodes()]);
      for (const c of claims) seen.add(c.metadata.name);
      if (Date.now() < blockEnds - 1_000) {
        for (const c of claims) {
          const tainted = findNodesForClaim(nodes, c.status?.providerID ?? '').some(hasDisruptedTaint);
          if (isMarkedForDisruption(c) || tainted || c.metadata.deletionTimestamp || claims.length > 1) {
            disruptedWhileBlocked ??= `${c.metadata.name}: marked=${isMarkedForDisruption(c)} tainted=${tainted} claims=${claims.length}`;
          }
        }
      }
      return claims;
    };

    const stop = env.sweepContinuously([poolName], 200);
    let replacement: NodeClaim | undefined;
    try {
      // While blocked: wait out the block, watching that nothing is disrupted.
      await eventually(
        async () => {
          await watchPool();
          return Date.now() >= blockEnds ? true : undefined;
        },
        'the block to expire',
        BLOCK_SECONDS * 1000 + 10_000,
      );
      expect(disruptedWhileBlocked).toBeUndefined();
      const events = await core.listNamespacedEvent({
        namespace,
        fieldSelector: `involvedObject.name=${oldName},reason=${UNCONSOLIDATABLE}`,
      });
      const why = events.items.filter((e) => e.involvedObject.uid === oldUid);
      expect(why.map((e) => [e.message, e.count ?? 1])).toEqual([
        [expect.stringContaining(`(${cheaper}) is marked unavailable after recent launch failures`), 1],
      ]);

      // After the block: replaced by the cheaper type, once.
      replacement = await eventually(
        async () => {
          const claims = await watchPool();
          const replacement = claims.find((c) => c.metadata.name !== oldName);
          return !claims.some((c) => c.metadata.name === oldName) && replacement && isInitialized(replacement)
            ? replacement
            : undefined;
        },
        'the old NodeClaim replaced by an initialized cheaper one',
        90_000,
      );
    } finally {
      await stop();
    }
    const replacements = [...seen].filter((n) => n !== oldName);
    expect(replacements).toHaveLength(1);
    expect(replacement?.metadata.labels?.['node.kubernetes.io/instance-type']).toBe(cheaper);
  }, 240_000);
});
