// node-repair: node repair as a user meets it (FEATURE_GATES=NodeRepair=true). A NodePool of 8 on-demand
// nodes, one pod each, budget "10%" (upstream's default cap for repair), and a spot NodePool of one.
//
// Step 1, three faults at once: the simulator stops one node's kubelet (the real kube-controller-manager
// marks it Ready=Unknown after its grace period; repair reboots it after Ready's toleration, and the
// reboot brings kubelet back), another gets kubernetes.azure.com/NodeHealthy=False that survives a reboot
// (rebooted once, then replaced: the replacement is Initialized before the broken node is deleted), and
// the ARM emulator preempts the spot VM (the notice, PreemptionScheduled=True, a replacement at once on
// another offering, the node drained before the eviction). Every pod ends Running.
//
// Step 2, the 20% breaker: 3 of the 8 nodes get NodeHealthy=False at once (more than 20%, rounded up, of
// 8 is 2), so repair stops: NodeRepairBlocked on each Node and NodeClaim, no reboot, no mark. One clears
// by itself; 2 of 8 are within the breaker and both are repaired, one at a time (the budget).
import type { V1Deployment } from '@kubernetes/client-node';
import { findCondition } from '../../shared/decisions/conditions.js';
import { DisruptionAnnotations, disruptionReasonOf } from '../../shared/decisions/disruption-state.js';
import { breakerMessage, unhealthyThreshold } from '../../shared/decisions/node-repair/breaker.js';
import { NODE_HEALTHY } from '../../shared/decisions/node-repair/policies.js';
import { parseProviderId } from '../../shared/cloudprovider/azure/decisions/vm-spec.js';
import {
  ConditionTypes,
  WellKnown,
  type Node,
  type NodeClaim,
  type NodePool,
} from '../../shared/models/index.js';
import { RUN_LABEL } from '../stack/local-stack.js';
import type { Observed, PodView } from '../view/recorder.js';
import type { TimelineMark } from '../view/timeline-svg.js';
import { pauseContainer } from './deployment-set.js';
import { disruptionCounts } from './drift-budget.js';
import {
  claimsOfPool,
  createNodeClassAndPool,
  deleteNodeClaims,
  deleteNodePoolAndClass,
  exampleNodePool,
  nodeClaimsWithNodeNames,
  patience,
  waitFor,
  type Invariant,
  type Scenario,
  type ScenarioContext,
  type ScenarioOutcome,
} from './scenario.js';

const NODES = 8;
/** More than half of a 2-vCPU node's allocatable: one pod per node. */
const POD = { cpu: '1200m', memory: '1Gi' };
const BUDGET = '10%';
/** Nodes made unhealthy at once in step 2: more than the breaker's threshold for NODES. */
const AT_ONCE = unhealthyThreshold(NODES) + 1;
/** Sweeps the breaker must hold repair back for, once every held node has its NodeRepairBlocked. */
const HELD_SWEEPS = 3;

export const nodeRepair: Scenario = {
  name: 'node-repair',
  title: `node repair: a NotReady node rebooted, a broken one replaced, a spot node preempted; the 20% breaker holds ${AT_ONCE} of ${NODES}`,
  description:
    `A NodePool of ${NODES} nodes (one pod each, budget "${BUDGET}") and a spot NodePool of one. One node's kubelet stops ` +
    '(Ready=Unknown: rebooted after the toleration, and back), one gets kubernetes.azure.com/NodeHealthy=False that a ' +
    'reboot does not clear (rebooted once, then replaced), and the spot VM is preempted (replaced at once, drained ' +
    `within the notice); every pod ends Running. Then ${AT_ONCE} of the ${NODES} get NodeHealthy=False at once: the 20% ` +
    'breaker stops repair (NodeRepairBlocked), and once one clears by itself the other two are repaired, one at a time.',
  usesPods: true,
  play,
};

function repairPool(name: string, runId: string, capacityType: 'on-demand' | 'spot'): NodePool {
  const pool = exampleNodePool(name, runId, name, BUDGET);
  pool.spec.template.spec.requirements = pool.spec.template.spec.requirements.map((r) =>
    r.key === WellKnown.capacityTypeLabel ? { ...r, values: [capacityType] } : r,
  );
  return pool;
}

