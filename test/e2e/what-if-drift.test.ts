// A what-if answer is only worth asking if it is what then happens. A static NodePool of 10 with a
// Drifted budget of "3" is asked what an imageFamily change of its AKSNodeClass would do: all 10 nodes,
// NodeClassDrifted, 4 waves at the budget (1 + 3 + 3 + 3 with a canary); the answer writes nothing
// (every object keeps its resourceVersion). Then the change is applied for real and the sweep replaces
// exactly those 10 nodes, never more than 3 disrupting at once. Real control plane, Azurite, the ARM
// emulator through the real SDK, the kubelet simulator; the sweep is this file's own, confined to its
// NodePool.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { RolloutAnnotations } from '../../shared/decisions/rollout.js';
import { renderWhatIf, whatIf, WhatIfInputError } from '../../shared/lifecycle/explain/what-if.js';
import type { AKSNodeClass, NodePool } from '../../shared/models/index.js';
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

// The app's own timer would sweep the whole shared cluster every 15 s; this file sweeps by itself.
vi.hoisted(() => {
  process.env.SWEEP_SCHEDULE = '0 0 0 1 1 *';
});

const REPLICAS = 10;
const BUDGET = 3;
const suffix = randomUUID().slice(0, 6);
const poolName = `whatif-${suffix}`;
const className = `whatif-${suffix}`;
let env: DisruptionStack;
printStackLogOnFailure(() => env.stack);

beforeAll(async () => {
  env = await startDisruptionStack({
    leaseName: `sweep-whatif-${suffix}`,
    latencies: { createMs: 2_000, deleteMs: 300, retryAfterSeconds: 0.3 },
    // The live drift at the budget alone; the canary's plan is asked through the NodePool's annotation.
    env: { ROLLOUT_POLICY: 'Immediate', ROLLOUT_CANARY: '1' },
  });
  await env.stack.admin.objects.nodeClasses.create(nodeClass(className, 'Ubuntu2204'));
  await env.stack.admin.objects.nodePools.create(
    staticNodePool(poolName, className, REPLICAS, [{ nodes: String(BUDGET) }]),
  );
});

afterAll(async () => {
  await env?.stack.admin.objects.nodePools.delete(poolName);
  await env?.stop();
});

/** The manifest a user would apply: the class as written, without what the API server keeps. */
function changedClass(live: AKSNodeClass): AKSNodeClass {
  return {
    apiVersion: live.apiVersion,
    kind: 'AKSNodeClass',
    metadata: { name: live.metadata.name },
    spec: { ...live.spec, imageFamily: 'AzureLinux' },
  };
}

