// Disruption budgets, drain and failed replacements end to end: each case drifts a static NodePool and
// looks at what the sweep starts and what the cluster does. Real control plane (its disruption controller
// computes the PodDisruptionBudget's status), Azurite, ARM emulator through the real SDK, kubelet
// simulator, which also runs the one pod the drain case needs (Running and Ready, as kubelet reports it).
import { randomUUID } from 'node:crypto';
import { CoreV1Api, KubeConfig, PatchStrategy, PolicyV1Api, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, test, vi } from 'vitest';
import { findCondition } from '../../shared/decisions/conditions.js';
import { DisruptionAnnotations } from '../../shared/decisions/disruption-state.js';
import { collectOrphanVms } from '../../shared/lifecycle/garbage-collection/garbage-collection.js';
import type { Budget, NodeClaim } from '../../shared/models/karpenter.js';
import { nodeClass } from '../support/fixtures.js';
import { eventually } from '../support/launch-stack.js';
import {
  disruptingNow,
  isInitialized,
  startDisruptionStack,
  staticNodePool,
  type DisruptionStack,
} from '../support/disruption-stack.js';
import { printStackLogOnFailure } from '../support/stack-log-on-failure.js';

vi.hoisted(() => {
  process.env.SWEEP_SCHEDULE = '0 0 0 1 1 *';
});

const suffix = randomUUID().slice(0, 6);
let env: DisruptionStack;
printStackLogOnFailure(() => env.stack);
let core: CoreV1Api;
let policy: PolicyV1Api;
const pools: string[] = [];

beforeAll(async () => {
  env = await startDisruptionStack({
    leaseName: `sweep-budgets-${suffix}`,
    latencies: { createMs: 1_500, deleteMs: 300, retryAfterSeconds: 0.3 },
    // What the budgets allow at once, without a rollout's canary and waves (test/e2e/rollout.test.ts).
    env: { ORPHAN_VM_GRACE_MINUTES: '0', ROLLOUT_POLICY: 'Immediate' },
  });
  const config = new KubeConfig();
  config.loadFromFile(inject('kubeconfigPath'));
  core = config.makeApiClient(CoreV1Api);
  policy = config.makeApiClient(PolicyV1Api);
});

afterAll(async () => {
  for (const pool of pools) await env?.stack.admin.objects.nodePools.delete(pool);
  await env?.stop();
});

/** A static pool of `replicas` initialized nodes on Ubuntu2204. */
async function readyPool(
  name: string,
  replicas: number,
  budgets: Budget[],
  terminationGracePeriod?: string,
): Promise<NodeClaim[]> {
  pools.push(name);
  await env.stack.admin.objects.nodeClasses.create(nodeClass(name, 'Ubuntu2204'));
  const nodePool = staticNodePool(name, name, replicas, budgets);
  if (terminationGracePeriod) nodePool.spec.template.spec.terminationGracePeriod = terminationGracePeriod;
  await env.stack.admin.objects.nodePools.create(nodePool);
  const stop = env.sweepContinuously([name]);
  try {
    return await eventually(
      async () => {
        const claims = await env.nodeClaimsOf(name);
        return claims.length === replicas && claims.every(isInitialized) ? claims : undefined;
      },
      `${replicas} initialized NodeClaims in ${name}`,
      60_000,
    );
  } finally {
    await stop();
  }
}

const drift = (name: string) =>
  env.stack.admin.objects.nodeClasses.mergePatch(name, { spec: { imageFamily: 'AzureLinux' } });
const setBudgets = (name: string, budgets: Budget[]) =>
  env.stack.admin.objects.nodePools.mergePatch(name, { spec: { disruption: { budgets } } });

async function startedBy(name: string): Promise<number> {
  const result = await env.sweep([name]);
  if (result.status === 'skipped') throw new Error('sweep skipped');
  const step = result.steps.find((s) => s.step === 'disruption');
  expect(step?.failed).toBe(0);
  return step?.acted ?? -1;
}

