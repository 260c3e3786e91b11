// A NodePool change rolled out end to end (docs/rollouts.md): a static NodePool of 6 with a budget of "2"
// gets a new template label, so every node drifts (NodePoolDrifted). Under the Canary policy the sweep
// starts the NodePool's rollout workflow in the in-process host; one canary is replaced and nothing else
// disrupts until its soak has passed; then waves of at most 2 follow, each soaked, until every node is
// up to date; the rollout ends rolled out, the NodePool's status counts its up-to-date and Ready nodes,
// and RolledOut is True. Real control plane, Azurite, the ARM emulator through the real SDK, the kubelet
// simulator; the sweep is this file's own, confined to its NodePool, and the soak and poll are short.
import { randomUUID } from 'node:crypto';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, test, vi } from 'vitest';
import { findCondition } from '../../shared/decisions/conditions.js';
import { RolloutAnnotations, rolloutStateOf, type RolloutState } from '../../shared/decisions/rollout.js';
import { reconcileNodePoolStatus } from '../../shared/lifecycle/status/nodepool-status.js';
import type { NodePool } from '../../shared/models/karpenter.js';
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

const REPLICAS = 6;
const BUDGET = 2;
const SOAK_SECONDS = 3;
const suffix = randomUUID().slice(0, 6);
const poolName = `rollout-${suffix}`;
const className = `rollout-${suffix}`;
let env: DisruptionStack;
let core: CoreV1Api;
printStackLogOnFailure(() => env.stack);

beforeAll(async () => {
  env = await startDisruptionStack({
    leaseName: `sweep-rollout-${suffix}`,
    latencies: { createMs: 1_500, deleteMs: 300, retryAfterSeconds: 0.3 },
    env: {
      ROLLOUT_POLICY: 'Canary',
      ROLLOUT_CANARY: '1',
      ROLLOUT_POLL_SECONDS: '0.5',
      ROLLOUT_SOAK_SECONDS: String(SOAK_SECONDS),
    },
  });
  const config = new KubeConfig();
  config.loadFromFile(inject('kubeconfigPath'));
  core = config.makeApiClient(CoreV1Api);
  await env.stack.admin.objects.nodeClasses.create(nodeClass(className, 'Ubuntu2204'));
  await env.stack.admin.objects.nodePools.create(
    staticNodePool(poolName, className, REPLICAS, [{ nodes: String(BUDGET) }]),
  );
});

afterAll(async () => {
  await env?.stack.admin.objects.nodePools.delete(poolName);
  await env?.stop();
});

/** One look at the rollout: its state, and how many of the original nodes are disrupting now. */
interface Sample {
  at: number;
  state: RolloutState | undefined;
  disrupting: string[];
  remaining: number;
}

