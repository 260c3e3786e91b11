// A rollout survives its host and an API server outage (docs/rollouts.md: "a restart resumes where the
// annotation says", "every activity rides out an API server or ARM outage"). A static NodePool of 6 with
// a Drifted budget of "2" gets a new template label under the Canary policy; the Function App runs in a
// child process (test/support/child-host.ts) on a durable history directory:
//   - once the canary's wave is done and its soak has begun (the annotation is phase canary, wave 1, with
//     soakingSince), the host is killed with SIGKILL, kept dead for several rollout polls, and started
//     again on the same history: the rollout goes on from the annotation, and since nothing judged the
//     gates while it was dead, the canary's soak counts again from the first poll after the restart;
//     wave 2 starts once, a full soak later, without a second canary;
//   - while wave 2 soaks (its gates judged at every poll), the app loses the API server for 40 s (a TCP
//     relay between the app and the shared control plane, which must never be stopped): nothing is
//     written meanwhile, no workflow ends Failed, no gate fails because the state was unreadable, and
//     wave 2's soak counts again from the first poll after the outage.
// At the end: RolledOut=True (as the status step decides it); every old node replaced exactly once (one replacement NodeClaim each, one
// successful VM PUT per VM name); the waves recorded from the annotation are 1, 2, 3, 4, each started
// once; never more than the budget of old nodes disrupting at once, and only the canary before wave 2.
// The ARM emulator, the kubelet simulator and the event bridge stay in this process throughout.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, inject, onTestFailed, test } from 'vitest';
import { disruptionCounts } from '../../local/scenarios/drift-budget.js';
import { exampleNodeClass, exampleNodePool, kubeApis } from '../../local/scenarios/scenario.js';
import { RUN_LABEL, startLocalStack, type LocalStack } from '../../local/stack/local-stack.js';
import { startRecorder, type Recorder } from '../../local/view/recorder.js';
import { vmNameFor } from '../../shared/cloudprovider/azure/decisions/vm-spec.js';
import { findCondition } from '../../shared/decisions/conditions.js';
import { desiredNodePoolStatus } from '../../shared/decisions/nodepool-status.js';
import { findNodesForClaim } from '../../shared/decisions/registration.js';
import { DisruptionAnnotations } from '../../shared/decisions/disruption-state.js';
import {
  RolloutAnnotations,
  rolloutInstanceId,
  rolloutStateOf,
  type RolloutState,
} from '../../shared/decisions/rollout.js';
import { WellKnown } from '../../shared/models/karpenter.js';
import { listNodes } from '../../shared/kube/nodes.js';
import { createLogger } from '../../shared/observability/logger.js';
import { RolloutNames } from '../../shared/runtime/function-names.js';
import { ApiServerRelay } from '../support/api-server-relay.js';
import { childHost, type ChildHost } from '../support/child-host.js';
import { devCa } from '../support/dev-ca.js';
import { adminAccess, shippedIdentities } from '../support/identities.js';
import { isInitialized } from '../support/disruption-stack.js';
import { pollUntilDefined } from '../support/poll.js';
import { E2E_SPEED } from './e2e-stack.js';

const REPLICAS = 6;
const BUDGET = 2;
const POLL_SECONDS = 1;
/** Long enough to kill the host and cut the API server inside a soak, short enough for a few minutes' run. */
const SOAK_SECONDS = 20;
/** Dead for eight rollout polls: the workflow's timer is long due when the next host starts. */
const DEAD_MS = 8 * POLL_SECONDS * 1000;
/** Longer than the soak: the soak ends during the outage, so the next wave waits for the API server. */
const OUTAGE_MS = 40_000;

let stack: LocalStack;
let relay: ApiServerRelay;
let host: ChildHost;
let recorder: Recorder;
let stateDirectory: string;