/** Sweeps until no NodeClaim of the pool is disrupting and `replicas` are initialized. */
async function settle(name: string, replicas: number, original: ReadonlySet<string>, remaining: number) {
  const stop = env.sweepContinuously([name], 200);
  try {
    await eventually(
      async () => {
        const [claims, nodes] = await Promise.all([env.nodeClaimsOf(name), env.nodes()]);
        const old = claims.filter((c) => original.has(c.metadata.name));
        return claims.length === replicas &&
          claims.every(isInitialized) &&
          old.length === remaining &&
          disruptingNow(claims, nodes).length === 0
          ? true
          : undefined;
      },
      `${name} settled with ${remaining} old NodeClaims`,
      60_000,
    );
  } finally {
    await stop();
  }
}

/** A UTC daily cron that fired `minutesAgo` minutes ago. */
function dailyCronStarted(minutesAgo: number): string {
  const at = new Date(Date.now() - minutesAgo * 60_000);
  return `${at.getUTCMinutes()} ${at.getUTCHours()} * * *`;
}

/**
 * A pod on `nodeName` behind a PodDisruptionBudget that allows no disruption, once the simulator runs it
 * (Running and Ready) and the disruption controller has computed the budget's status.
 */
async function guardedPod(nodeName: string, podName: string): Promise<void> {
  const labels = { app: podName };
  await core.createNamespacedPod({
    namespace: 'default',
    body: {
      metadata: { name: podName, labels },
      spec: {
        nodeName,
        terminationGracePeriodSeconds: 0,
        containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }],
      },
    },
  });
  await policy.createNamespacedPodDisruptionBudget({
    namespace: 'default',
    // An integer minAvailable needs no controller behind the pod (maxUnavailable would).
    body: { metadata: { name: podName }, spec: { minAvailable: 1, selector: { matchLabels: labels } } },
  });
  await eventually(async () => {
    const pdb = await policy.readNamespacedPodDisruptionBudget({ name: podName, namespace: 'default' });
    return pdb.status?.currentHealthy === 1 && pdb.status.disruptionsAllowed === 0 ? true : undefined;
  }, 'PDB status computed by the disruption controller');
}

describe('disruption budgets', () => {
  test('"0", reasons [Drifted], active and inactive schedules, percentages, other reasons, invalid budgets', async () => {
    const name = `budgets-${suffix}`;
    const original = new Set((await readyPool(name, 4, [{ nodes: '0' }])).map((c) => c.metadata.name));
    await drift(name);

    // Budgets that allow nothing for Drifted.
    expect(await startedBy(name)).toBe(0);
    await setBudgets(name, [{ nodes: '0', reasons: ['Drifted'] }, { nodes: '100%' }]);
    expect(await startedBy(name)).toBe(0);
    await setBudgets(name, [{ nodes: '3' }, { nodes: '0', schedule: dailyCronStarted(10), duration: '1h' }]);
    expect(await startedBy(name)).toBe(0);
    const drifted = await env.nodeClaimsOf(name);
    expect(drifted.every((c) => findCondition(c.status?.conditions, 'Drifted')?.status === 'True')).toBe(
      true,
    );

    // An invalid cron that got past the CRD: reported on the NodePool, allows 0, the sweep carries on.
    await setBudgets(name, [{ nodes: '5', schedule: '61 * * * *', duration: '1h' }]);
    expect(await startedBy(name)).toBe(0);
    const pool = await env.stack.deps.objects.nodePools.get(name);
    const validation = findCondition(pool?.status?.conditions, 'ValidationSucceeded');
    expect(validation).toMatchObject({ status: 'False', reason: 'InvalidDisruptionBudget' });
    expect(validation?.message).toContain('spec.disruption.budgets[0].schedule');
    const events = await core.listNamespacedEvent({
      namespace: 'default',
      fieldSelector: `involvedObject.name=${name},involvedObject.kind=NodePool`,
    });
    expect(events.items.map((e) => `${e.type}/${e.reason}: ${e.message}`)).toContainEqual(
      expect.stringMatching(/^Warning\/InvalidDisruptionBudget: spec\.disruption\.budgets\[0\]\.schedule/),
    );

    // 30% of 4 initialized nodes is 1.2, rounded up: 2 at once.
    await setBudgets(name, [{ nodes: '30%' }]);
    expect(await startedBy(name)).toBe(2);
    // Hold the rest back, so each case starts from a settled pool; replacements in flight carry on.
    await setBudgets(name, [{ nodes: '0' }]);
    const fixed = await env.stack.deps.objects.nodePools.get(name);
    expect(findCondition(fixed?.status?.conditions, 'ValidationSucceeded')?.status).toBe('True');
    await settle(name, 4, original, 2);

    // A scheduled budget outside its window is unbounded: only the always-active "1" limits.
    await setBudgets(name, [{ nodes: '1' }, { nodes: '0', schedule: dailyCronStarted(180), duration: '1h' }]);
    expect(await startedBy(name)).toBe(1);
    await setBudgets(name, [{ nodes: '0' }]);
    await settle(name, 4, original, 1);

    // A budget for other reasons does not limit drift.
    await setBudgets(name, [{ nodes: '0', reasons: ['Underutilized', 'Empty'] }]);
    expect(await startedBy(name)).toBe(1);
    await settle(name, 4, original, 0);
  }, 240_000);
});