function deployment(runId: string, name: string, nodePool: string, replicas: number): V1Deployment {
  const labels = { app: name, [RUN_LABEL]: runId };
  return {
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels },
        spec: {
          terminationGracePeriodSeconds: 1,
          nodeSelector: { [WellKnown.nodePoolLabel]: nodePool },
          containers: [pauseContainer(POD)],
        },
      },
    },
  };
}

const conditionOf = (node: Node | undefined, type: string) =>
  node?.status?.conditions?.find((c) => c.type === type);
const initialized = (c: NodeClaim) =>
  findCondition(c.status?.conditions, ConditionTypes.initialized)?.status === 'True';
const vmNameOf = (c: NodeClaim) => parseProviderId(c.status?.providerID ?? '')?.vmName ?? '';
const runningPodsOf = (context: ScenarioContext, app: string): PodView[] =>
  [...context.recorder.pods.values()].filter(
    (p) =>
      p.metadata.labels?.['app'] === app && !p.metadata.deletionTimestamp && p.status?.phase === 'Running',
  );

/** When the recorder first saw a version that satisfies `test`, at or after `from`. */
function firstSeen<T>(history: readonly Observed<T>[], from: number, test: (o: Observed<T>) => boolean) {
  return history.find((o) => o.at >= from && test(o))?.at;
}

const seconds = (ms: number | undefined) => (ms === undefined ? '?' : `${(ms / 1000).toFixed(1)} s`);
const since = (from: number, to: number | undefined) => (to === undefined ? undefined : to - from);

