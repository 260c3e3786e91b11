// Durable disruption workflows ride out a 60 s outage of the Kubernetes API server: while a drift wave
// (a static NodePool of 6, budget "2") and an Empty consolidation (4 empty nodes, budget "2") are in
// flight, the Function App loses the API server for 60 s. Afterwards: no workflow ended Failed (every
// orchestration outcome the host reported is checked), no VM was deleted and created again (the ARM
// emulator's request log: at most one successful PUT per VM name, and no DELETE of a replacement's VM),
// the budgets held at every recorded NodeClaim and Node version, and everything converged (every old
// node replaced, every empty node gone).
//
// The control plane is shared by every test file running at once, so the outage is made between this
// file's Function App and the API server: the app reaches it through a TCP relay that, for 60 s, closes
// every connection and refuses new ones (connection refused, as from a stopped API server). The API
// server itself, the kubelet simulator and the admin client used for assertions keep running.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, test, vi } from 'vitest';
import type { HostEvent } from '../../local/host/index.js';
import { disruptionCounts } from '../../local/scenarios/drift-budget.js';
import { startRecorder, type Recorder } from '../../local/view/recorder.js';
import { WellKnown, type NodeClaim, type NodePool } from '../../shared/models/karpenter.js';
import { DisruptionNames } from '../../shared/runtime/function-names.js';
import { exampleRequirements, nodeClass, nodeClassRef } from '../support/fixtures.js';
import { ApiServerRelay } from '../support/api-server-relay.js';
import { eventually } from '../support/launch-stack.js';
import {
  isInitialized,
  startDisruptionStack,
  staticNodePool,
  type DisruptionStack,
} from '../support/disruption-stack.js';
import { printStackLogOnFailure } from '../support/stack-log-on-failure.js';

// The app's own timer would sweep the whole shared cluster; this file sweeps by itself.
vi.hoisted(() => {
  process.env.SWEEP_SCHEDULE = '0 0 0 1 1 *';
});

const OUTAGE_MS = 60_000;
const suffix = randomUUID().slice(0, 6);
const driftPool = `outage-drift-${suffix}`;
const emptyPool = `outage-empty-${suffix}`;
const className = `outage-${suffix}`;

function emptyNodePool(budget: string): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: emptyPool },
    spec: {
      disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: '2s', budgets: [{ nodes: budget }] },
      template: { spec: { nodeClassRef: nodeClassRef(className), requirements: exampleRequirements } },
    },
  };
}

function emptyNodeClaim(name: string): NodeClaim {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: { name, labels: { [WellKnown.nodePoolLabel]: emptyPool } },
    spec: { nodeClassRef: nodeClassRef(className), requirements: exampleRequirements },
  };
}

let env: DisruptionStack;
let relay: ApiServerRelay;
let recorder: Recorder;
const hostEvents: { at: number; event: HostEvent }[] = [];
printStackLogOnFailure(() => env.stack);

beforeAll(async () => {
  relay = await ApiServerRelay.toServerOf(inject('functionsKubeconfigPath'));
  await relay.up();
  env = await startDisruptionStack({
    leaseName: `sweep-outage-${suffix}`,
    // Slow enough VM creation that the outage lands while replacements are launching.
    latencies: { createMs: 8_000, deleteMs: 300, retryAfterSeconds: 0.3 },
    env: {
      KUBECONFIG: await relay.kubeconfigThrough(inject('functionsKubeconfigPath')),
      CONSOLIDATION_VALIDATION_SECONDS: '10',
      // The drift wave under test is the budget's fan-out; rollout-resume.test.ts is the rollout's outage.
      ROLLOUT_POLICY: 'Immediate',
    },
  });
  env.stack.host.on((event) => {
    if (event.type.startsWith('orchestration.')) hostEvents.push({ at: Date.now(), event });
  });
  recorder = startRecorder({
    kubeconfigPath: inject('kubeconfigPath'),
    emulator: env.stack.emulator,
    labelSelector: `${WellKnown.nodePoolLabel} in (${driftPool},${emptyPool})`,
    nodeNameToken: suffix,
  });
  await env.stack.admin.objects.nodeClasses.create(nodeClass(className, 'Ubuntu2204'));
  await env.stack.admin.objects.nodePools.create(staticNodePool(driftPool, className, 6, [{ nodes: '2' }]));
  // Held at "0" while its nodes come up, so they are all there when consolidation may start.
  await env.stack.admin.objects.nodePools.create(emptyNodePool('0'));
  for (let i = 0; i < 4; i++)
    await env.stack.admin.objects.nodeClaims.create(emptyNodeClaim(`${emptyPool}-${i}`));
}, 180_000);

afterAll(async () => {
  recorder?.stop();
  await relay?.up().catch(() => undefined);
  for (const pool of [driftPool, emptyPool]) await env?.stack.admin.objects.nodePools.delete(pool);
  await env?.stop();
  await relay?.down();
});

/** Sweeps both pools until stopped; a sweep that fails (the API server is away) is simply the next one's to redo. */
function sweepThroughOutages(): () => Promise<void> {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      try {
        await env.sweep([driftPool, emptyPool]);
      } catch {
        // The outage: the sweep's reads are refused. The next sweep starts over from a fresh read.
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
  };
}

const adminClaims = (pool: string) =>
  env.stack.admin.objects.nodeClaims.list({ labelSelector: `${WellKnown.nodePoolLabel}=${pool}` });