describe('rollout of a NodePool change', () => {
  test('a canary of 1, its soak, then waves of at most 2; every node up to date; RolledOut=True', async () => {
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

    await stack.admin.objects.nodePools.mergePatch(poolName, {
      spec: { template: { metadata: { labels: { 'example.com/rollout': 'v2' } } } },
    });

    const samples: Sample[] = [];
    const startedAt = Date.now();
    const stop = env.sweepContinuously([poolName], 200);
    try {
      await eventually(
        async () => {
          const [pool, claims, nodes] = await Promise.all([
            stack.deps.objects.nodePools.get(poolName),
            env.nodeClaimsOf(poolName),
            env.nodes(),
          ]);
          const old = claims.filter((c) => originalNames.has(c.metadata.name));
          samples.push({
            at: Date.now() - startedAt,
            state: pool ? rolloutStateOf(pool) : undefined,
            disrupting: disruptingNow(old, nodes).map((c) => c.metadata.name),
            remaining: old.length,
          });
          const state = samples.at(-1)?.state;
          const fresh = claims.filter((c) => !originalNames.has(c.metadata.name));
          return state?.phase === 'rolledOut' &&
            old.length === 0 &&
            fresh.length === REPLICAS &&
            fresh.every(isInitialized)
            ? true
            : undefined;
        },
        'the rollout rolled out',
        180_000,
      );
    } finally {
      await stop();
    }

    const canary = samples.filter((s) => (s.state?.wave ?? 0) <= 1);
    const canaryNodes = new Set(canary.flatMap((s) => s.disrupting));
    const later = samples.filter((s) => (s.state?.wave ?? 0) >= 2);
    const byWave = new Map<number, Set<string>>();
    for (const s of samples) {
      const wave = s.state?.wave ?? 0;
      const set = byWave.get(wave) ?? new Set<string>();
      for (const name of s.disrupting) set.add(name);
      byWave.set(wave, set);
    }
    console.log(
      `rollout: ${samples.length} samples over ${samples.at(-1)?.at ?? 0} ms; nodes disrupting per wave ${JSON.stringify(
        [...byWave].map(([wave, nodes]) => [wave, [...nodes].length]),
      )}; max disrupting after the canary ${Math.max(0, ...later.map((s) => s.disrupting.length))}`,
    );

    // The canary: exactly one original node disrupted until its soak passed and the next wave began.
    expect(canaryNodes.size).toBe(1);
    expect(Math.max(...canary.map((s) => s.disrupting.length))).toBe(1);
    // Its soak: the second wave started no sooner than SOAK_SECONDS after the canary's node was gone.
    const canaryGone = canary.find((s) => s.remaining === REPLICAS - 1)?.at;
    const secondWave = later[0]?.at;
    expect(canaryGone).toBeDefined();
    expect(secondWave).toBeDefined();
    expect((secondWave ?? 0) - (canaryGone ?? 0)).toBeGreaterThanOrEqual(SOAK_SECONDS * 1000 - 500);
    // The waves after it: never more than the budget at once, and at most the budget per wave.
    expect(Math.max(...later.map((s) => s.disrupting.length))).toBeLessThanOrEqual(BUDGET);
    for (const [wave, nodes] of byWave) if (wave >= 2) expect(nodes.size).toBeLessThanOrEqual(BUDGET);
    const final = samples.at(-1)?.state;
    // 1 canary + waves of 2, 2, 1.
    expect(final).toMatchObject({ phase: 'rolledOut', wave: 4 });

    // The NodePool's status as the status step computes it from the real objects.
    const pool = (await stack.deps.objects.nodePools.get(poolName)) as NodePool;
    const cls = await stack.deps.objects.nodeClasses.get(className);
    const claims = await env.nodeClaimsOf(poolName);
    const nodes = await env.nodes();
    const written = await reconcileNodePoolStatus(
      stack.deps,
      pool,
      {
        nodeClaims: claims,
        nodesOf: (c) => nodes.filter((n) => n.spec.providerID === c.status?.providerID),
      },
      cls,
    );
    const status = written.object.status;
    expect(status).toMatchObject({
      observedGeneration: pool.metadata.generation,
      nodes: REPLICAS,
      upToDateNodes: REPLICAS,
      readyNodes: REPLICAS,
    });
    expect(findCondition(status?.conditions, 'RolledOut')).toMatchObject({
      status: 'True',
      reason: 'RolledOut',
    });
    expect(pool.metadata.annotations?.[RolloutAnnotations.state]).toBeDefined();

    const events = await core.listNamespacedEvent({
      namespace: 'default',
      fieldSelector: `involvedObject.name=${poolName},involvedObject.kind=NodePool`,
    });
    const reasons = events.items.filter((e) => e.reason?.startsWith('Rollout'));
    expect(reasons.map((e) => e.reason).sort()).toEqual([
      'RolloutStarted',
      'RolloutSucceeded',
      'RolloutWaveStarted',
      'RolloutWaveStarted',
      'RolloutWaveStarted',
    ]);
  }, 300_000);
});
