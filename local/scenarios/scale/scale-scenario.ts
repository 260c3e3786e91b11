// scale: one stack carried through the size of a real cluster and back. N nodes' worth of pending pods
// (five Deployments over three NodePools, three of them zone-spread) bring the cluster from zero to N
// nodes; an image change drifts every node at a 10% budget; the Deployments shrink to 30% and
// consolidation must follow; then the workloads go and every NodeClaim with them. The day's collector
// records the history and the day's pure invariants judge it, so both scenarios hold the system to the
// same rules; what this one adds is the figures that grow with N (docs/day-in-the-life.md, "Scale").
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { PatchStrategy, setHeaderOptions, type V1Deployment } from '@kubernetes/client-node';
import { isConditionTrue } from '../../../shared/decisions/conditions.js';
import { disruptionReasonOf } from '../../../shared/decisions/disruption-state.js';
import { RolloutAnnotations } from '../../../shared/decisions/rollout.js';
import {
  ConditionTypes,
  WellKnown,
  type AKSNodeClass,
  type Budget,
  type NodeClaim,
  type NodePool,
} from '../../../shared/models/index.js';
import { RUN_LABEL } from '../../stack/local-stack.js';
import { pauseContainer, zoneSpread } from '../deployment-set.js';
import {
  agentStartupTaint,
  onDemandDFamily,
  patience,
  waitFor,
  type Invariant,
  type Scenario,
  type ScenarioContext,
  type ScenarioOutcome,
  type WaitProgress,
} from '../scenario.js';
import { startCollector } from '../day/collector.js';
import { dayClock } from '../day/day-clock.js';
import { endState, teardown } from '../day/day-scenario.js';
import {
  flatRunDurableFigures,
  runDurableFigures,
  runDurableLines,
  type RunDurableFigures,
} from '../day/durable-figures.js';
import { checkBudgets } from '../day/invariants/budgets.js';
import { checkEndState } from '../day/invariants/end-state.js';
import { firstOrigin, type ApiServerSample, type InvariantResult } from '../day/invariants/history.js';
import { checkPending, percentile } from '../day/invariants/pending.js';
import {
  COMPUTE_LIMITS_PER_MINUTE,
  checkArmRates,
  checkKubernetesRates,
  counterGrowth,
  counterRates,
  peakInWindow,
} from '../day/invariants/request-rates.js';
import { checkVmPuts } from '../day/invariants/vm-puts.js';
import {
  POD_REQUESTS,
  SCALE_POOLS,
  SCALE_WORKLOADS,
  driftBudgetBusy,
  idealDriftMakespanMs,
  mean,
  median,
  packingMinimum,
  pendingToVmPut,
  replicasFor,
  scaledReplicas,
  sweepAtSize,
  sweepSamples,
  type ScaleWorkload,
} from './scale-figures.js';

export interface ScaleOptions {
  /** The size the scale-up aims at: N nodes' worth of pods at about ten pods a node. */
  nodes?: number;
}

/** What passes on this 2-core machine in a few minutes at --speed 4 (docs/day-in-the-life.md, "Scale"). */
export const DEFAULT_SCALE_NODES = 50;
const DRIFT_BUDGET_PERCENT = 10;
const SCALE_DOWN_FRACTION = 0.3;
const DRIFTED_IMAGE_FAMILY = 'AzureLinux';
const SCALE_ZONES = ['1', '2', '3'] as const;

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

export function scaleScenario(options: ScaleOptions = {}): Scenario {
  const nodes = options.nodes ?? DEFAULT_SCALE_NODES;
  return {
    name: 'scale',
    title: `scale: 0 → ${nodes} nodes, a drift of every node at ${DRIFT_BUDGET_PERCENT}%, down to ${SCALE_DOWN_FRACTION * 100}%, teardown`,
    description:
      `0 → N nodes (--nodes, default ${DEFAULT_SCALE_NODES}) from pending pods: five Deployments over three NodePools, ` +
      `three spread over zones with maxSkew 1, about ten pods a node; then an image change drifts every node at a ` +
      `${DRIFT_BUDGET_PERCENT}% budget; then the Deployments shrink to ${SCALE_DOWN_FRACTION * 100}% and consolidation ` +
      `follows; then the workloads go and every NodeClaim with them. The day's invariants (budgets, one VM PUT per ` +
      'NodeClaim, no leaks, pending bound, request rates) judge the history; the summary gives time to N nodes, ' +
      'PUT latency, the drift makespan ratio, peak RSS and the sweep at size. Plays only when named.',
    usesPods: true,
    clusterScale: true,
    play: (context) => playScale(context, nodes),
  };
}