async function play(context: ScenarioContext): Promise<ScenarioOutcome> {
  const { stack, recorder, runId, namespace } = context;
  const objects = stack.admin.objects;
  const t = stack.timings;
  const name = `repair-${runId}`;
  const spotName = `repair-spot-${runId}`;
  const pool = repairPool(name, runId, 'on-demand');
  const spotPool = repairPool(spotName, runId, 'spot');
  await createNodeClassAndPool(context, pool);
  await createNodeClassAndPool(context, spotPool);
  const workApp = `work-${runId}`;
  const spotApp = `spot-${runId}`;
  await context.apps.createNamespacedDeployment({ namespace, body: deployment(runId, workApp, name, NODES) });
  await context.apps.createNamespacedDeployment({ namespace, body: deployment(runId, spotApp, spotName, 1) });
  context.note(
    `NodePool ${name} (budget "${BUDGET}") for ${NODES} pods of ${POD.cpu} CPU, one per node; spot NodePool ${spotName} for one`,
  );

  const ofPool = () => claimsOfPool(recorder, name);
  const ofSpot = () => claimsOfPool(recorder, spotName);
  await waitFor(context, `${NODES + 1} pods Running on initialized nodes`, patience(stack, 6), () =>
    runningPodsOf(context, workApp).length === NODES &&
    runningPodsOf(context, spotApp).length === 1 &&
    ofPool().length === NODES &&
    ofPool().every(initialized) &&
    ofSpot().length === 1 &&
    ofSpot().every(initialized)
      ? true
      : undefined,
  );
  const originals = (await nodeClaimsWithNodeNames(context, ofPool)).sort((a, b) =>
    a.metadata.name.localeCompare(b.metadata.name),
  );
  const [spotClaim] = await nodeClaimsWithNodeNames(context, ofSpot);
  const [notReadyClaim, brokenClaim] = originals;
  if (!notReadyClaim || !brokenClaim || !spotClaim) throw new Error('the NodePools have no nodes');
  const marks: TimelineMark[] = [];
  const mark = (row: string, label: string, kind: TimelineMark['kind'], at = Date.now()) =>
    marks.push({ row, at, label, kind });
  const nodeOf = (c: NodeClaim) => c.status?.nodeName ?? '';
  const restartsOf = (c: NodeClaim) =>
    stack.emulator.controls.requests({ kind: 'restartVm', vmName: vmNameOf(c) });
  const replacementsOf = (c: NodeClaim) =>
    [...recorder.nodeClaims.values()].filter(
      (r) => r.metadata.annotations?.[DisruptionAnnotations.replacementOf] === c.metadata.name,
    );
  const everReplacementsOf = (c: NodeClaim) =>
    new Set(
      recorder.history.nodeClaims
        .filter(
          (o) => o.object.metadata.annotations?.[DisruptionAnnotations.replacementOf] === c.metadata.name,
        )
        .map((o) => o.object.metadata.name),
    );

  // ── Step 1: three faults at once. ─────────────────────────────────────────────────────────────────
  const faultAt = Date.now();
  stack.simulator.stopKubelet(nodeOf(notReadyClaim));
  await stack.simulator.raiseCondition(
    nodeOf(brokenClaim),
    { type: NODE_HEALTHY, status: 'False', reason: 'DiskReadOnly', message: 'the OS disk went read-only' },
    { survivesReboot: true },
  );
  const notice = stack.emulator.controls.preemptVm(vmNameOf(spotClaim), {
    noticeMs: t.repair.preemptionNoticeMs,
  });
  const evictionAt = Date.parse(notice.notBefore);
  mark(notReadyClaim.metadata.name, 'kubelet stopped', 'failure', faultAt);
  mark(brokenClaim.metadata.name, 'NodeHealthy=False (survives a reboot)', 'failure', faultAt);
  mark(
    spotClaim.metadata.name,
    `spot eviction notice (${seconds(t.repair.preemptionNoticeMs)})`,
    'failure',
    faultAt,
  );
  context.note(
    `kubelet of ${nodeOf(notReadyClaim)} stopped; ${nodeOf(brokenClaim)} NodeHealthy=False (survives a reboot); spot VM ${notice.vmName} preempted, evicted at ${notice.notBefore}`,
  );

  const notReadyRecovered = () => {
    const claim = recorder.nodeClaims.get(notReadyClaim.metadata.name);
    const node = recorder.nodes.get(nodeOf(notReadyClaim));
    const wasMarked = recorder.history.nodeClaims.some(
      (o) =>
        o.at >= faultAt &&
        o.object.metadata.name === notReadyClaim.metadata.name &&
        disruptionReasonOf(o.object) === 'Unhealthy',
    );
    return (
      wasMarked &&
      claim !== undefined &&
      disruptionReasonOf(claim) === undefined &&
      conditionOf(node, 'Ready')?.status === 'True' &&
      !(node?.spec.taints ?? []).some((taint) => taint.key === WellKnown.disruptedTaintKey)
    );
  };
  const replacedAndRunning = (old: NodeClaim, app: string) => {
    if (recorder.nodeClaims.has(old.metadata.name)) return false;
    const replacement = replacementsOf(old).find(initialized);
    const nodeNames = new Set(
      [...claimsOfPool(recorder, old.metadata.labels?.[WellKnown.nodePoolLabel] ?? '')].map(nodeOf),
    );
    const pods = runningPodsOf(context, app);
    // Where they run is judged by the invariants; this wait only ends when the pool has settled.
    return (
      replacement !== undefined &&
      pods.every((p) => p.spec?.nodeName !== nodeOf(old) && nodeNames.has(p.spec?.nodeName ?? ''))
    );
  };
  const podsOnReplacement = (old: NodeClaim, app: string) =>
    runningPodsOf(context, app).filter((p) => replacementsOf(old).some((r) => nodeOf(r) === p.spec?.nodeName))
      .length;
  // Ready=Unknown comes after the controller-manager's grace period (real time, about 50 s), then the toleration.
  const step1Designed =
    60_000 + (t.repair.readyTolerationSeconds + 2 * t.repair.rebootRecoverySeconds) * 1000;
  await waitFor(
    context,
    'each faulty node rebooted or replaced, every pod Running',
    patience(stack, 8, step1Designed),
    () =>
      notReadyRecovered() &&
      replacedAndRunning(brokenClaim, workApp) &&
      replacedAndRunning(spotClaim, spotApp) &&
      runningPodsOf(context, workApp).length === NODES
        ? true
        : undefined,
    () =>
      [
        notReadyRecovered()
          ? ''
          : `${notReadyClaim.metadata.name} not recovered (Ready=${conditionOf(recorder.nodes.get(nodeOf(notReadyClaim)), 'Ready')?.status ?? '?'}, DisruptionReason ${disruptionReasonOf(recorder.nodeClaims.get(notReadyClaim.metadata.name) ?? notReadyClaim) ?? 'none'}, ${restartsOf(notReadyClaim).length} restart(s))`,
        replacedAndRunning(brokenClaim, workApp) ? '' : `${brokenClaim.metadata.name} not replaced`,
        replacedAndRunning(spotClaim, spotApp) ? '' : `${spotClaim.metadata.name} not replaced`,
        `${runningPodsOf(context, workApp).length}/${NODES} pods Running`,
      ]
        .filter(Boolean)
        .join('; '),
  );
  const step1DoneAt = Date.now();
  const brokenPodsMoved = podsOnReplacement(brokenClaim, workApp);
  const spotPodsMoved = podsOnReplacement(spotClaim, spotApp);
  context.note(`step 1 done after ${seconds(step1DoneAt - faultAt)}: every pod Running`);

  // What step 1 did, from the recorded history.
  const claimVersions = (c: NodeClaim) =>
    recorder.history.nodeClaims.filter((o) => o.object.metadata.uid === c.metadata.uid);
  const markedAt = (c: NodeClaim) =>
    firstSeen(claimVersions(c), faultAt, (o) => disruptionReasonOf(o.object) === 'Unhealthy');
  const deletedAt = (c: NodeClaim) =>
    firstSeen(
      claimVersions(c),
      faultAt,
      (o) => o.type === 'DELETED' || Boolean(o.object.metadata.deletionTimestamp),
    );
  const vmChangeAt = (c: NodeClaim, type: string) =>
    recorder.history.vms.find((v) => v.at >= faultAt && v.vm.name === vmNameOf(c) && v.type === type)?.at;
  const createdAt = (replacementName: string) =>
    recorder.history.nodeClaims.find((o) => o.object.metadata.name === replacementName)?.at;
  const initializedAt = (replacementName: string) =>
    firstSeen(
      recorder.history.nodeClaims,
      faultAt,
      (o) => o.object.metadata.name === replacementName && initialized(o.object),
    );

  const unknownAt = firstSeen(
    recorder.history.nodes,
    faultAt,
    (o) =>
      o.object.metadata.name === nodeOf(notReadyClaim) &&
      conditionOf(o.object, 'Ready')?.status === 'Unknown',
  );
  const notReadyMarkedAt = markedAt(notReadyClaim);
  const notReadyRestartedAt = vmChangeAt(notReadyClaim, 'restarted');
  const notReadyBackAt = firstSeen(
    recorder.history.nodes,
    notReadyRestartedAt ?? faultAt,
    (o) =>
      o.object.metadata.name === nodeOf(notReadyClaim) && conditionOf(o.object, 'Ready')?.status === 'True',
  );
  const notReadyRestarts = restartsOf(notReadyClaim);
  const brokenRestarts = restartsOf(brokenClaim);
  const spotRestarts = restartsOf(spotClaim);
  const brokenReplacements = [...everReplacementsOf(brokenClaim)];
  const spotReplacements = [...everReplacementsOf(spotClaim)];
  const brokenMarkedAt = markedAt(brokenClaim);
  const brokenRestartedAt = vmChangeAt(brokenClaim, 'restarted');
  const brokenReplacementCreatedAt = createdAt(brokenReplacements[0] ?? '');
  const brokenReplacementReadyAt = initializedAt(brokenReplacements[0] ?? '');
  const brokenDeletedAt = deletedAt(brokenClaim);
  const spotReplacementCreatedAt = createdAt(spotReplacements[0] ?? '');
  const spotReplacementReadyAt = initializedAt(spotReplacements[0] ?? '');
  const spotDeletedAt = deletedAt(spotClaim);
  const spotReplacementNode = nodeOf(recorder.nodeClaims.get(spotReplacements[0] ?? '') ?? spotClaim);
  const spotPodMovedAt = firstSeen(
    recorder.history.pods,
    faultAt,
    (o) =>
      o.object.metadata.labels?.['app'] === spotApp &&
      o.object.status?.phase === 'Running' &&
      o.object.spec?.nodeName === spotReplacementNode,
  );
  const spotEvicted = recorder.history.vms.some((v) => v.vm.name === notice.vmName && v.type === 'evicted');
  const offeringOf = (c: NodeClaim | undefined) =>
    `${c?.metadata.labels?.[WellKnown.instanceTypeLabel] ?? '?'}/${c?.metadata.labels?.[WellKnown.zoneLabel] ?? '?'}`;
  const spotReplacementClaim = recorder.nodeClaims.get(spotReplacements[0] ?? '');
  for (const [row, at, label] of [
    [notReadyClaim.metadata.name, unknownAt, 'Ready=Unknown'],
    [notReadyClaim.metadata.name, notReadyMarkedAt, 'repair: reboot'],
    [notReadyClaim.metadata.name, notReadyBackAt, 'Ready again'],
    [brokenClaim.metadata.name, brokenMarkedAt, 'repair: reboot'],
    [brokenClaim.metadata.name, brokenReplacementCreatedAt, 'not cleared: replacing'],
    [spotClaim.metadata.name, spotReplacementCreatedAt, 'replacement launched'],
  ] as const) {
    if (at !== undefined) mark(row, label, 'note', at);
  }
  if (brokenReplacements[0] && brokenReplacementReadyAt)
    mark(brokenReplacements[0], 'pod moved here', 'bind', brokenReplacementReadyAt);
  if (spotReplacements[0] && spotPodMovedAt)
    mark(spotReplacements[0], 'spot pod Running here', 'bind', spotPodMovedAt);

  // ── Step 2: the breaker. ──────────────────────────────────────────────────────────────────────────
  // Budget "0" holds repair while the conditions are posted one after another: a sweep between two posts
  // would otherwise see 1 or 2 unhealthy nodes, within the breaker, and start a repair. The breaker is
  // judged before the budget, so with all of them posted it holds them whatever the budget says.
  const setBudget = (nodes: string) =>
    objects.nodePools.mergePatch(name, { spec: { disruption: { budgets: [{ nodes }] } } });
  await setBudget('0');
  await new Promise((resolve) => setTimeout(resolve, 2 * t.sweepPeriodSeconds * 1000 + 1000));
  const inPool = ofPool().filter((c) => !c.metadata.deletionTimestamp);
  // Never the node rebooted in step 1 (a node rebooted within twice the recovery bound is replaced, not
  // rebooted: that is the escalation's rule, not the breaker's).
  const held = inPool
    .filter((c) => c.metadata.name !== notReadyClaim.metadata.name)
    .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))
    .slice(0, AT_ONCE);
  const heldNames = new Set(held.map((c) => c.metadata.name));
  const heldAt = Date.now();
  for (const claim of held) {
    await stack.simulator.raiseCondition(nodeOf(claim), {
      type: NODE_HEALTHY,
      status: 'False',
      reason: 'KernelDeadlock',
      message: 'node problem detector: task blocked for more than 120 s',
    });
    mark(claim.metadata.name, 'NodeHealthy=False', 'failure');
  }
  await setBudget(BUDGET);
  context.note(
    `${AT_ONCE} of ${inPool.length} nodes NodeHealthy=False at once (breaker threshold ${unhealthyThreshold(inPool.length)}); budget back to "${BUDGET}"`,
  );

  const blockedEvents = async () => {
    const events = await context.core.listNamespacedEvent({
      namespace: 'default',
      fieldSelector: 'reason=NodeRepairBlocked',
    });
    return events.items.filter(
      (e) =>
        heldNames.has(e.involvedObject.name ?? '') || held.some((c) => nodeOf(c) === e.involvedObject.name),
    );
  };
  const blockedTargets = async () =>
    new Set((await blockedEvents()).map((e) => `${e.involvedObject.kind}/${e.involvedObject.name}`));
  let blocked = new Set<string>();
  const pollEvents = setInterval(() => {
    void blockedTargets().then(
      (found) => (blocked = found),
      () => undefined,
    );
  }, 250);
  try {
    await waitFor(
      context,
      'NodeRepairBlocked on every held Node and NodeClaim',
      patience(stack),
      () => (blocked.size >= 2 * AT_ONCE ? true : undefined),
      () => `${blocked.size}/${2 * AT_ONCE}: ${[...blocked].join(', ')}`,
    );
  } finally {
    clearInterval(pollEvents);
  }
  const blockedSeenAt = Date.now();
  for (const claim of held) mark(claim.metadata.name, 'NodeRepairBlocked', 'note', blockedSeenAt);
  const holdMs = HELD_SWEEPS * t.sweepPeriodSeconds * 1000;
  context.note(
    `NodeRepairBlocked on all ${AT_ONCE} nodes after ${seconds(blockedSeenAt - heldAt)}; holding ${HELD_SWEEPS} sweeps`,
  );
  await new Promise((resolve) => setTimeout(resolve, holdMs));
  const clearedAt = Date.now();
  const heldRestarts = held.flatMap(restartsOf).length;
  const heldMarked = recorder.history.nodeClaims.filter(
    (o) =>
      o.at >= heldAt &&
      o.at <= clearedAt &&
      heldNames.has(o.object.metadata.name) &&
      disruptionReasonOf(o.object) !== undefined,
  ).length;
  const blockedMessages = new Set((await blockedEvents()).map((e) => e.message ?? ''));

  const [clears, ...repaired] = held;
  if (!clears) throw new Error('no node was held');
  await stack.simulator.clearCondition(nodeOf(clears), NODE_HEALTHY);
  mark(clears.metadata.name, 'cleared by itself', 'note', clearedAt);
  context.note(
    `${nodeOf(clears)} cleared by itself: ${AT_ONCE - 1} of ${inPool.length} unhealthy, within the breaker`,
  );
  const recovered = (c: NodeClaim) => {
    const claim = recorder.nodeClaims.get(c.metadata.name);
    const node = recorder.nodes.get(nodeOf(c));
    return (
      claim !== undefined &&
      disruptionReasonOf(claim) === undefined &&
      conditionOf(node, NODE_HEALTHY)?.status === 'True' &&
      !(node?.spec.taints ?? []).some((taint) => taint.key === WellKnown.disruptedTaintKey)
    );
  };
  await waitFor(
    context,
    `the other ${repaired.length} rebooted and recovered`,
    patience(stack, 6, repaired.length * t.repair.rebootRecoverySeconds * 1000),
    () => (repaired.every((c) => recovered(c) && restartsOf(c).length > 0) ? true : undefined),
    () =>
      repaired
        .filter((c) => !recovered(c))
        .map((c) => c.metadata.name)
        .join(', '),
  );
  const step2DoneAt = Date.now();
  context.note(
    `step 2 done: ${repaired.length} repaired ${seconds(step2DoneAt - clearedAt)} after the clear`,
  );
  const step2Spans = repaired.map((c) => {
    const start = firstSeen(claimVersions(c), clearedAt, (o) => disruptionReasonOf(o.object) === 'Unhealthy');
    const end = firstSeen(
      claimVersions(c),
      start ?? clearedAt,
      (o) => disruptionReasonOf(o.object) === undefined,
    );
    if (start) mark(c.metadata.name, 'repair: reboot', 'note', start);
    if (end) mark(c.metadata.name, 'recovered', 'note', end);
    return { name: c.metadata.name, start, end };
  });
  const ordered = [...step2Spans].sort((a, b) => (a.start ?? 0) - (b.start ?? 0));
  const oneAtATime = ordered.every(
    (span, i) => i === 0 || (span.start !== undefined && (ordered[i - 1]?.end ?? Infinity) <= span.start),
  );

  // Budget: every NodeClaim the pool ever had, disrupting as the budget counts it, over the whole run.
  const everInPool = new Set(
    recorder.history.nodeClaims
      .filter((o) => o.object.metadata.labels?.[WellKnown.nodePoolLabel] === name)
      .map((o) => o.object.metadata.name),
  );
  const { maxInFlight } = disruptionCounts(recorder.history.nodeClaims, recorder.history.nodes, everInPool);
  const finalPods = runningPodsOf(context, workApp).length + runningPodsOf(context, spotApp).length;
  const onlyPost = (entries: { status: number }[]) => entries.filter((e) => e.status === 202).length;

  const invariants: Invariant[] = [
    {
      name: 'the NotReady node is rebooted once and back in service, not replaced',
      holds:
        onlyPost(notReadyRestarts) === 1 &&
        notReadyRestarts.length === 1 &&
        everReplacementsOf(notReadyClaim).size === 0 &&
        recorder.nodeClaims.has(notReadyClaim.metadata.name),
      detail: `Ready=Unknown ${seconds(since(faultAt, unknownAt))} after the kubelet stopped; repair ${seconds(since(unknownAt ?? faultAt, notReadyMarkedAt))} later (toleration ${t.repair.readyTolerationSeconds} s); ${notReadyRestarts.length} restart POST(s); Ready again ${seconds(since(notReadyMarkedAt ?? faultAt, notReadyBackAt))} after the repair began; ${everReplacementsOf(notReadyClaim).size} replacement(s)`,
    },
    {
      name: 'the node whose NodeHealthy=False survives a reboot is rebooted once, then replaced by exactly one node',
      holds: onlyPost(brokenRestarts) === 1 && brokenRestarts.length === 1 && brokenReplacements.length === 1,
      detail: `${brokenRestarts.length} restart POST(s); replacement(s) ${brokenReplacements.join(', ') || 'none'} launched ${seconds(since(brokenRestartedAt ?? faultAt, brokenReplacementCreatedAt))} after the reboot (recovery bound ${t.repair.rebootRecoverySeconds} s)`,
    },
    {
      name: 'the broken node is deleted only once its replacement is Initialized',
      holds:
        brokenReplacementReadyAt !== undefined &&
        brokenDeletedAt !== undefined &&
        brokenReplacementReadyAt <= brokenDeletedAt,
      detail: `replacement Initialized ${seconds(since(faultAt, brokenReplacementReadyAt))}, old NodeClaim deleted ${seconds(since(faultAt, brokenDeletedAt))} after the fault`,
    },
    {
      name: 'the preempted spot node is replaced at once on another offering, never rebooted, and terminated',
      holds:
        spotReplacements.length === 1 &&
        spotRestarts.length === 0 &&
        spotDeletedAt !== undefined &&
        offeringOf(spotReplacementClaim) !== offeringOf(spotClaim),
      detail: `replacement ${spotReplacements.join(', ') || 'none'} (${offeringOf(spotReplacementClaim)}, the preempted one ${offeringOf(spotClaim)}) created ${seconds(since(faultAt, spotReplacementCreatedAt))} into the ${seconds(t.repair.preemptionNoticeMs)} notice; old NodeClaim deleted ${seconds(since(faultAt, spotDeletedAt))} after it${spotEvicted ? '; Azure evicted the VM' : '; its VM was deleted before the eviction'}`,
    },
    {
      name: 'the pods of the replaced nodes run on their replacements',
      holds: brokenPodsMoved === 1 && spotPodsMoved === 1,
      detail: `${brokenPodsMoved} pod(s) on ${brokenReplacements.join(', ') || 'no replacement'}, ${spotPodsMoved} on ${spotReplacements.join(', ') || 'no replacement'}`,
    },
    {
      name: 'every pod ends Running, none on a node that was replaced',
      holds: finalPods === NODES + 1,
      detail: `${finalPods}/${NODES + 1} Running; the spot pod Running on the replacement ${seconds(since(faultAt, spotPodMovedAt))} after the notice (eviction at ${seconds(evictionAt - faultAt)})`,
    },
    {
      name: `the breaker holds ${AT_ONCE} of ${inPool.length} unhealthy: NodeRepairBlocked on each Node and NodeClaim, no reboot, no mark`,
      holds:
        blocked.size >= 2 * AT_ONCE &&
        heldRestarts === 0 &&
        heldMarked === 0 &&
        [...blockedMessages].every((m) => m === breakerMessage('nodepool')),
      detail: `${blocked.size} NodeRepairBlocked targets ("${[...blockedMessages].join('", "')}") ${seconds(blockedSeenAt - heldAt)} after the conditions; over ${seconds(clearedAt - heldAt)} held: ${heldRestarts} restart(s), ${heldMarked} marked version(s)`,
    },
    {
      name: `with one cleared (${AT_ONCE - 1} of ${inPool.length}), repair goes on: each of the other ${repaired.length} rebooted once and recovered, one at a time`,
      holds: repaired.every((c) => restartsOf(c).length === 1 && recovered(c)) && oneAtATime,
      detail: step2Spans
        .map(
          (s) =>
            `${s.name}: ${seconds(since(clearedAt, s.start))}–${seconds(since(clearedAt, s.end))} after the clear`,
        )
        .join('; '),
    },
    {
      name: `never more than one node of the NodePool disrupting at once (budget "${BUDGET}" of ${NODES})`,
      holds: maxInFlight <= 1,
      detail: `at most ${maxInFlight} disrupting (DisruptionReason, karpenter.sh/disrupted taint, or deleting) at any recorded moment`,
    },
  ];
  const summary = [
    `NotReady (kubelet stopped): Ready=Unknown after ${seconds(since(faultAt, unknownAt))}, rebooted after the ${t.repair.readyTolerationSeconds} s toleration, Ready again ${seconds(since(faultAt, notReadyBackAt))} after the fault; not replaced`,
    `NodeHealthy=False surviving a reboot: rebooted ${seconds(since(faultAt, brokenRestartedAt))} after the fault, replaced ${seconds(since(brokenRestartedAt ?? faultAt, brokenReplacementCreatedAt))} after the reboot, old node deleted ${seconds(since(faultAt, brokenDeletedAt))} after the fault`,
    `spot preemption: replacement launched ${seconds(since(faultAt, spotReplacementCreatedAt))} and Initialized ${seconds(since(faultAt, spotReplacementReadyAt))} into the ${seconds(t.repair.preemptionNoticeMs)} notice; pod Running on it ${seconds(since(faultAt, spotPodMovedAt))} after the notice`,
    `breaker: ${AT_ONCE} of ${inPool.length} unhealthy held ${seconds(clearedAt - heldAt)} with NodeRepairBlocked and no reboot; after one cleared, ${repaired.length} rebooted one at a time in ${seconds(step2DoneAt - clearedAt)}`,
    `at most ${maxInFlight} node(s) of the NodePool disrupting at once (budget "${BUDGET}")`,
  ];
  const figures: Record<string, number | string> = {
    readyUnknownAfterMs: since(faultAt, unknownAt) ?? NaN,
    notReadyRepairAfterUnknownMs: since(unknownAt ?? faultAt, notReadyMarkedAt) ?? NaN,
    notReadyBackAfterFaultMs: since(faultAt, notReadyBackAt) ?? NaN,
    brokenRebootAfterFaultMs: since(faultAt, brokenRestartedAt) ?? NaN,
    brokenReplacementAfterRebootMs: since(brokenRestartedAt ?? faultAt, brokenReplacementCreatedAt) ?? NaN,
    brokenDeletedAfterFaultMs: since(faultAt, brokenDeletedAt) ?? NaN,
    spotReplacementLaunchedMs: since(faultAt, spotReplacementCreatedAt) ?? NaN,
    spotReplacementInitializedMs: since(faultAt, spotReplacementReadyAt) ?? NaN,
    spotPodMovedMs: since(faultAt, spotPodMovedAt) ?? NaN,
    preemptionNoticeMs: t.repair.preemptionNoticeMs,
    step1Ms: step1DoneAt - faultAt,
    breakerHeldMs: clearedAt - heldAt,
    blockedTargets: blocked.size,
    step2RepairMs: step2DoneAt - clearedAt,
    maxInFlight,
    restartPosts: [...originals, spotClaim].flatMap(restartsOf).length,
  };

  await context.apps.deleteNamespacedDeployment({ namespace, name: workApp }).catch(() => undefined);
  await context.apps.deleteNamespacedDeployment({ namespace, name: spotApp }).catch(() => undefined);
  await deleteNodeClaims(
    context,
    [...ofPool(), ...ofSpot()].map((c) => c.metadata.name),
    patience(stack),
  );
  await deleteNodePoolAndClass(context, pool);
  await deleteNodePoolAndClass(context, spotPool);
  return { invariants, summary, marks, figures };
}