beforeAll(async () => {
  relay = await ApiServerRelay.toServerOf(inject('functionsKubeconfigPath'));
  await relay.up();
  stack = await startLocalStack({
    speed: E2E_SPEED,
    scoped: true,
    functionHost: false,
    shared: {
      kubeconfigPath: inject('kubeconfigPath'),
      identities: shippedIdentities(),
      storageConnectionString: inject('azuriteConnectionString'),
      ca: await devCa(),
    },
    log: createLogger({
      component: 'e2e',
      minLevel: process.env.TEST_LOGS ? 'debug' : 'warn',
      sink: (_level, line) => process.stderr.write(line + '\n'),
    }),
  });
  if (!stack.sweepScope) throw new Error('a scoped stack has a sweep scope');
  stateDirectory = await mkdtemp(join(tmpdir(), 'rollout-resume-'));
  const kubeconfig = stack.appSettings['KUBECONFIG'];
  if (!kubeconfig) throw new Error('the app settings name no kubeconfig');
  host = childHost({
    appSettings: {
      ...stack.appSettings,
      // The app alone reaches the API server through the relay, so only it sees the outage.
      KUBECONFIG: await relay.kubeconfigThrough(kubeconfig),
      ROLLOUT_POLICY: 'Canary',
      ROLLOUT_CANARY: '1',
      ROLLOUT_POLL_SECONDS: String(POLL_SECONDS),
      ROLLOUT_SOAK_SECONDS: String(SOAK_SECONDS),
      // Generous: a replacement is up in seconds here, and a busy machine must not fail a gate.
      ROLLOUT_INITIALIZED_WITHIN_SECONDS: '180',
      ROLLOUT_POD_READY_WITHIN_SECONDS: '180',
    },
    stateDirectory,
    sweepSchedule: stack.timings.sweepSchedule,
    sweepScope: stack.sweepScope,
  });
  recorder = startRecorder({
    kubeconfigPath: inject('kubeconfigPath'),
    emulator: stack.emulator,
    labelSelector: `${RUN_LABEL}=${stack.runId}`,
    nodeNameToken: stack.runId,
  });
}, 180_000);

afterAll(async () => {
  recorder?.stop();
  await relay?.up().catch(() => undefined);
  await host?.stop();
  await stack?.stop();
  await relay?.down();
  if (stateDirectory) await rm(stateDirectory, { recursive: true, force: true });
});

/** One version of the NodePool's rollout annotation, as the recorder's watch delivered it. */
interface Recorded {
  at: number;
  text: string | undefined;
  state: RolloutState | undefined;
}

/**
 * Every version of the rollout annotation: the recorder's watch keeps the NodePool's latest version, read
 * here every 20 ms. The app writes the annotation at most once per rollout poll (a second), so no version
 * goes unseen.
 */