const objectName = (name: string, runId: string): string => `${name}-${runId}`;

function nodeClassFor(name: string, runId: string): AKSNodeClass {
  return {
    apiVersion: 'karpenter.azure.com/v1beta1',
    kind: 'AKSNodeClass',
    metadata: { name, labels: { [RUN_LABEL]: runId } },
    spec: { imageFamily: 'Ubuntu2204' },
  };
}

function nodePoolFor(name: string, runId: string, budgets: Budget[]): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    // The drift's figure is the budget's fan-out (makespan ÷ ceil(N/B) cycles), so the pools opt out of
    // the canary rollout drift is by default: a canary and soaks would measure the gates instead.
    metadata: {
      name,
      labels: { [RUN_LABEL]: runId },
      annotations: { [RolloutAnnotations.policy]: 'Immediate' },
    },
    spec: {
      // No consolidation until the scale-down: the drift's replacements are the only disruptions before.
      disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: 'Never', budgets },
      template: {
        metadata: { labels: { [RUN_LABEL]: runId } },
        spec: {
          nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name },
          startupTaints: [agentStartupTaint],
          expireAfter: 'Never',
          // 2-vCPU D sizes only: the pods' requests make about ten of them fill one, so N is the node count.
          // The three zones only: a regional (zoneless) node would be a fourth spread domain the
          // zone-spread Deployments must fill too.
          requirements: [
            ...onDemandDFamily(3),
            { key: WellKnown.zoneLabel, operator: 'In', values: SCALE_ZONES.map((z) => `westus2-${z}`) },
          ],
        },
      },
    },
  };
}

function deploymentFor(workload: ScaleWorkload, runId: string, replicas: number): V1Deployment {
  const labels = { app: objectName(workload.name, runId), [RUN_LABEL]: runId };
  return {
    metadata: { name: objectName(workload.name, runId), labels },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          terminationGracePeriodSeconds: 1,
          nodeSelector: { [WellKnown.nodePoolLabel]: objectName(workload.pool, runId) },
          ...(workload.zoneSpread ? { topologySpreadConstraints: [zoneSpread(labels)] } : {}),
          containers: [pauseContainer(POD_REQUESTS)],
        },
      },
    },
  };
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

