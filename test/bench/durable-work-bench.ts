// What N NodeClaims cost the Durable backend over their lives, counted by the local host: a static
// NodePool of N replicas is launched for real (the control plane, Azurite, the ARM emulator through the
// real SDK, the Function App's orchestrations in the in-process host, the kubelet simulator, the event
// bridge), held until every NodeClaim is Initialized, then scaled to 0 and terminated. The host's count of
// Durable actions (as the Durable Task Scheduler bills them), replays, history events and history bytes
// is printed per NodeClaim and per orchestration type, for the launch and for the whole lifetime, with the
// peak actions/s and both extrapolated to a 1,000-node burst in a minute. The app runs with its shipped
// poll settings; VM creation takes DURABLE_BENCH_CREATE_SECONDS (default 30, a fast Azure creation), and
// the launch monitor's polls grow with it.
import { startBridge } from '../../bridge/index.js';
import { startArmEmulator } from '../../local/arm-emulator/index.js';
import { startAzurite } from '../../local/azurite/launcher.js';
import { startControlPlane } from '../../local/control-plane/launcher.js';
import type { DurableWorkSnapshot } from '../../local/host/index.js';
import { startKubeletSimulator } from '../../local/kubelet-simulator/index.js';
import {
  DURABLE_GOALS,
  durableFigureLines,
  durableFigures,
  evenBurstPeak,
} from '../../local/scenarios/day/durable-figures.js';
import { localAppSettings } from '../../local/stack/app-settings.js';
import { startFunctionApp } from '../../local/stack/function-app.js';
import { silentLogger } from '../../shared/observability/logger.js';
import { crdDirectory, initialized, nodeClassOf, nodePoolOf, sleep, sweepUntil } from './static-pool.js';

function positiveFromEnv(name: string, fallback: number): number {
  const raw = process.env[name]?.trim();
  const value = raw ? Number(raw) : fallback;
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return value;
}

/** The app's default sweep period. */
const SWEEP_INTERVAL_MS = 15_000;

const secondLabel = (snapshot: DurableWorkSnapshot, startedAt: number): string =>
  snapshot.peakActionsPerSecond
    ? `${snapshot.peakActionsPerSecond.second - Math.floor(startedAt / 1000)} s after the NodePool was created`
    : 'no action';

export async function runDurableWorkBench(): Promise<void> {
  const nodes = Math.round(positiveFromEnv('DURABLE_BENCH_NODES', 20));
  const createSeconds = positiveFromEnv('DURABLE_BENCH_CREATE_SECONDS', 30);
  const log = (line: string) => process.stderr.write(`[durable-bench] ${line}\n`);
  console.log(
    `\n== Durable work per NodeClaim: ${nodes} NodeClaims launched and terminated through the local host (VM creation ${createSeconds} s, the app's own poll settings, sweep every ${SWEEP_INTERVAL_MS / 1000} s)`,
  );
  const controlPlane = await startControlPlane({ crdDirectories: [crdDirectory], scheduler: false, log });
  const stops: (() => Promise<void>)[] = [() => controlPlane.stop()];
  try {
    const azurite = await startAzurite();
    stops.push(() => azurite.stop());
    const emulator = await startArmEmulator({
      latencies: { createMs: createSeconds * 1000, deleteMs: 10_000, retryAfterSeconds: 5 },
    });
    stops.push(() => emulator.stop());
    const queueName = 'durable-bench-events';
    const appSettings = localAppSettings({
      clusterName: 'bench',
      kubeconfigPath: controlPlane.kubeconfigPath,
      armEndpoint: emulator.url,
      armCaCertPem: emulator.caCertPem,
      bootstrapCaCertPem: emulator.caCertPem,
      storageConnectionString: azurite.connectionString,
      queueName,
      unavailableOfferingsTable: 'durablebenchofferings',
    });
    const app = await startFunctionApp({ appSettings, log: silentLogger, sweepSchedule: '0 0 0 1 1 *' });
    stops.push(() => app.stop());
    const simulator = await startKubeletSimulator({
      kubeconfigPath: controlPlane.kubeconfigPath,
      emulator,
      subscriptionId: app.settings.azure.subscriptionId,
      resourceGroup: app.settings.azure.resourceGroup,
    });
    stops.push(() => simulator.stop());
    const bridge = await startBridge({
      queue: { mode: 'connectionString', connectionString: azurite.connectionString, queueName },
      kubernetes: { mode: 'kubeconfig', kubeconfigPath: controlPlane.kubeconfigPath },
      source: '/bench/event-bridge',
      shutdownFlushSeconds: 1,
      logger: silentLogger,
    });
    stops.push(() => bridge.stop());

    const { objects } = app.deps;
    // Right after the CRDs are established their storage may still answer 429 for a moment.
    for (let attempt = 1; ; attempt++) {
      try {
        await objects.nodePools.list();
        await objects.nodeClasses.list();
        await objects.nodeClaims.list();
        break;
      } catch (error) {
        if (attempt >= 60) throw error;
        await sleep(500);
      }
    }

    // The sweep's Lease lives in the app's namespace, which the chart would have created.
    const { core } = await app.deps.kube();
    await core
      .createNamespace({ body: { metadata: { name: app.settings.systemNamespace } } })
      .catch((error: unknown) => {
        if ((error as { code?: number }).code !== 409) throw error;
      });

    const pool = `durable-n${nodes}`;
    const claims = () => objects.nodeClaims.list({ labelSelector: `karpenter.sh/nodepool=${pool}` });
    const launched = new Set<string>();
    const before = app.host.durableWork();
    if (before.total.actions > 0) log(`${before.total.actions} actions before the NodePool (not counted)`);
    const startedAt = Date.now();
    await objects.nodeClasses.create(nodeClassOf(pool));
    await objects.nodePools.create(nodePoolOf(pool, nodes));
    await sweepUntil(
      app,
      pool,
      async () => {
        const current = await claims();
        for (const claim of current) launched.add(claim.metadata.name);
        return current.length === nodes && current.every(initialized);
      },
      600_000,
      { intervalMs: SWEEP_INTERVAL_MS, checkMs: 250 },
    );
    const launchSeconds = (Date.now() - startedAt) / 1000;
    const afterLaunch = app.host.durableWork();
    log(`${nodes} NodeClaims Initialized after ${launchSeconds.toFixed(0)} s`);

    await objects.nodePools.mergePatch(pool, { spec: { replicas: 0 } });
    await sweepUntil(app, pool, async () => (await claims()).length === 0, 600_000, {
      intervalMs: SWEEP_INTERVAL_MS,
      checkMs: 250,
    });
    await app.host.waitForIdle({ timeoutMs: 120_000 }).catch(() => undefined);
    const lifetimeSeconds = (Date.now() - startedAt) / 1000;
    const afterLifetime = app.host.durableWork();
    log(`every NodeClaim gone after ${lifetimeSeconds.toFixed(0)} s`);

    const launch = durableFigures(subtract(afterLaunch, before), launched.size);
    const lifetime = durableFigures(subtract(afterLifetime, before), launched.size);
    console.log(`\nLaunch (NodePool created → ${nodes} Initialized, ${launchSeconds.toFixed(0)} s):`);
    for (const line of durableFigureLines(launch, secondLabel(afterLaunch, startedAt))) console.log(line);
    console.log(`\nLifetime (launch through termination, ${lifetimeSeconds.toFixed(0)} s):`);
    for (const line of durableFigureLines(lifetime, secondLabel(afterLifetime, startedAt))) console.log(line);
    const lifetimeWork = subtract(afterLifetime, before);
    const evenPeak = evenBurstPeak(
      lifetimeWork.actionsPerSecond,
      Math.floor(startedAt / 1000),
      launched.size,
    );
    console.log(
      `a 1,000-node burst arriving evenly over one minute, each NodeClaim's actions as this run's per NodeClaim second by second: peak ${evenPeak} actions/s (goal ≤ ${DURABLE_GOALS.burstActionsPerSecond}: ${evenPeak <= DURABLE_GOALS.burstActionsPerSecond ? 'met' : 'NOT met'}), lifetime total ${Math.round(lifetime.actionsPerNodeClaim * 1000)} actions`,
    );
    if (launched.size !== nodes)
      console.log(`(${launched.size} NodeClaims were created for ${nodes} replicas: some were replaced)`);
    await objects.nodePools.delete(pool);
    await objects.nodeClasses.delete(pool);
  } finally {
    for (const stop of stops.reverse()) await stop();
  }
}