function recordRolloutAnnotation(poolName: string): { history: Recorded[]; stop(): void } {
  const history: Recorded[] = [];
  const look = () => {
    const pool = recorder.nodePools.get(poolName);
    const text = pool?.metadata.annotations?.[RolloutAnnotations.state];
    if (history.length > 0 && history.at(-1)?.text === text) return;
    history.push({ at: Date.now(), text, state: pool ? rolloutStateOf(pool) : undefined });
  };
  const timer = setInterval(look, 20);
  return { history, stop: () => clearInterval(timer) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('killed in the canary soak and cut off the API server in a later one: the rollout resumes, each wave once, RolledOut=True', async () => {
  const { runId } = stack;
  const name = `rollres-${runId}`;
  const objects = stack.admin.objects;
  const { core } = kubeApis(stack.kubeconfigPath);
  const admin = adminAccess();
  const ofPool = () => objects.nodeClaims.list({ labelSelector: `${WellKnown.nodePoolLabel}=${name}` });
  const pool = exampleNodePool(name, runId, name, String(BUDGET));
  pool.spec.replicas = REPLICAS;
  await objects.nodeClasses.create(exampleNodeClass(name, runId));
  const created = await objects.nodePools.create(pool);
  const annotation = recordRolloutAnnotation(name);
  onTestFailed(() => {
    console.log(
      [
        'rollout annotation history:',
        ...annotation.history.map((r) => `${new Date(r.at).toISOString()} ${r.text ?? '(none)'}`),
        "the host processes' orchestration events:",
        ...host.events.map(
          (e) => `${new Date(e.at).toISOString()} [host ${e.process}] ${JSON.stringify(e.event)}`,
        ),
        "the host processes' last log lines:",
        ...host.recentLog(),
      ].join('\n'),
    );
  });
  const stateNow = async () => {
    const current = await objects.nodePools.get(name);
    return current ? rolloutStateOf(current) : undefined;
  };
  const textNow = async () =>
    (await objects.nodePools.get(name))?.metadata.annotations?.[RolloutAnnotations.state];

  try {
    await host.start();
    const original = await pollUntilDefined(
      `${REPLICAS} initialized NodeClaims`,
      async () => {
        const claims = await ofPool();
        return claims.length === REPLICAS && claims.every(isInitialized) ? claims : undefined;
      },
      180_000,
    );
    const originals = new Set(original.map((c) => c.metadata.name));

    await objects.nodePools.mergePatch(name, {
      spec: { template: { metadata: { labels: { 'example.com/rollout': 'v2' } } } },
    });

    // The kill: the canary's wave done and its soak begun, nothing written since.
    const canarySoaking = await pollUntilDefined(
      'the canary soaking',
      async () => {
        const state = await stateNow();
        if (state && state.wave > 1) throw new Error(`wave ${state.wave} began before the kill`);
        return state?.phase === 'canary' && state.soakingSince ? state : undefined;
      },
      180_000,
    );
    await host.kill();
    const killedAt = Date.now();
    const textAtKill = await textNow();
    expect(await stateNow()).toMatchObject({
      phase: 'canary',
      wave: 1,
      soakingSince: canarySoaking.soakingSince,
    });
    await sleep(DEAD_MS);
    expect(await textNow()).toBe(textAtKill);
    const restartBegan = Date.now();
    await host.start();
    console.log(
      `killed ${Math.round((killedAt - Date.parse(canarySoaking.soakingSince ?? '')) / 1000)} s into the canary's soak, dead ${((restartBegan - killedAt) / 1000).toFixed(1)} s`,
    );

    // The outage: wave 2 done and soaking, its gates judged at every poll.
    const secondSoaking = await pollUntilDefined(
      'wave 2 soaking',
      async () => {
        const state = await stateNow();
        if (state && state.wave > 2) throw new Error(`wave ${state.wave} began before the outage`);
        return state?.phase === 'waves' && state.wave === 2 && state.soakingSince ? state : undefined;
      },
      180_000,
    );
    const textAtOutage = await textNow();
    const outageStartedAt = Date.now();
    await relay.down();
    await sleep(OUTAGE_MS);
    const textAfterOutage = await textNow();
    await relay.up();
    const outageEndedAt = Date.now();
    console.log(
      `outage of ${Math.round((outageEndedAt - outageStartedAt) / 1000)} s, ${Math.round((outageStartedAt - Date.parse(secondSoaking.soakingSince ?? '')) / 1000)} s into wave 2's soak`,
    );
    // Nothing could be written while the app was cut off.
    expect(textAfterOutage).toBe(textAtOutage);

    // A scoped sweep writes no NodePool status (it cannot count a whole pool), so the status, RolledOut
    // included, is the app's own decision (desiredNodePoolStatus) on the objects as they are.
    const rolledOut = await pollUntilDefined(
      'rolled out: every node replaced and Initialized, RolledOut=True',
      async () => {
        const [current, claims, nodeClass, nodes] = await Promise.all([
          objects.nodePools.get(name),
          ofPool(),
          objects.nodeClasses.get(name),
          listNodes((await admin.kube()).core),
        ]);
        if (!current || rolloutStateOf(current)?.phase !== 'rolledOut') return undefined;
        const fresh = claims.filter((c) => !originals.has(c.metadata.name));
        if (claims.length !== REPLICAS || fresh.length !== REPLICAS || !fresh.every(isInitialized))
          return undefined;
        const status = desiredNodePoolStatus({
          nodePool: current,
          nodeClaims: claims,
          nodesOf: (c) => findNodesForClaim(nodes, c.status?.providerID ?? ''),
          nodeClass,
          now: new Date(),
          defaultRolloutPolicy: 'Canary',
        });
        return findCondition(status.conditions, 'RolledOut')?.status === 'True'
          ? { status, claims }
          : undefined;
      },
      300_000,
    );
    const instanceId = rolloutInstanceId(created.metadata.uid ?? '', canarySoaking.target);
    const rolloutEnds = await pollUntilDefined(
      'the rollout workflow completed',
      () => {
        const ends = host.events.filter(
          ({ event }) =>
            event.type === 'orchestration.completed' && event.name === RolloutNames.orchestration,
        );
        return Promise.resolve(ends.length > 0 ? ends : undefined);
      },
      60_000,
    );
    annotation.stop();

    // The waves, from every version of the annotation: 1 (the canary), 2, 3, 4, each started once, of
    // one rollout (one start, one target), never a gate; each began after the previous one's soak.
    const states = annotation.history.flatMap((r) => (r.state ? [{ at: r.at, state: r.state }] : []));
    // Each wave's first soak start, and its last (a soak nobody watched counts again).
    const waves: { wave: number; startedAt: string; soakingSince?: string; lastSoakingSince?: string }[] = [];
    for (const { state } of states) {
      const last = waves.at(-1);
      if (!last || last.wave !== state.wave || last.startedAt !== state.waveStartedAt) {
        waves.push({ wave: state.wave, startedAt: state.waveStartedAt });
      }
      const current = waves.at(-1);
      if (current && state.soakingSince) {
        current.soakingSince ??= state.soakingSince;
        current.lastSoakingSince = state.soakingSince;
      }
    }
    console.log(
      `waves: ${JSON.stringify(waves)}; ${annotation.history.length} annotation versions; host events: ${host.events.length}`,
    );
    expect(waves.map((w) => w.wave)).toEqual([1, 2, 3, 4]);
    expect(new Set(states.map((s) => s.state.startedAt)).size).toBe(1);
    expect(new Set(states.map((s) => s.state.target))).toEqual(new Set([canarySoaking.target]));
    expect(states.filter((s) => s.state.gate !== undefined).map((s) => s.state)).toEqual([]);
    expect(states.at(-1)?.state).toMatchObject({ phase: 'rolledOut', wave: 4 });
    for (const [i, wave] of waves.entries()) {
      const previous = waves[i - 1];
      if (!previous) continue;
      expect(previous.lastSoakingSince).toBeDefined();
      expect(Date.parse(wave.startedAt) - Date.parse(previous.lastSoakingSince ?? '')).toBeGreaterThanOrEqual(
        SOAK_SECONDS * 1000,
      );
    }
    // The soaks nobody watched counted again: the canary's from after the restart (so wave 2 was started
    // by the new host, a full watched soak later), wave 2's from after the outage.
    const [canary, second] = waves;
    expect(canary?.soakingSince).toBe(canarySoaking.soakingSince);
    expect(Date.parse(canary?.lastSoakingSince ?? '')).toBeGreaterThanOrEqual(restartBegan - 1_000);
    expect(Date.parse(second?.startedAt ?? '')).toBeGreaterThanOrEqual(restartBegan - 1_000);
    expect(Date.parse(second?.lastSoakingSince ?? '')).toBeGreaterThanOrEqual(outageEndedAt - 1_000);
    // Nothing written while the host was dead, nor while the app was cut off from the API server.
    const writtenWhile = (from: number, to: number) =>
      annotation.history.filter((r) => r.at > from + 500 && r.at < to).map((r) => r.text);
    expect(writtenWhile(killedAt, restartBegan)).toEqual([]);
    expect(writtenWhile(outageStartedAt, outageEndedAt)).toEqual([]);

    // No workflow of any host ended Failed or was terminated; the rollout's one workflow (its instance
    // ID unchanged across the processes) completed once, rolled out.
    const badEnds = host.events.filter(
      ({ event }) => event.type === 'orchestration.failed' || event.type === 'orchestration.terminated',
    );
    expect(badEnds.map((e) => e.event)).toEqual([]);
    expect(
      rolloutEnds.map(({ event }) =>
        event.type === 'orchestration.completed' ? [event.instanceId, event.output] : undefined,
      ),
    ).toEqual([[instanceId, { outcome: 'rolled_out' }]]);
    const rolloutInstances = host.events.flatMap(({ event }) =>
      'instanceId' in event && event.name === RolloutNames.orchestration ? [event.instanceId] : [],
    );
    expect(new Set(rolloutInstances)).toEqual(new Set([instanceId]));

    // Every old node replaced exactly once: one replacement NodeClaim each (no other NodeClaim ever made
    // for the pool), one successful PUT per VM name.
    const finalClaims = rolledOut.claims;
    const replacementOf = finalClaims.map(
      (c) => c.metadata.annotations?.[DisruptionAnnotations.replacementOf],
    );
    expect([...replacementOf].sort()).toEqual([...originals].sort());
    const everMade = new Set(
      recorder.history.nodeClaims
        .filter((o) => o.object.metadata.labels?.[WellKnown.nodePoolLabel] === name)
        .map((o) => o.object.metadata.name),
    );
    expect([...everMade].sort()).toEqual([...originals, ...finalClaims.map((c) => c.metadata.name)].sort());
    const puts = new Map<string, number>();
    for (const r of stack.emulator.controls.requests({ kind: 'putVm' })) {
      if (r.vmName && r.status >= 200 && r.status < 300) {
        puts.set(r.vmName, (puts.get(r.vmName) ?? 0) + 1);
      }
    }
    const vmsOf = (claims: Iterable<string>) => [...claims].map((c) => vmNameFor(c));
    expect(Object.fromEntries([...puts].sort())).toEqual(
      Object.fromEntries(
        [...vmsOf(originals), ...vmsOf(finalClaims.map((c) => c.metadata.name))].sort().map((vm) => [vm, 1]),
      ),
    );

    // The budget at every recorded version of the old NodeClaims and their Nodes: never more than 2
    // disrupting, each old node disrupted once, the canary alone before wave 2, at most 2 in each wave.
    const { maxInFlight, starts } = disruptionCounts(
      recorder.history.nodeClaims,
      recorder.history.nodes,
      originals,
    );
    const startsBetween = (from: string | undefined, to: string | undefined) =>
      starts.filter((s) => s.at >= Date.parse(from ?? '') && (to === undefined || s.at < Date.parse(to)))
        .length;
    console.log(
      `disrupting at most ${maxInFlight} (budget ${BUDGET}); disruptions started per wave: ${JSON.stringify(
        waves.map((w, i) => [w.wave, startsBetween(w.startedAt, waves[i + 1]?.startedAt)]),
      )}`,
    );
    expect(maxInFlight).toBeGreaterThan(0);
    expect(maxInFlight).toBeLessThanOrEqual(BUDGET);
    expect(starts.map((s) => s.name).sort()).toEqual([...originals].sort());
    expect(startsBetween(waves[0]?.startedAt, waves[1]?.startedAt)).toBe(1);
    for (const [i, wave] of waves.entries()) {
      expect(startsBetween(wave.startedAt, waves[i + 1]?.startedAt)).toBeLessThanOrEqual(BUDGET);
    }

    // What the app said: one start, waves 2, 3 and 4 once each, the success; no gate failed.
    const events = (
      await core.listNamespacedEvent({
        namespace: 'default',
        fieldSelector: `involvedObject.name=${name},involvedObject.kind=NodePool`,
      })
    ).items.filter((e) => e.reason?.startsWith('Rollout'));
    expect(events.map((e) => e.reason).sort()).toEqual([
      'RolloutStarted',
      'RolloutSucceeded',
      'RolloutWaveStarted',
      'RolloutWaveStarted',
      'RolloutWaveStarted',
    ]);
    const waveEvents = events.filter((e) => e.reason === 'RolloutWaveStarted');
    expect(waveEvents.map((e) => Number(/wave (\d+)/.exec(e.message ?? '')?.[1])).sort()).toEqual([2, 3, 4]);
    expect(events.map((e) => e.count ?? 1)).toEqual(events.map(() => 1));

    expect(rolledOut.status).toMatchObject({
      nodes: REPLICAS,
      upToDateNodes: REPLICAS,
      readyNodes: REPLICAS,
    });
    expect(findCondition(rolledOut.status.conditions, 'RolledOut')).toMatchObject({
      status: 'True',
      reason: 'RolledOut',
    });
  } finally {
    annotation.stop();
    await relay.up();
    await objects.nodePools.delete(name).catch(() => undefined);
    for (const claim of await ofPool())
      await objects.nodeClaims.delete(claim.metadata.name).catch(() => undefined);
    if (host.running) {
      await pollUntilDefined(
        'cleanup',
        async () => ((await ofPool()).length === 0 ? true : undefined),
        60_000,
      ).catch(() => undefined);
    }
    await host.stop();
    await objects.nodeClasses.delete(name).catch(() => undefined);
  }
}, 900_000);
