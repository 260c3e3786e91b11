// NodePool and AKSNodeClass status written to the real API server, as `kubectl get nodepools,aksnodeclasses`
// reads it (the CRDs' printer columns: NODES and READY). Images are resolved through the ARM emulator's
// community gallery with the real @azure/arm-compute client.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { reconcileNodeClassStatus } from '../../shared/lifecycle/status/nodeclass-status.js';
import { reconcileNodePoolStatus } from '../../shared/lifecycle/status/nodepool-status.js';
import type { AKSNodeClass, NodeClaim, NodePool } from '../../shared/models/index.js';
import { exampleRequirements, nodeClass, nodeClassRef, nodePool } from '../support/fixtures.js';
import { startLaunchStack, type LaunchStack } from '../support/launch-stack.js';

let stack: LaunchStack;
const suffix = randomUUID().slice(0, 6);
const className = `status-${suffix}`;
const poolName = `status-${suffix}`;

beforeAll(async () => {
  stack = await startLaunchStack();
  await stack.admin.objects.nodeClasses.create(nodeClass(className, 'Ubuntu2204'));
  await stack.admin.objects.nodePools.create(nodePool(poolName, className));
});

afterAll(async () => {
  for (const name of [`${poolName}-a`, `${poolName}-b`]) await stack.deps.objects.nodeClaims.delete(name);
  await stack.admin.objects.nodePools.delete(poolName);
  await stack.admin.objects.nodeClasses.delete(className);
  await stack.stop();
});

async function nodeClaimWithCapacity(name: string, capacity: Record<string, string>): Promise<NodeClaim> {
  const created = await stack.deps.objects.nodeClaims.create({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name,
      labels: { 'karpenter.sh/nodepool': poolName, [stack.runLabel.key]: stack.runLabel.value },
    },
    spec: { nodeClassRef: nodeClassRef(className), requirements: exampleRequirements },
  } as NodeClaim);
  return stack.deps.objects.nodeClaims.mergePatchStatus(created.metadata.name, { status: { capacity } });
}

describe('NodePool and AKSNodeClass status', () => {
  test('the class resolves its images and turns Ready; the pool counts its nodes and turns Ready', async () => {
    const cls = (await stack.deps.objects.nodeClasses.get(className)) as AKSNodeClass;
    const classResult = await reconcileNodeClassStatus(stack.deps, cls);
    expect(classResult.written).toBe(true);
    const storedClass = (await stack.deps.objects.nodeClasses.get(className)) as AKSNodeClass;
    expect(storedClass.status?.images?.[0]?.id).toMatch(
      /^\/CommunityGalleries\/.+\/images\/2204gen2containerd\/versions\//,
    );
    expect(storedClass.status?.kubernetesVersion).toBe(
      stack.settings.cluster.kubernetesVersion.replace(/^v/, ''),
    );
    expect(storedClass.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    // A second pass with nothing new writes nothing.
    expect((await reconcileNodeClassStatus(stack.deps, storedClass)).written).toBe(false);

    const a = await nodeClaimWithCapacity(`${poolName}-a`, { cpu: '2', memory: '8Gi', pods: '110' });
    const b = await nodeClaimWithCapacity(`${poolName}-b`, { cpu: '4', memory: '16Gi', pods: '110' });
    // ValidationSucceeded comes from the budget validation; here the pool's budgets are valid.
    const pool = (await stack.deps.objects.nodePools.get(poolName)) as NodePool;
    const validated = await stack.deps.objects.nodePools.mergePatchStatus(poolName, {
      status: {
        conditions: [
          {
            type: 'ValidationSucceeded',
            status: 'True',
            reason: 'ValidationSucceeded',
            message: '',
            lastTransitionTime: new Date().toISOString(),
          },
        ],
      },
      metadata: { resourceVersion: pool.metadata.resourceVersion },
    });
    const poolResult = await reconcileNodePoolStatus(
      stack.deps,
      validated,
      { nodeClaims: [a, b], nodesOf: () => [] },
      storedClass,
    );
    expect(poolResult.written).toBe(true);
    const stored = (await stack.deps.objects.nodePools.get(poolName)) as NodePool;
    expect(stored.status?.nodes).toBe(2);
    expect(stored.status?.resources).toMatchObject({
      cpu: '6',
      memory: '25165824Ki',
      pods: '220',
      nodes: '2',
    });
    const byType = new Map((stored.status?.conditions ?? []).map((c) => [c.type, c]));
    expect(byType.get('NodeClassReady')?.status).toBe('True');
    expect(byType.get('Ready')?.status).toBe('True');
    expect(byType.get('ValidationSucceeded')?.status).toBe('True');
  });

  test('a pool whose class is gone is not Ready, with the reason Karpenter gives', async () => {
    const pool = (await stack.deps.objects.nodePools.get(poolName)) as NodePool;
    await reconcileNodePoolStatus(stack.deps, pool, { nodeClaims: [], nodesOf: () => [] }, undefined);
    const stored = (await stack.deps.objects.nodePools.get(poolName)) as NodePool;
    expect(stored.status?.nodes).toBe(0);
    const byType = new Map((stored.status?.conditions ?? []).map((c) => [c.type, c]));
    expect(byType.get('NodeClassReady')).toMatchObject({ status: 'False', reason: 'NodeClassNotFound' });
    expect(byType.get('Ready')).toMatchObject({ status: 'False', reason: 'UnhealthyDependents' });
  });
});