/** The work between two snapshots of one host: counts subtract; history bytes are the later snapshot's. */
function subtract(later: DurableWorkSnapshot, earlier: DurableWorkSnapshot): DurableWorkSnapshot {
  const minus = (name: string | undefined) => (name ? earlier.byOrchestration[name] : earlier.total);
  const counts = (
    now: DurableWorkSnapshot['total'],
    then: DurableWorkSnapshot['total'] | undefined,
  ): DurableWorkSnapshot['total'] => {
    const actionsByKind = { ...now.actionsByKind };
    for (const kind of Object.keys(actionsByKind) as (keyof typeof actionsByKind)[])
      actionsByKind[kind] -= then?.actionsByKind[kind] ?? 0;
    return {
      ...now,
      actions: now.actions - (then?.actions ?? 0),
      actionsByKind,
      episodes: now.episodes - (then?.episodes ?? 0),
      historyEventsAppended: now.historyEventsAppended - (then?.historyEventsAppended ?? 0),
      activityExecutions: now.activityExecutions - (then?.activityExecutions ?? 0),
      timersCreated: now.timersCreated - (then?.timersCreated ?? 0),
      timersFired: now.timersFired - (then?.timersFired ?? 0),
      externalEventsRaised: now.externalEventsRaised - (then?.externalEventsRaised ?? 0),
      continuedAsNew: now.continuedAsNew - (then?.continuedAsNew ?? 0),
    };
  };
  const seconds = new Map(earlier.actionsPerSecond.map((entry) => [entry.second, entry.actions]));
  const actionsPerSecond = later.actionsPerSecond
    .map((entry) => ({ second: entry.second, actions: entry.actions - (seconds.get(entry.second) ?? 0) }))
    .filter((entry) => entry.actions > 0);
  const peak = actionsPerSecond.reduce<(typeof actionsPerSecond)[number] | undefined>(
    (best, entry) => (best === undefined || entry.actions > best.actions ? entry : best),
    undefined,
  );
  return {
    at: later.at,
    total: counts(later.total, minus(undefined)),
    byOrchestration: Object.fromEntries(
      Object.entries(later.byOrchestration).map(([name, now]) => [name, counts(now, minus(name))]),
    ),
    actionsPerSecond,
    peakActionsPerSecond: peak,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) await runDurableWorkBench();