async function playScale(context: ScenarioContext, targetNodes: number): Promise<ScenarioOutcome> {
  const { stack, recorder, runId, note, apps, namespace } = context;
  if (!Number.isInteger(targetNodes) || targetNodes < 3)
    throw new Error(`--nodes must be an integer of at least 3, got ${targetNodes}`);
  const t = stack.timings;
  const started = Date.now();
  // The collector wants a day's plan for its picture samples; the scale scenario has no pools of the
  // day's kind, so its samples stay empty and only the history is kept.
  const collector = startCollector(
    stack,
    recorder,
    { seed: 0, pools: [], workloads: [], weather: [] },
    dayClock(started, 24 * 60),
    runId,
    namespace,
    5_000,
  );
  const history = collector.history;
  let peakRss = process.memoryUsage().rss;
  const rssTimer = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 1_000);
  // How long the process's event loop was held at a time: everything in-process (the function host's
  // handlers and timers, the bridge, the emulator, the simulator's kubelets) waits that long for its turn.
  const loopDelay = monitorEventLoopDelay({ resolution: 20 });
  loopDelay.enable();
  const poolNames = SCALE_POOLS.map((pool) => objectName(pool, runId));
  const budgets: Budget[] = [{ nodes: `${DRIFT_BUDGET_PERCENT}%` }];
  const replicas = replicasFor(targetNodes);
  const totalPods = replicas.reduce((sum, r) => sum + r, 0);
  const oneLaunchMs =
    t.vmCreateMs + (t.kubelet.bootDelayMs + t.kubelet.readyDelayMs + t.kubelet.startupTaintDelayMs) / t.speed;
  // Stated bounds, growing with N: the Compute PUT bucket, the scheduler and the simulator all take longer
  // per node as the cluster grows, and the machine has two cores for all of it.
  const perNodeMs = 1_500 / Math.min(t.speed, 4);
  const scaleUpBoundMs = patience(stack, 10, targetNodes * perNodeMs);
  const pendingBoundMs = Math.max(180_000, 12 * oneLaunchMs) + targetNodes * perNodeMs;

  const claims = (): NodeClaim[] => [...recorder.nodeClaims.values()];
  const livePods = () => [...recorder.pods.values()].filter((p) => !p.metadata.deletionTimestamp);
  const runningCount = (): number => livePods().filter((p) => p.status?.phase === 'Running').length;
  const busyClaims = (): NodeClaim[] =>
    claims().filter(
      (c) =>
        c.metadata.deletionTimestamp || !isConditionTrue(c.status?.conditions, ConditionTypes.initialized),
    );
  const settledWith = (pods: number): string | undefined => {
    const running = runningCount();
    const busy = busyClaims().length;
    const live = livePods().length;
    return running === pods && live === pods && busy === 0
      ? undefined
      : `${running} of ${pods} pods Running (${live} live), ${busy} of ${claims().length} NodeClaims deleting or not Initialized`;
  };
  // Waits sized for N go on past their bound while the cluster keeps moving (a 2-core machine carrying
  // 1,000 nodes is slow, not stuck), and fail once nothing moved for three minutes, or at four times
  // the bound. The pending invariant still judges every pod against its stated bound.
  const moving = (boundMs: number): WaitProgress => ({
    progress: () => {
      const all = claims();
      const initialized = all.filter((c) =>
        isConditionTrue(c.status?.conditions, ConditionTypes.initialized),
      ).length;
      return runningCount() + 20_000 * initialized + 20_000 * 20_000 * all.length;
    },
    stalledMs: 180_000,
    ceilingMs: 4 * boundMs,
  });
  const claimsByPool = (): Map<string, number> => {
    const byPool = new Map(poolNames.map((p) => [p, 0]));
    for (const claim of claims()) {
      const pool = claim.metadata.labels?.[WellKnown.nodePoolLabel] ?? '';
      byPool.set(pool, (byPool.get(pool) ?? 0) + 1);
    }
    return byPool;
  };
  const objects = stack.admin.objects;

  try {
    // 1. From zero to N nodes.
    for (const pool of poolNames) {
      await objects.nodeClasses.create(nodeClassFor(pool, runId));
      await objects.nodePools.create(nodePoolFor(pool, runId, budgets));
      history.poolBudgets.push({ at: Date.now(), pool, budgets });
    }
    const upStarted = Date.now();
    for (const [index, workload] of SCALE_WORKLOADS.entries()) {
      const count = replicas[index] ?? 1;
      await apps.createNamespacedDeployment({ namespace, body: deploymentFor(workload, runId, count) });
      history.replicas.push({ set: objectName(workload.name, runId), replicas: count, at: Date.now() });
    }
    note(
      `created ${SCALE_WORKLOADS.length} Deployments, ${totalPods} pods (${POD_REQUESTS.cpu}/${POD_REQUESTS.memory} each) over ${poolNames.length} NodePools: ~${targetNodes} nodes' worth`,
    );
    let allRunningAt: number | undefined;
    let lastProgress = 0;
    await waitFor(
      context,
      `all ${totalPods} pods Running and every NodeClaim Initialized`,
      scaleUpBoundMs,
      () => {
        if (Date.now() - lastProgress > 15_000) {
          lastProgress = Date.now();
          note(`scale-up: ${settledWith(totalPods) ?? 'settled'}`);
        }
        if (allRunningAt === undefined && runningCount() >= totalPods) allRunningAt = Date.now();
        return settledWith(totalPods) === undefined ? true : undefined;
      },
      () => settledWith(totalPods) ?? '',
      moving(scaleUpBoundMs),
    );
    const upSettledAt = Date.now();
    allRunningAt ??= upSettledAt;
    const peakClaims = claims();
    const peakNodes = peakClaims.length;
    const claimOfNode = new Map(peakClaims.map((c) => [c.status?.nodeName ?? '', c.metadata.name]));
    const podsPerNode = totalPods / peakNodes;
    note(
      `scale-up: ${peakNodes} nodes Initialized and ${totalPods} pods Running ${seconds(upSettledAt - upStarted)} after the Deployments (${podsPerNode.toFixed(1)} pods a node)`,
    );

    // 2. A drift of every node at a 10% budget.
    const nodesByPoolBefore = claimsByPool();
    const driftedNames = new Set(peakClaims.map((c) => c.metadata.name));
    const driftStarted = Date.now();
    for (const pool of poolNames) {
      await objects.nodeClasses.mergePatch(pool, { spec: { imageFamily: DRIFTED_IMAGE_FAMILY } });
      history.poolChanges.push({ at: Date.now(), pool });
    }
    note(
      `drift: every AKSNodeClass's imageFamily is now ${DRIFTED_IMAGE_FAMILY}; budget ${budgets[0]?.nodes}`,
    );
    const driftBoundMs = patience(stack, 40, targetNodes * 3 * perNodeMs);
    lastProgress = 0;
    await waitFor(
      context,
      `every drifted NodeClaim replaced and the cluster settled`,
      driftBoundMs,
      () => {
        const left = claims().filter((c) => driftedNames.has(c.metadata.name)).length;
        if (Date.now() - lastProgress > 15_000) {
          lastProgress = Date.now();
          note(`drift: ${left} of ${driftedNames.size} drifted NodeClaims left`);
        }
        return left === 0 && settledWith(totalPods) === undefined ? true : undefined;
      },
      () =>
        `${claims().filter((c) => driftedNames.has(c.metadata.name)).length} drifted left; ${settledWith(totalPods) ?? 'settled'}`,
      moving(driftBoundMs),
    );
    const driftSettledAt = Date.now();
    const markedAt = new Map<string, number>();
    const goneAt = new Map<string, number>();
    for (const { object, type, at } of recorder.history.nodeClaims) {
      const name = object.metadata.name;
      if (!driftedNames.has(name)) continue;
      if (!markedAt.has(name) && disruptionReasonOf(object) === 'Drifted') markedAt.set(name, at);
      if (type === 'DELETED') goneAt.set(name, at);
    }
    const cycles = [...markedAt].flatMap(([name, at]) => {
      const gone = goneAt.get(name);
      return gone === undefined ? [] : [gone - at];
    });
    const cycleMs = median(cycles);
    const lastGone = Math.max(...goneAt.values(), driftStarted);
    const driftMakespanMs = lastGone - driftStarted;
    const ideal = idealDriftMakespanMs(nodesByPoolBefore, DRIFT_BUDGET_PERCENT, cycleMs);
    const driftRatio = ideal.ms > 0 ? driftMakespanMs / ideal.ms : NaN;
    const budgetBusy = driftBudgetBusy(nodesByPoolBefore, DRIFT_BUDGET_PERCENT, cycles, driftMakespanMs);
    note(
      `drift: ${driftedNames.size} nodes replaced in ${seconds(driftMakespanMs)}; one replacement ${seconds(cycleMs)} (median); ` +
        `${ideal.waves} waves at best → ratio ${driftRatio.toFixed(2)}`,
    );

    // 3. Down to 30%: consolidation must follow.
    const downReplicas = scaledReplicas(replicas, SCALE_DOWN_FRACTION);
    const downPods = downReplicas.reduce((sum, r) => sum + r, 0);
    const podsByPool = new Map<string, { pods: number; spread: boolean }>();
    for (const [index, workload] of SCALE_WORKLOADS.entries()) {
      const entry = podsByPool.get(workload.pool) ?? { pods: 0, spread: false };
      entry.pods += downReplicas[index] ?? 0;
      entry.spread ||= workload.zoneSpread;
      podsByPool.set(workload.pool, entry);
    }
    const minimum = packingMinimum(podsByPool);
    // Consolidation moves pods only where the move saves a node; spread constraints and the 10% budget
    // leave some slack: a fifth over the packing minimum, and one node a pool.
    const downBound = Math.ceil(minimum * 1.2) + poolNames.length;
    const downStarted = Date.now();
    for (const pool of poolNames) {
      await objects.nodePools.mergePatch(pool, { spec: { disruption: { consolidateAfter: '0s' } } });
      history.poolChanges.push({ at: Date.now(), pool });
    }
    let costed = 0;
    for (const [index, workload] of SCALE_WORKLOADS.entries())
      if (workload.zoneSpread)
        costed += await chooseZoneBalancedSurvivors(context, workload, downReplicas[index] ?? 1);
    for (const [index, workload] of SCALE_WORKLOADS.entries()) {
      const count = downReplicas[index] ?? 1;
      await apps.patchNamespacedDeploymentScale(
        { name: objectName(workload.name, runId), namespace, body: { spec: { replicas: count } } },
        mergePatch,
      );
      history.replicas.push({ set: objectName(workload.name, runId), replicas: count, at: Date.now() });
    }
    note(
      `scale-down: ${costed} zone-spread pods given a low pod-deletion-cost, so the ReplicaSets keep each spread balanced`,
    );
    note(
      `scale-down: ${totalPods} → ${downPods} pods; consolidation must bring ${claims().length} nodes to at most ${downBound} (packing minimum ${minimum})`,
    );
    // Single-node consolidation removes about one node a validation period per pool: the deadline grows
    // with the surplus it must remove (a deadline for a stuck stack, not a measure of speed).
    const surplus = Math.max(0, claims().length - downBound);
    const downTimeoutMs = patience(
      stack,
      40,
      surplus * (t.consolidationValidationSeconds * 1_000 + oneLaunchMs),
    );
    lastProgress = 0;
    let downReachedAt: number | undefined;
    const downState = (): string =>
      `${claims().length} NodeClaims (bound ${downBound}); ${settledWith(downPods) ?? 'pods settled'}`;
    await waitFor(
      context,
      `consolidation down to at most ${downBound} nodes`,
      downTimeoutMs,
      () => {
        if (Date.now() - lastProgress > 15_000) {
          lastProgress = Date.now();
          note(`scale-down: ${downState()}`);
        }
        return claims().length <= downBound && settledWith(downPods) === undefined ? true : undefined;
      },
      downState,
      moving(downTimeoutMs),
    )
      .then(() => (downReachedAt = Date.now()))
      .catch((error: unknown) => note(error instanceof Error ? error.message : String(error)));
    const downNodes = claims().length;
    if (downReachedAt !== undefined)
      note(`scale-down: ${downNodes} nodes ${seconds(downReachedAt - downStarted)} after the scale-down`);

    // 4. Teardown: workloads first, then NodeClaims until none is left (the day's), then the pools.
    const endAt = Date.now();
    history.end = await endState(context, endAt);
    note('teardown: Deployments, then every NodeClaim until none is left, then the NodePools');
    await Promise.all(
      SCALE_WORKLOADS.map((w) =>
        apps
          .deleteNamespacedDeployment({ namespace, name: objectName(w.name, runId) })
          .catch(() => undefined),
      ),
    );
    await waitFor(context, 'the pods to be gone', patience(stack, 4), () =>
      recorder.pods.size === 0 ? true : undefined,
    ).catch((error: unknown) => note(error instanceof Error ? error.message : String(error)));
    // The end time every invariant is handed, as the day's (CheckOptions.at): from here the harness, as a
    // user would, sets every budget to 0 and deletes every NodeClaim, and what the app does is counted but
    // not judged. Not from the Deployments' deletion: with no PDBs to take away, what follows it is
    // consolidation of the emptied nodes at the drift's budget, which is judged.
    const teardownStarted = Date.now();
    history.teardown = await teardown(context, poolNames, patience(stack, 10, targetNodes * perNodeMs));
    const teardownMs = Date.now() - teardownStarted;
    collector.stop();

    // The invariants of the day this scenario names, on this history, judged until the teardown's start.
    const origin = firstOrigin(history);
    const slackMs = t.sweepPeriodSeconds * 1_000 + 2_000;
    const pending = checkPending(history, pendingBoundMs, teardownStarted);
    const checked: InvariantResult[] = [
      checkBudgets(history, slackMs, origin, teardownStarted),
      checkVmPuts(history),
      checkEndState(history, Math.max(120_000, 10 * oneLaunchMs)),
      pending.invariant,
      checkArmRates(history),
      checkKubernetesRates(history.apiServer),
    ];
    const invariants: Invariant[] = [
      ...checked.map((i) => ({
        name: i.name,
        holds: i.holds,
        detail: [i.detail, ...i.violations].join('\n      '),
      })),
      {
        // The wait above goes on past the bound while things move (up to four times it), so the bound
        // is judged here, on the time it took.
        name: `all ${totalPods} pods Running on Initialized nodes within ${seconds(scaleUpBoundMs)}`,
        holds: upSettledAt - upStarted <= scaleUpBoundMs,
        detail: `${peakNodes} nodes, all pods Running ${seconds(allRunningAt - upStarted)} and every node Initialized ${seconds(upSettledAt - upStarted)} after the Deployments`,
      },
      {
        name: 'every node of the scale-up replaced by the drift',
        holds: cycles.length === driftedNames.size,
        detail: `${cycles.length} of ${driftedNames.size} marked Drifted and deleted; ${driftedNames.size - markedAt.size} never marked`,
      },
      {
        name: `consolidation reaches at most ${downBound} nodes (packing minimum ${minimum} + 20% + 1 a pool) within ${seconds(downTimeoutMs)}`,
        holds: downReachedAt !== undefined && downReachedAt - downStarted <= downTimeoutMs,
        detail:
          downReachedAt !== undefined
            ? `${downNodes} nodes ${seconds(downReachedAt - downStarted)} after the scale-down`
            : `${downNodes} nodes when the wait ended`,
      },
    ];

    // Figures.
    const putWaits = pendingToVmPut(history, claimOfNode, upStarted, upSettledAt);
    const armPeaks: Record<string, number> = {};
    for (const kind of Object.keys(COMPUTE_LIMITS_PER_MINUTE)) {
      const times = history.armRequests.filter((r) => r.kind === kind).map((r) => r.at);
      if (times.length > 0) armPeaks[kind] = peakInWindow(times, 60_000);
    }
    const api = history.apiServer;
    const rates = (counter: (sample: ApiServerSample) => number) => counterRates(api, counter);
    const allRequests = rates((s) => s.requestsTotal);
    const appRequests = rates((s) => s.appDispatchedTotal);
    const appRejected = counterGrowth(api.map((s) => s.appRejectedTotal));
    const sweep = await sweepFigures(context, started, Date.now(), peakNodes);
    const status = await readFile('/proc/self/status', 'utf8').catch(() => '');
    const hwmKiB = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
    peakRss = Math.max(peakRss, hwmKiB * 1024);
    const apiServerHwm = await apiServerPeakRss(stack);
    const mib = (bytes: number): number => Math.round(bytes / 1024 / 1024);
    const durable = scaleDurableFigures(context, started);

    const figures: Record<string, number | string> = {
      targetNodes,
      pods: totalPods,
      peakNodes,
      podsPerNode: Number(podsPerNode.toFixed(2)),
      allRunningMs: allRunningAt - upStarted,
      allInitializedAndRunningMs: upSettledAt - upStarted,
      pendingToVmPutP50Ms: percentile(putWaits, 50),
      pendingToVmPutP99Ms: percentile(putWaits, 99),
      pendingToRunningP50Ms: pending.figures.p50Ms,
      pendingToRunningP99Ms: pending.figures.p99Ms,
      pendingBoundMs,
      driftedNodes: driftedNames.size,
      driftMakespanMs,
      driftSettledMs: driftSettledAt - driftStarted,
      replacementCycleMedianMs: cycleMs,
      replacementCycleP90Ms: percentile(
        [...cycles].sort((a, b) => a - b),
        90,
      ),
      driftWaves: ideal.waves,
      driftIdealMakespanMs: ideal.ms,
      driftMakespanRatio: Number(driftRatio.toFixed(3)),
      driftBudgetBusy: Number(budgetBusy.toFixed(3)),
      replacementCycleMeanMs: Math.round(mean(cycles)),
      scaleDownPods: downPods,
      scaleDownBoundNodes: downBound,
      scaleDownPackingMinimum: minimum,
      scaleDownNodes: downNodes,
      scaleDownMs: downReachedAt !== undefined ? downReachedAt - downStarted : 'not reached',
      teardownMs,
      peakRssMiB: mib(peakRss),
      eventLoopDelayP99Ms: Math.round(loopDelay.percentile(99) / 1e6),
      eventLoopDelayMaxMs: Math.round(loopDelay.max / 1e6),
      ...(apiServerHwm !== undefined ? { kubeApiServerPeakRssMiB: mib(apiServerHwm) } : {}),
      apiServerRequestsPerSecondMean: allRequests.mean,
      apiServerRequestsPerSecondPeak: allRequests.peak,
      appRequestsPerSecondMean: appRequests.mean,
      appRequestsPerSecondPeak: appRequests.peak,
      appRequestsRejected: appRejected,
      ...Object.fromEntries(
        Object.entries(armPeaks).map(([kind, peak]) => [`arm.${kind}.peakPerMinute`, peak]),
      ),
      sweepsAtFullSize: sweep?.sweeps ?? 'no stack log',
      sweepAtFullSizeP50Ms: sweep?.p50Ms ?? 'no stack log',
      sweepAtFullSizeMaxMs: sweep?.maxMs ?? 'no stack log',
      ...(durable ? flatRunDurableFigures(durable) : { durableWork: 'no in-process function host' }),
      speed: t.speed,
      wallMs: Date.now() - started,
    };
    const armLine = Object.entries(armPeaks)
      .map(
        ([kind, peak]) =>
          `${kind} ${peak}/min (${((100 * peak) / (COMPUTE_LIMITS_PER_MINUTE[kind] ?? 1)).toFixed(0)}% of ${COMPUTE_LIMITS_PER_MINUTE[kind]})`,
      )
      .join(', ');
    const summary = [
      `N = ${targetNodes}: ${totalPods} pods in ${SCALE_WORKLOADS.length} Deployments over ${poolNames.length} NodePools (${SCALE_WORKLOADS.filter((w) => w.zoneSpread).length} zone-spread, maxSkew 1); speed ×${t.speed}`,
      `scale-up: ${peakNodes} nodes (${podsPerNode.toFixed(1)} pods a node); all pods Running in ${seconds(allRunningAt - upStarted)}, every node Initialized and every pod Running in ${seconds(upSettledAt - upStarted)}`,
      `pending → VM PUT: p50 ${seconds(percentile(putWaits, 50))}, p99 ${seconds(percentile(putWaits, 99))}; pending → Running p50 ${seconds(pending.figures.p50Ms)}, p99 ${seconds(pending.figures.p99Ms)}`,
      `drift of ${driftedNames.size} nodes at ${DRIFT_BUDGET_PERCENT}%: makespan ${seconds(driftMakespanMs)} ÷ (${ideal.waves} waves × one replacement ${seconds(cycleMs)} median) = ${driftRatio.toFixed(2)} (goal ≤ 1.1); the budgets kept ${(100 * budgetBusy).toFixed(0)}% busy, one replacement ${seconds(mean(cycles))} on average`,
      `scale-down to ${downPods} pods: ${downReachedAt !== undefined ? `${downNodes} nodes in ${seconds(downReachedAt - downStarted)}` : `not reached (${downNodes} nodes)`} (bound ${downBound}, packing minimum ${minimum})`,
      `teardown: ${seconds(teardownMs)}; left ${history.teardown.vms} VMs, ${history.teardown.nodes} Nodes, ${history.teardown.nodeClaims} NodeClaims`,
      `peak RSS ${mib(peakRss)} MiB for the process that runs the function host, the bridge, the ARM emulator, the kubelet simulator and the recorder (all in-process)` +
        (apiServerHwm !== undefined ? `; kube-apiserver ${mib(apiServerHwm)} MiB` : ''),
      `that process's event loop held up: p99 ${figures.eventLoopDelayP99Ms} ms, max ${seconds(Number(figures.eventLoopDelayMaxMs))} (the simulated kubelets renew their Leases from a process of their own)`,
      `API server: ${figures.apiServerRequestsPerSecondMean} requests/s on average, ${figures.apiServerRequestsPerSecondPeak} at peak (every client: the app, the bridge, the simulated kubelets, the control plane, the recorder); the app's (flow schema global-default: the functions and the bridge) ${figures.appRequestsPerSecondMean} on average, ${figures.appRequestsPerSecondPeak} at peak, ${figures.appRequestsRejected} rejected`,
      `ARM: ${armLine}`,
      sweep
        ? `lifecycle sweep with ≥ ${peakNodes} Nodes: p50 ${seconds(sweep.p50Ms)}, max ${seconds(sweep.maxMs)} over ${sweep.sweeps} sweeps (period ${t.sweepPeriodSeconds} s); slowest parts (p50 / max): ${sweep.slowestParts.map((p) => `${p.part} ${seconds(p.p50Ms)} / ${seconds(p.maxMs)}`).join(', ') || 'none'}`
        : 'lifecycle sweep: no stack log to read (only `npm start` writes one)',
      ...(durable
        ? [
            'Durable work (actions as the Durable Task Scheduler bills them):',
            ...runDurableLines(durable, peakNodes).map((line) => `  ${line}`),
          ]
        : [
            'Durable work: not measured (the stack runs without the in-process function host, which counts it)',
          ]),
    ];
    return {
      invariants,
      summary,
      marks: [],
      figures,
      data: {
        sweeps: sweep?.samples ?? [],
        replacementCyclesMs: cycles,
        ...(durable ? { durableWork: durable } : {}),
      },
    };
  } finally {
    clearInterval(rssTimer);
    loopDelay.disable();
    collector.stop();
  }
}

