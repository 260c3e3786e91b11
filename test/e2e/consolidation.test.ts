// Emptiness consolidation and expiration end to end: NodeClaims of a consolidating NodePool launch on the
// ARM emulator and register through the kubelet simulator; a pod bound to one node keeps it, the empty ones
// are deleted no more than the Empty budget at once, a node with a do-not-disrupt pod stays and says why
// in a DisruptionBlocked event, and a NodeClaim past its expireAfter is deleted with no budget at all.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import type { CoreV1Api } from '@kubernetes/client-node';
import { CONSOLIDATABLE_CONDITION } from '../../shared/decisions/consolidation/timing.js';
import { isConditionTrue } from '../../shared/decisions/conditions.js';
import { findNodesForClaim } from '../../shared/decisions/registration.js';
import { resetEventDedupe } from '../../shared/lifecycle/disruption/blocked-events.js';
import type { NodeClaim, NodePool } from '../../shared/models/index.js';
import type { Node } from '../../shared/models/kube.js';
import { exampleRequirements, nodeClass, nodeClassRef } from '../support/fixtures.js';
import { eventually } from '../support/launch-stack.js';
import {
  disruptingNow,
  isInitialized,
  startDisruptionStack,
  type DisruptionStack,
} from '../support/disruption-stack.js';
import { printStackLogOnFailure } from '../support/stack-log-on-failure.js';

vi.hoisted(() => {
  process.env.SWEEP_SCHEDULE = '0 0 0 1 1 *';
});

const suffix = randomUUID().slice(0, 6);
const poolName = `consolidate-${suffix}`;
const className = `consolidate-${suffix}`;
const namespace = 'default';
let env: DisruptionStack;
printStackLogOnFailure(() => env.stack);
let core: CoreV1Api;

function nodePool(): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: poolName },
    spec: {
      disruption: {
        consolidationPolicy: 'WhenEmpty',
        consolidateAfter: '2s',
        budgets: [{ nodes: '1', reasons: ['Empty'] }],
      },
      template: { spec: { nodeClassRef: nodeClassRef(className), requirements: exampleRequirements } },
    },
  };
}

function nodeClaim(name: string, expireAfter?: string): NodeClaim {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: { name, labels: { 'karpenter.sh/nodepool': poolName } },
    spec: {
      nodeClassRef: nodeClassRef(className),
      requirements: exampleRequirements,
      ...(expireAfter ? { expireAfter } : {}),
    },
  };
}