describe('what-if of a NodePool change, then the change', () => {
  test('the answer (10 nodes, 4 waves at "3") is what the live drift then does', async () => {
    const { stack } = env;
    const stopBringUp = env.sweepContinuously([poolName]);
    const original = await eventually(
      async () => {
        const claims = await env.nodeClaimsOf(poolName);
        return claims.length === REPLICAS && claims.every(isInitialized) ? claims : undefined;
      },
      `${REPLICAS} initialized NodeClaims`,
      90_000,
    );
    await stopBringUp();
    const originalNames = new Set(original.map((c) => c.metadata.name));

    const liveClass = await stack.deps.objects.nodeClasses.get(className);
    const livePool = await stack.deps.objects.nodePools.get(poolName);
    if (!liveClass || !livePool) throw new Error('the NodePool or its class vanished');
    const versionsBefore = (await env.nodeClaimsOf(poolName)).map((c) => c.metadata.resourceVersion).sort();

    // Asked with the class changed: Immediate (the setting) gives ceil(10 / 3) waves.
    const asked = performance.now();
    const answer = await whatIf(stack.deps, [changedClass(liveClass)]);
    console.log(`${renderWhatIf(answer)}\n(answered in ${Math.round(performance.now() - asked)} ms)`);
    const drift = answer.drift.find((d) => d.nodePool === poolName);
    expect(drift).toBeDefined();
    expect(drift?.policy).toBe('Immediate');
    expect(drift?.judged).toBe(REPLICAS);
    expect(new Set(drift?.nodes.map((n) => n.nodeClaim))).toEqual(originalNames);
    expect(new Set(drift?.nodes.map((n) => n.reason))).toEqual(new Set(['NodeClassDrifted']));
    expect(drift?.nodes.every((n) => !n.alreadyDrifted && !n.disrupting)).toBe(true);
    expect(drift?.budget).toMatchObject({ perWave: BUDGET, now: BUDGET, total: REPLICAS });
    expect(drift?.plan.kind === 'waves' && drift.plan.waves.map((w) => w.size)).toEqual([3, 3, 3, 1]);
    expect(drift?.replacement).toBeDefined();
    expect(answer.changes).toEqual([{ kind: 'AKSNodeClass', name: className, created: false }]);
    expect(JSON.parse(JSON.stringify(answer))).toEqual(answer);

    // The same change with the NodePool under the Canary policy: a canary of 1, then waves of 3.
    const canaryPool: NodePool = {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name: poolName, annotations: { [RolloutAnnotations.policy]: 'Canary' } },
      spec: livePool.spec,
    };
    const canary = await whatIf(stack.deps, [changedClass(liveClass), canaryPool]);
    const canaryDrift = canary.drift.find((d) => d.nodePool === poolName);
    expect(canaryDrift?.policy).toBe('Canary');
    expect(canaryDrift?.plan.kind === 'waves' && canaryDrift.plan.waves.map((w) => w.size)).toEqual([
      1, 3, 3, 3,
    ]);

    await expect(
      whatIf(stack.deps, [{ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'x' } }]),
    ).rejects.toThrow(WhatIfInputError);
    await expect(
      whatIf(stack.deps, [changedClass(liveClass), { ...canaryPool, apiVersion: 'karpenter.sh/v1beta1' }]),
    ).rejects.toThrow(/objects\[1\] \(NodePool karpenter.sh\/v1beta1\)/);

    // Nothing was written by asking.
    expect((await env.nodeClaimsOf(poolName)).map((c) => c.metadata.resourceVersion).sort()).toEqual(
      versionsBefore,
    );
    expect((await stack.deps.objects.nodeClasses.get(className))?.metadata.resourceVersion).toBe(
      liveClass.metadata.resourceVersion,
    );
    expect((await stack.deps.objects.nodePools.get(poolName))?.metadata.resourceVersion).toBe(
      livePool.metadata.resourceVersion,
    );

    // Now for real.
    await stack.admin.objects.nodeClasses.mergePatch(className, { spec: { imageFamily: 'AzureLinux' } });
    let maxDisrupting = 0;
    const everDisrupting = new Set<string>();
    const stop = env.sweepContinuously([poolName], 200);
    try {
      await eventually(
        async () => {
          const [claims, nodes] = await Promise.all([env.nodeClaimsOf(poolName), env.nodes()]);
          const old = claims.filter((c) => originalNames.has(c.metadata.name));
          const disrupting = disruptingNow(old, nodes);
          for (const c of disrupting) everDisrupting.add(c.metadata.name);
          maxDisrupting = Math.max(maxDisrupting, disrupting.length);
          const fresh = claims.filter((c) => !originalNames.has(c.metadata.name));
          return old.length === 0 && fresh.length === REPLICAS && fresh.every(isInitialized)
            ? true
            : undefined;
        },
        `all ${REPLICAS} replaced`,
        150_000,
      );
    } finally {
      await stop();
    }
    const startedBySweep = stack.logs
      .filter(
        (l) =>
          l.record.message === 'disruption commands started' &&
          l.record.nodePool === poolName &&
          l.record.reason === 'Drifted',
      )
      .map((l) => Number(l.record.started));
    const replaced = new Set(
      stack.logs
        .filter((l) => l.record.message === 'disruption commands started' && l.record.nodePool === poolName)
        .flatMap((l) => (Array.isArray(l.record.candidates) ? l.record.candidates.map(String) : [])),
    );
    console.log(
      `what-if vs live: predicted ${drift?.nodes.length} nodes in waves ${JSON.stringify(
        drift?.plan.kind === 'waves' ? drift.plan.waves.map((w) => w.size) : drift?.plan.kind,
      )}; live: replacements started per sweep ${JSON.stringify(startedBySweep)}, max disrupting ${maxDisrupting}, ${everDisrupting.size} old nodes seen disrupting`,
    );
    // The live drift replaced exactly the predicted nodes, never more at once than the predicted wave.
    expect(replaced).toEqual(originalNames);
    expect(maxDisrupting).toBeLessThanOrEqual(BUDGET);
    expect(maxDisrupting).toBeGreaterThan(0);
    expect(Math.max(...startedBySweep)).toBeLessThanOrEqual(BUDGET);
    expect(startedBySweep[0]).toBe(BUDGET);
    expect(startedBySweep.reduce((a, b) => a + b, 0)).toBe(REPLICAS);
  }, 300_000);
});