/**
 * Annotates the pods of a zone-spread Deployment that its scale-down should remove with a low
 * controller.kubernetes.io/pod-deletion-cost, and returns how many. A ReplicaSet picks the pods it deletes
 * without regard to zones: left to it, a scale-down to 30% leaves one zone far above the others, and
 * then DoNotSchedule forbids every move of a pod within that zone, so no consolidation could pack them
 * (kube-scheduler would refuse the moves too). Kept: an even share per zone, on the nodes that hold the
 * most of the run's pods, which also leaves the least loaded nodes empty, as an operator would arrange.
 */
async function chooseZoneBalancedSurvivors(
  context: ScenarioContext,
  workload: ScaleWorkload,
  keep: number,
): Promise<number> {
  const { recorder, core, namespace, runId } = context;
  const app = objectName(workload.name, runId);
  const podsOnNode = new Map<string, number>();
  for (const pod of recorder.pods.values()) {
    const node = pod.spec?.nodeName;
    if (node && !pod.metadata.deletionTimestamp) podsOnNode.set(node, (podsOnNode.get(node) ?? 0) + 1);
  }
  const byZone = new Map<string, { name: string; load: number }[]>();
  for (const pod of recorder.pods.values()) {
    if (pod.metadata.labels?.app !== app || pod.metadata.deletionTimestamp) continue;
    const node = pod.spec?.nodeName ?? '';
    const zone = recorder.nodes.get(node)?.metadata.labels?.[WellKnown.zoneLabel] ?? '';
    const pods = byZone.get(zone) ?? [];
    pods.push({ name: pod.metadata.name, load: podsOnNode.get(node) ?? 0 });
    byZone.set(zone, pods);
  }
  // An even share per zone; the remainder to the zones that hold the most now (they lose the least).
  const zones = [...byZone.entries()].sort(([, a], [, b]) => b.length - a.length);
  const base = Math.floor(keep / Math.max(1, zones.length));
  let remainder = keep - base * zones.length;
  const doomed: string[] = [];
  for (const [, pods] of zones) {
    const quota = Math.min(pods.length, base + (remainder > 0 ? 1 : 0));
    if (remainder > 0) remainder -= 1;
    pods.sort((a, b) => b.load - a.load);
    doomed.push(...pods.slice(quota).map((p) => p.name));
  }
  const patch = { metadata: { annotations: { 'controller.kubernetes.io/pod-deletion-cost': '-1000' } } };
  for (let i = 0; i < doomed.length; i += 20)
    await Promise.all(
      doomed
        .slice(i, i + 20)
        .map((name) =>
          core.patchNamespacedPod({ name, namespace, body: patch }, mergePatch).catch(() => undefined),
        ),
    );
  return doomed.length;
}