async function bindPod(name: string, nodeName: string, annotations: Record<string, string> = {}) {
  await core.createNamespacedPod({
    namespace,
    body: {
      metadata: { name, namespace, annotations, labels: { test: suffix } },
      spec: { nodeName, containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
    },
  });
}

beforeAll(async () => {
  env = await startDisruptionStack({
    leaseName: `sweep-consolidate-${suffix}`,
    latencies: { createMs: 1_000, deleteMs: 300, retryAfterSeconds: 0.3 },
    env: { CONSOLIDATION_VALIDATION_SECONDS: '1' },
  });
  core = (await env.stack.admin.kube()).core;
  resetEventDedupe();
  await env.stack.admin.objects.nodeClasses.create(nodeClass(className, 'Ubuntu2204'));
  await env.stack.admin.objects.nodePools.create(nodePool());
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

async function setConsolidateAfter(pool: string, consolidateAfter: string) {
  await env.stack.admin.objects.nodePools.mergePatch(pool, { spec: { disruption: { consolidateAfter } } });
}

/**
 * What a wait that timed out saw last: each NodeClaim with its conditions, whether it is deleting, its
 * Node's readiness and taints (a NotReady or tainted Node counts against the budget) and the pods bound to
 * it (any pod, even another test's, makes a node not empty).
 */
async function describeClaims(claims: readonly NodeClaim[], nodes: readonly Node[]): Promise<string> {
  const described: string[] = [];
  for (const c of claims) {
    const conditions = (c.status?.conditions ?? []).map((k) => `${k.type}=${k.status}`).join(' ');
    const node = findNodesForClaim(nodes, c.status?.providerID ?? '')[0];
    const ready = node?.status?.conditions?.find((k) => k.type === 'Ready');
    const taints = (node?.spec.taints ?? []).map((t) => t.key).join(',');
    const pods = node
      ? (await core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node.metadata.name}` })).items
          .map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`)
          .join(',')
      : '';
    const nodeText = node
      ? `node ${node.metadata.name} Ready=${ready?.status ?? '?'}${taints ? ` taints ${taints}` : ''} pods [${pods}]`
      : 'no node';
    described.push(
      `${c.metadata.name} [${conditions}]${c.metadata.deletionTimestamp ? ' deleting' : ''} ${nodeText}`,
    );
  }
  return described.join('; ');
}

/** Rethrows a timed-out wait with what the pool looks like now (read once, not on every poll). */
function withWhatWasSeen(pool: string) {
  return async (error: unknown): Promise<never> => {
    const described = await describeClaims(await env.nodeClaimsOf(pool), await env.nodes()).catch(
      (reason: unknown) => `(could not describe: ${String(reason)})`,
    );
    throw new Error(`${error instanceof Error ? error.message : String(error)}; now: ${described}`);
  };
}

const nodeNameOf = (claims: NodeClaim[], name: string) =>
  claims.find((c) => c.metadata.name === name)?.status?.nodeName;

describe('consolidation and expiration', () => {
  test('empty nodes go one at a time (Empty budget 1); an occupied node and a do-not-disrupt node stay', async () => {
    const names = ['busy', 'protected', 'empty-a', 'empty-b'].map((n) => `${poolName}-${n}`);
    const [busy, protectedName, emptyA, emptyB] = names as [string, string, string, string];
    // Occupy two nodes before consolidation may judge them: the sweeps that launch them stop as soon as
    // both are initialized, and the pods are bound right after (consolidateAfter, 2s, counts from each
    // node's initialization).
    for (const name of [busy, protectedName]) await env.stack.deps.objects.nodeClaims.create(nodeClaim(name));
    const stopLaunching = env.sweepContinuously([poolName], 200);
    const first = await eventually(
      async () => {
        const claims = await env.nodeClaimsOf(poolName);
        return claims.length === 2 && claims.every((c) => isInitialized(c) && c.status?.nodeName)
          ? claims
          : undefined;
      },
      'two initialized NodeClaims with Nodes',
      60_000,
    );
    await stopLaunching();
    await bindPod(`web-${suffix}`, nodeNameOf(first, busy) ?? '');
    await bindPod(`keep-${suffix}`, nodeNameOf(first, protectedName) ?? '', {
      'karpenter.sh/do-not-disrupt': 'true',
    });
    for (const name of [emptyA, emptyB]) await env.stack.deps.objects.nodeClaims.create(nodeClaim(name));

    let maxDisrupting = 0;
    const stop = env.sweepContinuously([poolName], 200);
    try {
      await eventually(
        async () => {
          const [claims, nodes] = await Promise.all([env.nodeClaimsOf(poolName), env.nodes()]);
          const empties = claims.filter((c) => c.metadata.name === emptyA || c.metadata.name === emptyB);
          maxDisrupting = Math.max(maxDisrupting, disruptingNow(empties, nodes).length);
          const left = claims.map((c) => c.metadata.name).sort();
          return left.join() === [busy, protectedName].sort().join() ? true : undefined;
        },
        'both empty NodeClaims consolidated away',
        90_000,
      ).catch(withWhatWasSeen(poolName));
    } finally {
      await stop();
    }
    expect(maxDisrupting).toBe(1);

    const claims = await env.nodeClaimsOf(poolName);
    for (const claim of claims) {
      expect(isConditionTrue(claim.status?.conditions, CONSOLIDATABLE_CONDITION)).toBe(true);
      expect(claim.metadata.deletionTimestamp).toBeUndefined();
    }
    const protectedClaim = claims.find((c) => c.metadata.name === protectedName);
    const events = await core.listNamespacedEvent({
      namespace: 'default',
      fieldSelector: `involvedObject.name=${protectedName}`,
    });
    expect(events.items.map((e) => [e.reason, e.message])).toContainEqual([
      'DisruptionBlocked',
      `Pod ${namespace}/keep-${suffix} has "karpenter.sh/do-not-disrupt" annotation`,
    ]);
    expect(protectedClaim?.status?.lastPodEventTime).toBeDefined();
  }, 180_000);

  test('underutilized: of two nodes with one small pod each, one is deleted (its pod fits on the other)', async () => {
    const pool = `${poolName}-under`;
    await env.stack.admin.objects.nodePools.create({
      ...nodePool(),
      metadata: { name: pool },
      spec: {
        ...nodePool().spec,
        disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '2s' },
      },
    });
    const names = [`${pool}-a`, `${pool}-b`];
    for (const name of names) {
      const claim = nodeClaim(name);
      claim.metadata.labels = { 'karpenter.sh/nodepool': pool };
      await env.stack.deps.objects.nodeClaims.create(claim);
    }
    const launching = env.sweepContinuously([pool], 200);
    const ready = await eventually(
      async () => {
        const claims = await env.nodeClaimsOf(pool);
        return claims.length === 2 && claims.every((c) => isInitialized(c) && c.status?.nodeName)
          ? claims
          : undefined;
      },
      'two initialized NodeClaims',
      60_000,
    );
    await launching();
    for (const claim of ready) {
      await core.createNamespacedPod({
        namespace,
        body: {
          metadata: { name: `small-${claim.metadata.name}`, namespace, labels: { test: suffix } },
          spec: {
            nodeName: claim.status?.nodeName ?? '',
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
    }
    const stop = env.sweepContinuously([pool], 200);
    let left: NodeClaim[] = [];
    try {
      left = await eventually(
        async () => {
          const claims = await env.nodeClaimsOf(pool);
          return claims.length === 1 ? claims : undefined;
        },
        'one NodeClaim consolidated away',
        90_000,
      ).catch(withWhatWasSeen(pool));
    } finally {
      await stop();
    }
    const gone = names.find((n) => n !== left[0]?.metadata.name) ?? '';
    const events = await core.listNamespacedEvent({
      namespace: 'default',
      fieldSelector: `involvedObject.name=${gone}`,
    });
    expect(events.items.map((e) => [e.reason, e.message])).toContainEqual([
      'DisruptionTerminating',
      'Disrupting NodeClaim: Underutilized',
    ]);
    await env.stack.admin.objects.nodePools.delete(pool);
  }, 180_000);

  test('a NodeClaim past its expireAfter is deleted, with no budget', async () => {
    const name = `${poolName}-expiring`;
    // Consolidation off, so only expiration can remove this idle node.
    await setConsolidateAfter(poolName, 'Never');
    await env.stack.deps.objects.nodeClaims.create(nodeClaim(name, '8s'));
    const stop = env.sweepContinuously([poolName], 200);
    try {
      await eventually(
        async () => ((await env.stack.deps.objects.nodeClaims.get(name)) ? undefined : true),
        'expired NodeClaim gone',
        60_000,
      );
    } finally {
      await stop();
    }
    const events = await core.listNamespacedEvent({
      namespace: 'default',
      fieldSelector: `involvedObject.name=${name}`,
    });
    expect(events.items.map((e) => [e.reason, e.message])).toContainEqual([
      'DisruptionTerminating',
      'Disrupting NodeClaim: Expired',
    ]);
  }, 90_000);
});