describe('drain', () => {
  test('a PodDisruptionBudget allowing 0 disruptions holds the drain until it allows one', async () => {
    const name = `pdb-${suffix}`;
    // Drift takes a node whose PDB allows no eviction only when a terminationGracePeriod ends the wait
    // (upstream's eventual disruption); ten minutes is far beyond this test, so the PDB alone holds.
    const [old] = await readyPool(name, 1, [{ nodes: '1' }], '10m');
    if (!old?.status?.nodeName) throw new Error('no node');
    const podName = `guarded-${suffix}`;
    await guardedPod(old.status.nodeName, podName);

    await drift(name);
    const stop = env.sweepContinuously([name], 200);
    try {
      // The replacement comes up and the old NodeClaim is deleted; its drain is refused by the PDB.
      await eventually(
        () =>
          env.stack.logs.filter(
            (l) => l.record.message === 'draining' && l.record.nodeClaim === old.metadata.name,
          ).length >= 5
            ? true
            : undefined,
        'five refused drain passes',
        60_000,
      );
      const pod = await core.readNamespacedPod({ name: podName, namespace: 'default' });
      expect(pod.metadata?.deletionTimestamp).toBeUndefined();
      const held = await env.stack.deps.objects.nodeClaims.get(old.metadata.name);
      expect(held?.metadata.deletionTimestamp).toBeTruthy();
      const blocked = env.stack.logs.filter(
        (l) => l.record.message === 'draining' && l.record.nodeClaim === old.metadata.name,
      );
      expect(blocked.every((l) => l.record.blockedByPdb === 1)).toBe(true);
      expect(env.stack.emulator.controls.vms().some((vm) => vm.name === `aks-${old.metadata.name}`)).toBe(
        true,
      );

      await policy.patchNamespacedPodDisruptionBudget(
        { name: podName, namespace: 'default', body: { spec: { minAvailable: 0 } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      await eventually(
        async () => ((await env.stack.deps.objects.nodeClaims.get(old.metadata.name)) ? undefined : true),
        'old NodeClaim terminated once the PDB allows it',
        60_000,
      );
      await expect(core.readNamespacedPod({ name: podName, namespace: 'default' })).rejects.toMatchObject({
        code: 404,
      });
    } finally {
      await stop();
      await policy.deleteNamespacedPodDisruptionBudget({ name: podName, namespace: 'default' });
    }
  }, 180_000);
});

describe('drain deadline', () => {
  test('after terminationGracePeriod a pod the PDB still protects is deleted and the node terminates', async () => {
    const name = `tgp-${suffix}`;
    // Long enough that the drain's first pass (after the termination starts and a poll) comes well
    // within it on a loaded machine: that pass must find the PDB refusing.
    const gracePeriodSeconds = 15;
    const [old] = await readyPool(name, 1, [{ nodes: '1' }], `${gracePeriodSeconds}s`);
    if (!old?.status?.nodeName) throw new Error('no node');
    const podName = `deadline-${suffix}`;
    await guardedPod(old.status.nodeName, podName);
    await drift(name);
    const stop = env.sweepContinuously([name], 200);
    try {
      const deleting = await eventually(
        async () => {
          const current = await env.stack.deps.objects.nodeClaims.get(old.metadata.name);
          return current?.metadata.deletionTimestamp ? current : undefined;
        },
        'old NodeClaim deleted after its replacement initialized',
        60_000,
      );
      await eventually(
        async () => ((await env.stack.deps.objects.nodeClaims.get(old.metadata.name)) ? undefined : true),
        'old NodeClaim terminated once its grace period ran out',
        60_000,
      );
      const passes = env.stack.logs.filter(
        (l) => l.record.message === 'draining' && l.record.nodeClaim === old.metadata.name,
      );
      // Refused while the grace period ran, then deleted rather than evicted.
      expect(passes.some((l) => l.record.blockedByPdb === 1)).toBe(true);
      expect(passes.some((l) => l.record.deleted === 1)).toBe(true);
      const firstDelete = passes.find((l) => l.record.deleted === 1);
      expect(Date.parse(String(firstDelete?.record.time))).toBeGreaterThanOrEqual(
        Date.parse(deleting.metadata.deletionTimestamp ?? '') + gracePeriodSeconds * 1000,
      );
      await expect(core.readNamespacedPod({ name: podName, namespace: 'default' })).rejects.toMatchObject({
        code: 404,
      });
    } finally {
      await stop();
      await policy.deleteNamespacedPodDisruptionBudget({ name: podName, namespace: 'default' });
    }
  }, 180_000);
});

describe('failed replacement', () => {
  test('a replacement that fails to launch releases its slot and leaves the old node untainted and serving', async () => {
    const name = `fail-${suffix}`;
    const [old] = await readyPool(name, 1, [{ nodes: '1' }]);
    if (!old) throw new Error('no NodeClaim');
    env.stack.emulator.controls.injectFault({
      match: { vmName: `aks-${name}-*` },
      effect: { type: 'AllocationFailed' },
      times: 1,
    });
    await drift(name);
    expect(await startedBy(name)).toBe(1);
    const stop = env.sweepContinuously([name], 200);
    try {
      const released = await eventually(
        async () => {
          const current = await env.stack.deps.objects.nodeClaims.get(old.metadata.name);
          return current?.metadata.annotations?.[DisruptionAnnotations.replacementAttempts] === '1' &&
            !findCondition(current.status?.conditions, 'DisruptionReason')
            ? current
            : undefined;
        },
        'the failed attempt recorded and the mark removed',
        60_000,
      );
      expect(released.metadata.deletionTimestamp).toBeUndefined();
      expect(
        Date.parse(released.metadata.annotations?.[DisruptionAnnotations.replacementBackoffUntil] ?? ''),
      ).toBeGreaterThan(Date.now());
      // The failed replacement is terminated (its VM deleted) and goes away; the old node stays alone.
      const claims = await eventually(async () => {
        const current = await env.nodeClaimsOf(name);
        return current.length === 1 ? current : undefined;
      }, 'the failed replacement gone');
      expect(claims.map((c) => c.metadata.name)).toEqual([old.metadata.name]);
      const nodes = await env.nodes();
      expect(disruptingNow(claims, nodes)).toHaveLength(0);
      const node = nodes.find((n) => n.metadata.name === old.status?.nodeName);
      expect(node?.spec.taints?.some((t) => t.key === 'karpenter.sh/disrupted')).toBeFalsy();
      expect(node?.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
      const events = await core.listNamespacedEvent({
        namespace: 'default',
        fieldSelector: `involvedObject.name=${old.metadata.name}`,
      });
      expect(events.items.map((e) => e.reason)).toContain('DisruptionReplacementFailed');
    } finally {
      await stop();
    }
  }, 180_000);
});

describe('garbage collection', () => {
  test('a VM tagged for this cluster whose NodeClaim is gone is deleted; VMs with NodeClaims are kept', async () => {
    const name = `gc-${suffix}`;
    const [claim] = await readyPool(name, 1, [{ nodes: '0' }]);
    if (!claim) throw new Error('no NodeClaim');
    const vmName = `aks-${claim.metadata.name}`;
    // The NodeClaim disappears without termination (its finalizer removed by hand), leaving its VM.
    await env.stack.admin.objects.nodePools.mergePatch(name, { spec: { replicas: 0 } });
    await env.stack.deps.objects.nodeClaims.mergePatch(claim.metadata.name, {
      metadata: { finalizers: null },
    });
    await env.stack.deps.objects.nodeClaims.delete(claim.metadata.name);
    expect(env.stack.emulator.controls.vms().find((vm) => vm.name === vmName)?.provisioningState).toBe(
      'Succeeded',
    );
    const others = env.stack.emulator.controls.vms().filter((vm) => vm.name !== vmName).length;

    const result = await collectOrphanVms(env.stack.deps);
    expect(result.deleted).toEqual([{ vmName, nodeClaim: claim.metadata.name }]);
    expect(
      env.stack.logs.some(
        (l) =>
          l.record.message === 'orphan VM deleted: its NodeClaim no longer exists' &&
          l.record.vmName === vmName,
      ),
    ).toBe(true);
    await eventually(
      () => (env.stack.emulator.controls.vms().some((vm) => vm.name === vmName) ? undefined : true),
      'orphan VM gone',
    );
    expect(env.stack.emulator.controls.vms().filter((vm) => vm.name !== vmName)).toHaveLength(others);
  }, 120_000);
});

describe('static NodePools', () => {
  test('lowering replicas removes the newest NodeClaim through termination; raising it launches one', async () => {
    const name = `static-${suffix}`;
    const claims = await readyPool(name, 2, [{ nodes: '0' }]);
    const newest = [...claims].sort((a, b) =>
      (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? ''),
    )[0];
    await env.stack.admin.objects.nodePools.mergePatch(name, {
      spec: { replicas: 1, limits: { nodes: '2' } },
    });
    const stop = env.sweepContinuously([name], 200);
    try {
      const remaining = await eventually(
        async () => {
          const current = await env.nodeClaimsOf(name);
          return current.length === 1 ? current : undefined;
        },
        'one NodeClaim left',
        60_000,
      );
      expect(remaining).toHaveLength(1);
      if (claims[0]?.metadata.creationTimestamp !== claims[1]?.metadata.creationTimestamp) {
        expect(remaining[0]?.metadata.name).not.toBe(newest?.metadata.name);
      }
      await eventually(
        () =>
          env.stack.emulator.controls.vms().filter((vm) => vm.name.startsWith(`aks-${name}-`)).length === 1
            ? true
            : undefined,
        "the removed NodeClaim's VM deleted",
      );
      await env.stack.admin.objects.nodePools.mergePatch(name, { spec: { replicas: 3 } });
      // limits.nodes = 2 caps the pool below its 3 replicas.
      await eventually(
        async () => {
          const current = await env.nodeClaimsOf(name);
          return current.length === 2 && current.every(isInitialized) ? true : undefined;
        },
        'two initialized NodeClaims',
        60_000,
      );
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(await env.nodeClaimsOf(name)).toHaveLength(2);
    } finally {
      await stop();
    }
  }, 120_000);
});