/** Disruption workflows started and not yet finished, by the host's reports. */
function activeDisruptionWorkflows(): string[] {
  const active = new Set<string>();
  for (const { event } of hostEvents) {
    if (!('name' in event) || event.name !== DisruptionNames.orchestrationV2) continue;
    if (event.type === 'orchestration.started') active.add(event.instanceId);
    else active.delete(event.instanceId);
  }
  return [...active];
}

describe('disruption through a 60 s API server outage', () => {
  test('no workflow fails, no VM is made twice, budgets hold, everything converges', async () => {
    const { stack } = env;
    const originalDriftNames = new Set<string>();
    const originalEmptyNames = new Set<string>();
    const stopSweeping = sweepThroughOutages();
    try {
      const [originalDrift, originalEmpty] = await eventually(
        async () => {
          const [drift, empty] = await Promise.all([adminClaims(driftPool), adminClaims(emptyPool)]);
          return drift.length === 6 &&
            drift.every(isInitialized) &&
            empty.length === 4 &&
            empty.every(isInitialized)
            ? [drift, empty]
            : undefined;
        },
        '6 + 4 initialized NodeClaims',
        150_000,
      );
      for (const c of originalDrift) originalDriftNames.add(c.metadata.name);
      for (const c of originalEmpty) originalEmptyNames.add(c.metadata.name);

      // The drift wave and the consolidation start together.
      await stack.admin.objects.nodeClasses.mergePatch(className, { spec: { imageFamily: 'AzureLinux' } });
      await stack.admin.objects.nodePools.mergePatch(emptyPool, {
        spec: { disruption: { budgets: [{ nodes: '2' }] } },
      });
      const inFlight = await eventually(
        async () => {
          const active = activeDisruptionWorkflows();
          const replacing = active.filter((id) => id.startsWith('replace-'));
          const consolidating = active.filter((id) => id.startsWith('consolidate-'));
          const launching = (await adminClaims(driftPool)).filter(
            (c) => !originalDriftNames.has(c.metadata.name) && !isInitialized(c),
          );
          return replacing.length > 0 && consolidating.length > 0 && launching.length > 0
            ? { replacing, consolidating, launching: launching.map((c) => c.metadata.name) }
            : undefined;
        },
        'drift replacements launching and a consolidation in flight',
        90_000,
      );

      const outageStartedAt = Date.now();
      await relay.down();
      await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
      await relay.up();
      const outageEndedAt = Date.now();
      console.log(
        `outage of ${Math.round((outageEndedAt - outageStartedAt) / 1000)} s with in flight: ${JSON.stringify(inFlight)}`,
      );

      await eventually(
        async () => {
          const [drift, empty] = await Promise.all([adminClaims(driftPool), adminClaims(emptyPool)]);
          const replaced =
            drift.length === 6 &&
            drift.every((c) => !originalDriftNames.has(c.metadata.name) && isInitialized(c));
          return replaced && empty.length === 0 && activeDisruptionWorkflows().length === 0
            ? true
            : undefined;
        },
        'every drifted node replaced, every empty node gone, no disruption workflow in flight',
        240_000,
      );
    } finally {
      await stopSweeping();
    }

    // No workflow ended Failed, and no disruption command was abandoned (which would have put a node
    // back and deleted a replacement whose VM was up).
    const failed = hostEvents.filter(({ event }) => event.type === 'orchestration.failed');
    expect(failed.map(({ event }) => event)).toEqual([]);
    const outcomes = hostEvents.flatMap(({ event }) =>
      event.type === 'orchestration.completed' && event.name === DisruptionNames.orchestrationV2
        ? [{ instanceId: event.instanceId, outcome: (event.output as { outcome?: string }).outcome }]
        : [],
    );
    expect(outcomes.filter((o) => o.outcome === 'Abandoned')).toEqual([]);
    expect(outcomes.some((o) => o.instanceId.startsWith('consolidate-') && o.outcome === 'Disrupted')).toBe(
      true,
    );

    // No VM deleted and created again: at most one successful PUT per VM name, and no replacement's VM
    // (the NodeClaims that remain) ever deleted.
    const requests = stack.emulator.controls.requests();
    const putsByVm = new Map<string, number>();
    for (const r of requests) {
      if (r.kind === 'putVm' && r.vmName && r.status >= 200 && r.status < 300) {
        putsByVm.set(r.vmName, (putsByVm.get(r.vmName) ?? 0) + 1);
      }
    }
    expect([...putsByVm].filter(([, puts]) => puts > 1)).toEqual([]);
    const finalVms = new Set(
      (await adminClaims(driftPool)).map((c) => c.status?.providerID?.split('/').pop()?.toLowerCase() ?? ''),
    );
    const deletedFinal = requests.filter(
      (r) => r.kind === 'deleteVm' && r.vmName && finalVms.has(r.vmName.toLowerCase()),
    );
    expect(deletedFinal.map((r) => r.vmName)).toEqual([]);

    // Budgets held at every recorded version of the NodeClaims and their Nodes.
    const drift = disruptionCounts(recorder.history.nodeClaims, recorder.history.nodes, originalDriftNames);
    const empty = disruptionCounts(recorder.history.nodeClaims, recorder.history.nodes, originalEmptyNames);
    console.log(
      `disrupting at most: drift ${drift.maxInFlight} (budget 2), empty ${empty.maxInFlight} (budget 2); ` +
        `${recorder.history.nodeClaims.length} NodeClaim and ${recorder.history.nodes.length} Node versions`,
    );
    expect(drift.maxInFlight).toBeLessThanOrEqual(2);
    expect(empty.maxInFlight).toBeLessThanOrEqual(2);
    expect(drift.maxInFlight).toBeGreaterThan(0);
  }, 600_000);
});