/**
 * The run's Durable work from the stack's in-process function host, per NodeClaim created over the run
 * (every name the recorder saw, launched or not: each cost the engine work); undefined when the stack
 * runs without that host, whose counts are the only ones there are.
 */
function scaleDurableFigures(context: ScenarioContext, startedAt: number): RunDurableFigures | undefined {
  const host = context.stack.app?.host;
  if (host === undefined) return undefined;
  const nodeClaims = new Set(context.recorder.history.nodeClaims.map((v) => v.object.metadata.name)).size;
  return runDurableFigures({
    work: host.durableWork(),
    slots: host.activitySlots(),
    nodeClaims,
    startedAt,
  });
}

/** The sweep's own report lines from the stack's log (results/<run>/stack.log, which `npm start` writes). */
async function sweepFigures(
  context: ScenarioContext,
  from: number,
  to: number,
  nodes: number,
): Promise<(ReturnType<typeof sweepAtSize> & { samples: ReturnType<typeof sweepSamples> }) | undefined> {
  if (!context.resultsDirectory) return undefined;
  const text = await readFile(join(context.resultsDirectory, 'stack.log'), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  const samples = sweepSamples(text, from, to);
  return { ...sweepAtSize(samples, Math.floor(nodes * 0.9)), samples };
}

async function apiServerPeakRss(context: {
  controlPlane?: { processes: readonly { name: string; pid: number }[] } | undefined;
}): Promise<number | undefined> {
  const apiServer = context.controlPlane?.processes.find((p) => p.name === 'kube-apiserver');
  if (!apiServer) return undefined;
  const status = await readFile(`/proc/${apiServer.pid}/status`, 'utf8').catch(() => '');
  const kib = /VmHWM:\s+(\d+)/.exec(status)?.[1];
  return kib === undefined ? undefined : Number(kib) * 1024;
}
