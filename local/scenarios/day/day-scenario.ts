// day: one stack, a compressed day of mixed work and bad weather, with the invariants checked on every
// recorded version all day (docs/day-in-the-life.md). Three NodePools, Deployments following a diurnal
// curve, a batch burst, PDBs, do-not-disrupt pods and a DaemonSet; zonal allocation failures, a family
// quota, throttling, slow creations, a drift with a maintenance window, expiring nodes, a node whose
// kubelet dies, a spot preemption, an API server outage and a killed function host. One seed drives the
// workload and the weather.
import { createWriteStream, type WriteStream } from 'node:fs';
import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSettings } from '../../../shared/config/settings.js';
import { decisionRecordTable } from '../../../shared/lifecycle/dependencies.js';
import { fixedTokenCredential } from '../../storage-front/server.js';
import { fixedTokenCredential as appTokenCredential } from '../../stack/function-app.js';
import { ProvisioningNames } from '../../../shared/runtime/function-names.js';
import { isConditionTrue } from '../../../shared/decisions/conditions.js';
import { ConditionTypes, type Budget, type Node } from '../../../shared/models/index.js';
import { RUN_LABEL, type LocalStack } from '../../stack/local-stack.js';
import { renderDayPictureSvg } from '../../view/day-picture-svg.js';
import {
  patience,
  waitFor,
  type Invariant,
  type Scenario,
  type ScenarioContext,
  type ScenarioOutcome,
} from '../scenario.js';
import { childHost } from './child-host.js';
import { startCollector } from './collector.js';
import { dayClock, formatHour } from './day-clock.js';
import { mergeDurableWork, type DurableWorkSnapshot } from '../../host/index.js';
import { durableFigureLines, durableFigures, type DurableFigures } from './durable-figures.js';
import { dayFigures, disruptionsOf } from './figures.js';
import { checkDay, type CheckOptions } from './invariants/index.js';
import { checkDecisionRecords, WAITED_MS } from './invariants/decision-records.js';
import type { DayHistory } from './invariants/history.js';
import {
  ALLOCATION_FAILURE_TTL_SECONDS,
  LOW_QUOTA_TTL_SECONDS,
} from '../../../shared/cloudprovider/azure/decisions/launch-errors.js';
import { describeWeather, dayPlan, type PoolPlan } from './plan.js';
import { freshSeed } from './prng.js';
import { dayRepairPolicies } from './repair-policies.js';
import { startWeather } from './weather.js';
import { dayWorkload, poolObjectName } from './workload.js';

/** Every record of the day: a day writes a few hundred windows and passes, far under this. */
const RECORDS_READ_LIMIT = 100_000;
export interface DayOptions {
  /** Drives the workload and the weather; printed, and a random one when not given. */
  seed?: number;
  /** Wall minutes the simulated 24 h take. Default 12. */
  dayMinutes?: number;
  /** Wall seconds kube-apiserver stays down. Default 60. */
  outageSeconds?: number;
  /** Adds the capacity shortage from noon (plan.ts): what provokes consolidation into a failed offering. */
  capacityShortage?: boolean;
}

export const DEFAULT_DAY_MINUTES = 12;

export function dayScenario(options: DayOptions = {}): Scenario {
  const dayMinutes = options.dayMinutes ?? DEFAULT_DAY_MINUTES;
  return {
    name: 'day',
    title: `a day in the life: a simulated 24 h in ${dayMinutes} min, every feature and the weather on one stack`,
    description:
      'Three NodePools (on-demand general purpose spread over zones, spot-allowed batch, arm64 with expiring nodes), ' +
      'Deployments following a diurnal curve, a batch burst of 200-300 pods, PDBs, do-not-disrupt pods and a DaemonSet; ' +
      'zonal allocation failures, an hour of exhausted family quota, Compute throttling, slow VM creations, an image ' +
      'change drifted in a maintenance window, a node whose kubelet dies, a spot preemption, a 60 s API server ' +
      'outage and a killed function host. Budgets, churn, ' +
      'destinations, pending time, VM PUTs, leaks, request rates and PDBs are checked on every recorded version. ' +
      `Plays only when named (${dayMinutes} min); --seed N replays a day, --day-minutes M compresses it.`,
    usesPods: true,
    ownFunctionHost: true,
    play: (context) => playDay(context, { ...options, dayMinutes }),
  };
}

