// The failure that blocking VM creation causes (docs/design.md, "Blocking creation serializes drift"), reproduced end to end: a static NodePool of 10 nodes
// with a disruption budget of "5" drifts (AKSNodeClass imageFamily Ubuntu2204 → AzureLinux); the first
// sweep starts 5 replacements at once, no more than 5 old nodes are ever disrupting, and all 10 are
// replaced in two waves. Real control plane (scheduler, controller-manager), Azurite, the ARM emulator
// through the real SDK with its VM creation latency scaled down, the kubelet simulator for Nodes.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { WellKnown } from '../../shared/models/karpenter.js';
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

const suffix = randomUUID().slice(0, 6);
const poolName = `drift-${suffix}`;
const className = `drift-${suffix}`;
let env: DisruptionStack;
printStackLogOnFailure(() => env.stack);

beforeAll(async () => {
  env = await startDisruptionStack({
    leaseName: `sweep-drift-${suffix}`,
    latencies: { createMs: 2_000, deleteMs: 300, retryAfterSeconds: 0.3 },
    // The budget's fan-out itself, without a rollout's canary and waves (test/e2e/rollout.test.ts).
    env: { ROLLOUT_POLICY: 'Immediate' },
  });
  await env.stack.admin.objects.nodeClasses.create(nodeClass(className, 'Ubuntu2204'));
  await env.stack.admin.objects.nodePools.create(staticNodePool(poolName, className, 10, [{ nodes: '5' }]));
});

afterAll(async () => {
  await env?.stack.admin.objects.nodePools.delete(poolName);
  await env?.stop();
});

describe('drift replacement fan-out', () => {
  test('10 drifted nodes, budget "5": 5 replacements start in the first sweep, never more than 5 disrupting, two waves', async () => {
    const { stack } = env;
    // The static NodePool brings up its 10 nodes.
    const stopSweeping = env.sweepContinuously([poolName]);
    const original = await eventually(
      async () => {
        const claims = await env.nodeClaimsOf(poolName);
        return claims.length === 10 && claims.every(isInitialized) ? claims : undefined;
      },
      '10 initialized NodeClaims',
      90_000,
    );
    await stopSweeping();
    const originalNames = new Set(original.map((c) => c.metadata.name));

    const current = await stack.deps.objects.nodeClasses.get(className);
    if (!current) throw new Error('node class vanished');
    await stack.admin.objects.nodeClasses.mergePatch(className, { spec: { imageFamily: 'AzureLinux' } });

    const first = await env.sweep([poolName]);
    if (first.status === 'skipped') throw new Error('sweep skipped');
    expect(first.steps.find((s) => s.step === 'drift')?.acted).toBe(10);
    expect(first.steps.find((s) => s.step === 'disruption')?.acted).toBe(5);

    // Observe the pool until every original NodeClaim is gone, sweeping meanwhile.
    let maxDisrupting = 0;
    const startedAt = Date.now();
    const waves: number[] = [];
    let lastRemaining = 10;
    const stop = env.sweepContinuously([poolName], 200);
    try {
      await eventually(
        async () => {
          const [claims, nodes] = await Promise.all([env.nodeClaimsOf(poolName), env.nodes()]);
          const old = claims.filter((c) => originalNames.has(c.metadata.name));
          maxDisrupting = Math.max(maxDisrupting, disruptingNow(old, nodes).length);
          if (old.length < lastRemaining) {
            waves.push(Date.now() - startedAt);
            lastRemaining = old.length;
          }
          const fresh = claims.filter((c) => !originalNames.has(c.metadata.name));
          return old.length === 0 && fresh.length === 10 && fresh.every(isInitialized) ? claims : undefined;
        },
        'all 10 replaced',
        120_000,
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
    console.log(
      `drift fan-out: replacements started per sweep ${JSON.stringify(startedBySweep)}, max disrupting ${maxDisrupting}, old NodeClaims gone at ms ${JSON.stringify(waves)}`,
    );
    expect(maxDisrupting).toBeLessThanOrEqual(5);
    expect(maxDisrupting).toBeGreaterThan(1);
    expect(startedBySweep[0]).toBe(5);
    expect(startedBySweep.reduce((a, b) => a + b, 0)).toBe(10);
    expect(Math.max(...startedBySweep)).toBeLessThanOrEqual(5);

    const final = await env.nodeClaimsOf(poolName);
    const fresh = await stack.deps.objects.nodeClasses.get(className);
    for (const claim of final) {
      expect(claim.metadata.labels?.[WellKnown.nodePoolLabel]).toBe(poolName);
      expect(claim.metadata.annotations?.[WellKnown.nodeClassHashAnnotation]).toBeTruthy();
      expect(claim.status?.conditions?.find((c) => c.type === 'Drifted')).toBeUndefined();
      expect(claim.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'NodePool', name: poolName });
    }
    expect(fresh?.spec.imageFamily).toBe('AzureLinux');
    // No Node of an old NodeClaim is left, and no VM either.
    const vms = stack.emulator.controls.vms().map((vm) => vm.name);
    for (const name of originalNames) expect(vms).not.toContain(`aks-${name}`);
  }, 240_000);
});