async function playDay(
  context: ScenarioContext,
  options: DayOptions & { dayMinutes: number },
): Promise<ScenarioOutcome> {
  const { stack, recorder, runId, note } = context;
  if (stack.app)
    throw new Error(
      'the day runs the Function App in a process of its own: start the stack with functionHost: false',
    );
  if (!stack.controlPlane)
    throw new Error('the day stops kube-apiserver: it needs a control plane of its own, not a shared one');
  const started = Date.now();
  const seed = options.seed ?? freshSeed();
  note(
    `seed ${seed} (replay: npm start -- --scenario day --seed ${seed} --day-minutes ${options.dayMinutes} --speed ${stack.timings.speed}${options.capacityShortage ? ' --capacity-shortage' : ''})`,
  );
  const plan = dayPlan({
    seed,
    outageSeconds: options.outageSeconds ?? 60,
    ...(options.capacityShortage ? { capacityShortage: true } : {}),
  });

  const hostLog: WriteStream | undefined = context.resultsDirectory
    ? createWriteStream(join(context.resultsDirectory, 'function-host.log'), { flags: 'a' })
    : undefined;
  const recentWarnings: string[] = [];
  const stateDirectory = await mkdtemp(join(tmpdir(), 'nodeclaim-day-'));
  const durableWorkDirectory = await mkdtemp(join(tmpdir(), 'nodeclaim-day-durable-'));
  // Node repair's tolerations are durations of the day like consolidateAfter and expireAfter: the
  // Azure policies' 10 minutes of NotReady become 10 simulated minutes.
  const hostSettings = {
    ...stack.appSettings,
    REPAIR_POLICIES: dayRepairPolicies(options.dayMinutes),
  };
  const gates = new Set(
    Object.entries(loadSettings(hostSettings).featureGates)
      .filter(([, on]) => on)
      .map(([gate]) => gate),
  );
  const host = childHost(
    {
      appSettings: hostSettings,
      stateDirectory,
      durableWorkDirectory,
      sweepSchedule: stack.timings.sweepSchedule,
      ...(stack.functionsStorageToken ? { storageToken: stack.functionsStorageToken } : {}),
    },
    (line) => {
      hostLog?.write(line + '\n');
      if (/"level":"(warn|error)"/.test(line)) {
        recentWarnings.push(line);
        if (recentWarnings.length > 100) recentWarnings.shift();
      }
    },
  );
  await host.start();
  let clock = dayClock(Date.now(), options.dayMinutes);
  const collector = startCollector(
    stack,
    recorder,
    plan,
    clock,
    runId,
    context.namespace,
    Math.max(250, clock.msPerHour / 20),
  );
  const history = collector.history;
  const baseBudgets = (pool: PoolPlan): Budget[] => [{ nodes: pool.budget }];
  const workload = dayWorkload(context, plan.pools, plan.workloads, clock, (set, replicas, at) =>
    history.replicas.push({ set, replicas, at }),
  );
  try {
    await workload.create((pool) => {
      history.poolBudgets.push({
        at: Date.now(),
        pool: poolObjectName(pool.name, runId),
        budgets: baseBudgets(pool),
      });
      return baseBudgets(pool);
    });
    clock = dayClock(Date.now(), options.dayMinutes);
    note(
      `the day begins: 1 simulated hour = ${(clock.msPerHour / 1000).toFixed(1)} s; ${plan.weather.length} weather entries`,
    );
    const weather = startWeather(plan.weather, {
      stack,
      recorder,
      host,
      clock,
      runId,
      pools: plan.pools,
      baseBudgets,
      onBudgets: (pool, budgets, at) =>
        history.poolBudgets.push({ at, pool: poolObjectName(pool, runId), budgets }),
      onPoolChange: (pool, at) => history.poolChanges.push({ at, pool: poolObjectName(pool, runId) }),
      onDisturbance: (from, to, what) => history.disturbances.push({ from, to, what }),
      onBrokenNode: (node, at) => history.brokenNodes.push({ node, at }),
      note,
      daemonSet: history.daemonSet,
      doNotDisrupt: new Set(history.doNotDisruptSets),
      gates,
    });

    const t = stack.timings;
    const oneLaunchMs =
      t.vmCreateMs +
      (t.kubelet.bootDelayMs + t.kubelet.readyDelayMs + t.kubelet.startupTaintDelayMs) / t.speed;
    const checkOptions = (at: number, final: boolean): CheckOptions => ({
      slackMs: t.sweepPeriodSeconds * 1_000 + 2_000,
      // A pod may wait for a launch that fails, the one after it, and creations slowed 4×, plus the sweeps.
      pendingBoundMs: Math.max(120_000, 12 * oneLaunchMs + 6 * t.sweepPeriodSeconds * 1_000),
      stuckMs: Math.max(120_000, 10 * oneLaunchMs),
      churn: {
        noticeMs: Math.max(15_000, 4 * t.maxPollIntervalSeconds * 1_000),
        memoryMs: (code) =>
          (/Quota/i.test(code) ? LOW_QUOTA_TTL_SECONDS : ALLOCATION_FAILURE_TTL_SECONDS) * 1_000,
      },
      at,
      final,
    });

    // The day: the plan's replicas each hour, the weather as it comes, the invariants every few seconds.
    const failing = new Set<string>();
    let lastCheck = 0;
    const dayEnds = clock.wallAt(24);
    while (Date.now() < dayEnds) {
      if (context.signal.aborted) throw new Error('cancelled');
      const now = Date.now();
      weather.tick(now);
      await workload.scaleTo(clock.hourAt(now)).catch(() => undefined);
      if (now - lastCheck > 15_000) {
        lastCheck = now;
        history.injectedThrottles = weather.injectedThrottles();
        for (const invariant of checkDay(history, checkOptions(now, false)).invariants) {
          if (invariant.holds || failing.has(invariant.name)) continue;
          failing.add(invariant.name);
          note(
            `✘ at ${formatHour(clock.hourAt(now))}: ${invariant.name}: ${invariant.violations[0] ?? invariant.detail}`,
          );
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    note('the day is over: the weather clears, the cluster settles');
    await weather.clear();
    await workload.scaleTo(24).catch(() => undefined);

    // Settled: every planned pod Running, no NodeClaim deleting or not yet Initialized, for a few sweeps.
    const wanted = plan.workloads.reduce((sum, w) => sum + (w.replicasByHour[24] ?? 0), 0);
    const quietMs = 4 * t.sweepPeriodSeconds * 1_000;
    let quietSince = Date.now();
    const unsettled = (): string | undefined => {
      const pods = [...recorder.pods.values()].filter(
        (p) => !p.metadata.deletionTimestamp && p.metadata.labels?.app !== history.daemonSet,
      );
      const running = pods.filter((p) => p.status?.phase === 'Running').length;
      const busy = [...recorder.nodeClaims.values()].filter(
        (c) =>
          c.metadata.deletionTimestamp || !isConditionTrue(c.status?.conditions, ConditionTypes.initialized),
      );
      if (running === wanted && pods.length === wanted && busy.length === 0) return undefined;
      return `${running} of ${wanted} pods Running, ${busy.length} NodeClaims deleting or not Initialized`;
    };
    await waitFor(
      context,
      'the cluster to settle after the day',
      patience(stack, 20),
      () => {
        if (unsettled() !== undefined) quietSince = Date.now();
        return Date.now() - quietSince >= quietMs ? true : undefined;
      },
      () => unsettled() ?? 'settling',
    ).catch((error: unknown) => note(error instanceof Error ? error.message : String(error)));
    const endAt = Date.now();
    history.injectedThrottles = weather.injectedThrottles();
    history.end = await endState(context, endAt);

    // The end time every invariant is handed: the teardown starts here, once the end state is listed
    // (the settled day's, judged), and what the app does from now on is counted but not judged.
    const teardownAt = Date.now();
    note('tearing down: Deployments, DaemonSet and PDBs, then every NodeClaim, then the NodePools');
    await workload.deleteWorkloads();
    history.teardown = await teardown(
      context,
      plan.pools.map((pool) => poolObjectName(pool.name, runId)),
      patience(stack, 10),
    );
    collector.stop();
    // Counted again now that the collector has every request: a throttle the weather armed late (the
    // next N PUTs) can still answer the teardown's requests, which would otherwise count as Compute's.
    history.injectedThrottles = weather.injectedThrottles();

    const endChecks = checkOptions(teardownAt, true);
    const checked = checkDay(history, endChecks);
    const disruptions = disruptionsOf(history, plan, clock, runId, endChecks);
    // What the host recorded of its decisions, read from the table it wrote them to.
    const recordStore = decisionRecordTable(
      loadSettings(hostSettings),
      stack.functionsStorageToken ? fixedTokenCredential(stack.functionsStorageToken) : appTokenCredential,
      () => new Date(),
    );
    const records = [
      ...(await recordStore.recent('provisioning', RECORDS_READ_LIMIT)),
      ...(await recordStore.recent('disruption', RECORDS_READ_LIMIT)),
    ];
    const recorded = checkDecisionRecords(history, records, disruptions, endChecks.at);
    const recordStoreSize = await recordStore.size();
    const invariants = [...checked.invariants, recorded.invariant].map((i): Invariant => ({
      name: i.name,
      holds: i.holds,
      detail: [i.detail, ...i.violations].join('\n      '),
    }));
    const figures = dayFigures({
      plan,
      samples: collector.samples,
      disruptions,
      pending: checked.pending,
      pendingBoundMs: endChecks.pendingBoundMs,
      history,
      dayMinutes: options.dayMinutes,
      speed: t.speed,
      wallMs: Date.now() - started,
    });
    const durable = await dayDurableFigures(durableWorkDirectory, history);
    const durableLines = durable
      ? durableFigureLines(
          durable,
          `a second of wall time at speed ×${t.speed}; the day's 24 h pass in ${options.dayMinutes} min, so its time-paced loops (the batcher's window, drain and poll waits measured in day hours) come more often per NodeClaim than in Azure`,
          false,
        )
      : ['Durable work: no snapshot was written by the function host'];
    const hourOf = (at: number) => clock.hourAt(at);
    const picture = renderDayPictureSvg({
      title: `day (seed ${seed}): nodes, cost and pending pods over a simulated 24 h`,
      subtitle: `${options.dayMinutes} min of wall time at speed ×${t.speed}; cost ÷ lower bound ${figures.costOverLowerBound}, pending → Running p99 ${figures.pendingP99Seconds} s, ${figures.disruptions} disruptions (${figures.disruptionsPerNodeDay} per node-day); ${invariants.every((i) => i.holds) ? 'every invariant held' : 'AN INVARIANT FAILED'}`,
      hours: Math.max(24, Math.ceil(hourOf(endAt))),
      pools: plan.pools.map((p) => p.name),
      samples: collector.samples,
      disruptions: disruptions.map((d) => ({
        hour: hourOf(d.at),
        reason: d.reason,
        label: `${d.name}: ${d.reason}`,
      })),
      weather: weather.records
        .filter((r) => r.startedAt !== undefined)
        .map((r) => ({
          fromHour: hourOf(r.startedAt ?? 0),
          toHour: hourOf(r.endedAt ?? r.startedAt ?? 0),
          label: describeWeather(r.entry),
        })),
    });
    if (!invariants.every((i) => i.holds) && recentWarnings.length > 0) {
      note(`the function host's last warnings:\n${recentWarnings.slice(-20).join('\n')}`);
    }
    if (!invariants.every((i) => i.holds) && context.resultsDirectory) {
      // What a stalled pipeline leaves behind: what each of the bridge's watches saw and the batcher's
      // last execution, read before the history directory goes.
      const diagnostics = await pipelineDiagnostics(stack.bridge, stateDirectory);
      await writeFile(
        join(context.resultsDirectory, 'diagnostics.json'),
        JSON.stringify(diagnostics, null, 2),
      );
      // The control plane's own logs go with its work directory; kept here, they tell whether
      // kube-scheduler and kube-controller-manager came back from the outage.
      for (const component of stack.controlPlane.processes) {
        await copyFile(component.logPath, join(context.resultsDirectory, `${component.name}.log`)).catch(
          () => undefined,
        );
      }
      note(
        `the bridge's watches and the provisioning batcher: ${join(context.resultsDirectory, 'diagnostics.json')}`,
      );
    }
    const summary = [
      `seed ${seed}; ${options.dayMinutes} min for 24 h at speed ×${t.speed}; wall ${figures.wallSeconds} s; replay with --seed ${seed}`,
      `pools: ${plan.pools.map((p) => `${p.name} (${p.purpose})`).join('; ')}`,
      `workload: ${plan.workloads.map((w) => `${w.name} ${Math.min(...w.replicasByHour)}–${Math.max(...w.replicasByHour)}`).join(', ')} pods; DaemonSet on every node`,
      'weather:',
      ...weather.records.map(
        (r) =>
          `  ${r.notPlayed ? '–' : '•'} ${formatHour(r.entry.atHour)} ${describeWeather(r.entry)}` +
          (r.notPlayed ? ` — not played: ${r.notPlayed}` : r.outcome ? ` — ${r.outcome}` : ''),
      ),
      `nodes: ${figures.nodeClaims} NodeClaims over the day, at most ${figures.peakNodes} at once, ${figures.nodeDays} node-days; ${figures.launchFailures} launch failures`,
      `launches: ${figures.launchAttempts} VM PUTs taken up, ${Math.round(figures.firstAttemptSuccessRate * 100)}% came up the first time, ${figures.secondsLostToFailedAttempts} s lost to failed attempts${figures.failedAttempts ? ` (${figures.failedAttempts})` : ''}`,
      `disruptions: ${figures.disruptions} (${['Drifted', 'Empty', 'Underutilized', 'Expired', 'Unhealthy'].map((r) => `${r} ${figures[`disruptions${r}`] ?? 0}`).join(', ')}), ${figures.disruptionsPerNodeDay} per node-day`,
      `cost: ${figures.costOverLowerBound}× the lower bound of the requests, averaged over the day`,
      `pending → Running: p50 ${figures.pendingP50Seconds} s, p95 ${figures.pendingP95Seconds} s, p99 ${figures.pendingP99Seconds} s (${figures.pods} pods)`,
      `decision records: ${recorded.figures.podsWaitedWithRecord}/${recorded.figures.podsWaited} pods Unschedulable over ${WAITED_MS / 1000} s named (${
        Object.entries(recorded.figures.causes)
          .map(([cause, n]) => `${cause} ${n}`)
          .join(', ') || 'none'
      }), ${recorded.figures.disruptionsWithRecord}/${recorded.figures.disruptions} disruptions with reason, $/h and pods; store at the end ${recordStoreSize.provisioning.rows} window + ${recordStoreSize.disruption.rows} pass rows, ${Math.round((recordStoreSize.provisioning.storedBytes + recordStoreSize.disruption.storedBytes) / 1024)} KiB`,
      'Durable work (actions as the Durable Task Scheduler bills them):',
      ...durableLines.map((line) => `  ${line}`),
    ];
    return {
      invariants,
      summary,
      marks: [],
      figures: {
        ...figures,
        ...(durable ? flatDurableFigures(durable) : {}),
        decisionRecordRows: recordStoreSize.provisioning.rows + recordStoreSize.disruption.rows,
        decisionRecordKiB: Math.round(
          (recordStoreSize.provisioning.storedBytes + recordStoreSize.disruption.storedBytes) / 1024,
        ),
      },
      picture,
      data: {
        plan,
        samples: collector.samples,
        weather: weather.records,
        disruptions,
        disturbances: history.disturbances,
        // Small (a version per PDB status change) and what a PDB breach is read against.
        pdbStatuses: history.pdbStatuses,
        ...(durable ? { durableWork: durable } : {}),
      },
    };
  } finally {
    collector.stop();
    await host.stop();
    await rm(stateDirectory, { recursive: true, force: true });
    await rm(durableWorkDirectory, { recursive: true, force: true });
    await new Promise<void>((resolve) => (hostLog ? hostLog.end(resolve) : resolve()));
  }
}

/** The bridge's counters and watches, and the provisioning batcher's stored instance (its last window). */
async function pipelineDiagnostics(bridge: LocalStack['bridge'], stateDirectory: string): Promise<unknown> {
  const batcherFile = join(stateDirectory, `${encodeURIComponent(ProvisioningNames.instanceId)}.json`);
  const batcher = await readFile(batcherFile, 'utf8').then(
    (text): unknown => JSON.parse(text),
    (error: unknown) => `not read: ${error instanceof Error ? error.message : String(error)}`,
  );
  return { at: new Date().toISOString(), bridge: bridge.stats(), provisioningBatcher: batcher };
}

/** The run's VMs, NodeClaims and Nodes as listed now: what checkEndState judges (the scale scenario too). */
export async function endState(context: ScenarioContext, at: number) {
  const { stack, runId, recorder } = context;
  const firstSeen: Record<string, number> = {};
  for (const { object, at: seen } of recorder.history.nodeClaims) firstSeen[object.metadata.name] ??= seen;
  const nodeClaims = await stack.admin.objects.nodeClaims.list({ labelSelector: `${RUN_LABEL}=${runId}` });
  const nodes = (await context.core.listNode()).items
    .filter((n) => n.metadata?.name?.includes(runId))
    .map((n) => n as unknown as Node);
  const vms = stack.emulator.controls
    .vms()
    .filter((vm) => vm.resourceGroup === stack.resourceGroup)
    .map((vm) => ({ name: vm.name, provisioningState: vm.provisioningState }));
  return { at, vms, nodeClaims, nodes, firstSeen };
}

/**
 * Deletes every NodeClaim of the run, then the NodePools and their AKSNodeClasses (`poolNames`: each
 * pool's object name, which its class shares), and counts what is left. The scale scenario reuses it.
 */
export async function teardown(context: ScenarioContext, poolNames: readonly string[], timeoutMs: number) {
  const { stack, runId } = context;
  const objects = stack.admin.objects;
  const selector = `${RUN_LABEL}=${runId}`;
  for (const pool of poolNames)
    await objects.nodePools
      .mergePatch(pool, { spec: { disruption: { budgets: [{ nodes: '0' }] } } })
      .catch(() => undefined);
  // Delete until none is left, not once: a provisioning window that solved before the workloads went
  // may still create a NodeClaim after the first list, and the NodePool still exists to launch it.
  const deleteNodeClaims = async (): Promise<void> => {
    for (const claim of await objects.nodeClaims.list({ labelSelector: selector }))
      if (!claim.metadata.deletionTimestamp)
        await objects.nodeClaims.delete(claim.metadata.name).catch(() => undefined);
  };
  await deleteNodeClaims();
  const count = async () => ({
    nodeClaims: (await objects.nodeClaims.list({ labelSelector: selector })).length,
    nodes: (await context.core.listNode()).items.filter((n) => n.metadata?.name?.includes(runId)).length,
    vms: stack.emulator.controls.vms().filter((vm) => vm.resourceGroup === stack.resourceGroup).length,
  });
  const deadline = Date.now() + timeoutMs;
  let left = await count();
  while (left.nodeClaims + left.nodes + left.vms > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await deleteNodeClaims();
    left = await count();
  }
  for (const pool of poolNames) {
    await objects.nodePools.delete(pool).catch(() => undefined);
    await objects.nodeClasses.delete(pool).catch(() => undefined);
  }
  return left;
}

/**
 * The Durable work of every host process of the day, merged, per NodeClaim that launched (one with a
 * providerID in any version the recorder saw). The running host writes its count every second: waiting a
 * little more than that takes the count of the day's end.
 */
async function dayDurableFigures(
  directory: string,
  history: Pick<DayHistory, 'nodeClaims'>,
): Promise<DurableFigures | undefined> {
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  const names = (await readdir(directory)).filter((name) => /^durable-work-\d+\.json$/.test(name));
  if (names.length === 0) return undefined;
  const snapshots = await Promise.all(
    names.map(
      async (name) => JSON.parse(await readFile(join(directory, name), 'utf8')) as DurableWorkSnapshot,
    ),
  );
  const launched = new Set(
    history.nodeClaims.filter((v) => v.object.status?.providerID).map((v) => v.object.metadata.name),
  );
  return durableFigures(mergeDurableWork(snapshots), launched.size);
}

/** The headline Durable figures as numbers of the day's figures (the rest go with the data). */
function flatDurableFigures(durable: DurableFigures): Record<string, number> {
  return {
    durableActions: durable.actions,
    durableLaunchedNodeClaims: durable.nodeClaims,
    durableActionsPerNodeClaim: durable.actionsPerNodeClaim,
    durablePeakActionsPerSecond: durable.peakActionsPerSecond,
    durableHistoryBytesPerNodeClaim: durable.historyBytesPerNodeClaim,
    ...Object.fromEntries(
      durable.byOrchestration.map((row) => [
        `durableActionsPerNodeClaim.${row.name}`,
        row.actionsPerNodeClaim,
      ]),
    ),
  };
}
