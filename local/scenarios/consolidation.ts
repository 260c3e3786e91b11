// consolidation: the scale-up scenario's Deployments run on the nodes provisioning launched; then each is
// scaled down to a third, behind a PodDisruptionBudget, and the NodePool starts consolidating
// (WhenEmptyOrUnderutilized, budget "2"). Empty nodes go first, underutilized ones are deleted or replaced
// by one cheaper node, never more than the budget at once, and no eviction takes a Deployment below its
// PDB's minAvailable (checked on every recorded pod version). The summary prices the nodes before and after.
import { KubeConfig, PatchStrategy, PolicyV1Api, setHeaderOptions } from '@kubernetes/client-node';
import { isConditionTrue } from '../../shared/decisions/conditions.js';
import { CONSOLIDATABLE_CONDITION } from '../../shared/decisions/consolidation/timing.js';
import { disruptionReasonOf } from '../../shared/decisions/disruption-state.js';
import { WellKnown, type NodeClaim } from '../../shared/models/index.js';
import type { Observed, PodView } from '../view/recorder.js';
import type { TimelineMark } from '../view/timeline-svg.js';
import { functionAppOf } from '../stack/local-stack.js';
import {
  POD_COUNT,
  WORKLOADS,
  createDeployments,
  deleteDeployments,
  deploymentName,
  describeWorkloads,
  dynamicNodePool,
  hourlyPrice,
  instanceTypeOf,
  runningPods,
  summarize,
  workloadLabels,
} from './deployment-set.js';
import { disruptionCounts } from './drift-budget.js';
import {
  claimsOfPool,
  createNodeClassAndPool,
  deleteNodeClaims,
  deleteNodePoolAndClass,
  nodeClaimsWithNodeNames,
  patience,
  waitFor,
  type Invariant,
  type Scenario,
  type ScenarioContext,
  type ScenarioOutcome,
} from './scenario.js';

const BUDGET = 2;
const replicasAfter = (replicas: number) => Math.ceil(replicas / 3);
const minAvailableOf = (replicas: number) => replicasAfter(replicas) - 2;
const PODS_AFTER = WORKLOADS.reduce((sum, w) => sum + replicasAfter(w.replicas), 0);

export const consolidation: Scenario = {
  name: 'consolidation',
  title: `consolidation: ${POD_COUNT} pods scaled down to ${PODS_AFTER}; empty nodes go first, the rest are packed cheaper`,
  description:
    `The scale-up Deployments (${describeWorkloads()}) run on the nodes provisioning launched, then each is scaled down ` +
    `to a third behind a PodDisruptionBudget (minAvailable 2 below the new replicas). The NodePool consolidates ` +
    `(WhenEmptyOrUnderutilized, budget "${BUDGET}"): empty nodes go first, underutilized ones are deleted or replaced by ` +
    'a cheaper one, never more than the budget at once, and no eviction breaks a PDB. The summary prices the nodes before and after.',
  usesPods: true,
  play,
};

const isAvailable = (pod: PodView) =>
  !pod.metadata.deletionTimestamp &&
  pod.status?.phase === 'Running' &&
  (pod.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

async function play(context: ScenarioContext): Promise<ScenarioOutcome> {
  const { stack, recorder, runId, namespace } = context;
  const app = functionAppOf(stack);
  const objects = stack.admin.objects;
  const name = `consolidate-${runId}`;
  const consolidateAfterSeconds = Math.max(1, Math.round(30 / stack.timings.speed));
  // Budget "0" holds consolidation back (pod events are still tracked) until the scale-down is done and
  // every node has been idle for consolidateAfter, so all are judged in the same sweep.
  const nodePool = dynamicNodePool(name, runId, {
    consolidationPolicy: 'WhenEmptyOrUnderutilized',
    consolidateAfter: `${consolidateAfterSeconds}s`,
    budgets: [{ nodes: '0' }],
  });
  await createNodeClassAndPool(context, nodePool);
  await createDeployments(context, name);
  context.note(`created ${WORKLOADS.length} Deployments, ${POD_COUNT} pods; budget "0" while they scale up`);
  await waitFor(context, `all ${POD_COUNT} pods Running`, patience(stack, 10), () =>
    runningPods(recorder, POD_COUNT),
  );
  const ofPool = () => claimsOfPool(recorder, name);
  const before = await nodeClaimsWithNodeNames(context, ofPool);
  const podsOn = (nodeName: string | undefined) =>
    [...recorder.pods.values()].filter((p) => p.spec?.nodeName === nodeName).length;
  // kube-scheduler need not fill every node provisioning planned: a node can be empty before the scale-down.
  const occupiedBefore = new Set(
    before.filter((c) => podsOn(c.status?.nodeName) > 0).map((c) => c.metadata.name),
  );
  const book = app.deps.cloud.prices();
  const sizesBefore = before.map((c) => instanceTypeOf(recorder, c));
  const priceBefore = hourlyPrice(book, sizesBefore);
  context.note(
    `${before.length} nodes at $${priceBefore.toFixed(3)}/h; scaling each Deployment down to a third`,
  );

  const toEmpty = nodesToEmpty(before, [...recorder.pods.values()], runId);
  // The ReplicaSet controller deletes the pods of lowest deletion cost first: a user's way to say which
  // nodes a scale-down should free, so some nodes are left empty for consolidation to take first.
  for (const pod of [...recorder.pods.values()].filter((p) => toEmpty.has(p.spec?.nodeName ?? ''))) {
    await context.core.patchNamespacedPod(
      {
        name: pod.metadata.name,
        namespace,
        body: { metadata: { annotations: { [POD_DELETION_COST]: '-1000' } } },
      },
      mergePatch,
    );
  }
  const pdbs = makePolicyApi(context);
  const scaleDownStartedAt = Date.now();
  for (const workload of WORKLOADS) {
    await pdbs.createNamespacedPodDisruptionBudget({
      namespace,
      body: {
        metadata: { name: deploymentName(workload, runId) },
        spec: {
          minAvailable: minAvailableOf(workload.replicas),
          selector: { matchLabels: workloadLabels(workload, runId) },
        },
      },
    });
    await context.apps.patchNamespacedDeploymentScale(
      {
        name: deploymentName(workload, runId),
        namespace,
        body: { spec: { replicas: replicasAfter(workload.replicas) } },
      },
      mergePatch,
    );
  }
  await waitFor(context, `${PODS_AFTER} pods left, all Running`, patience(stack), () => {
    const pods = [...recorder.pods.values()];
    return pods.length === PODS_AFTER && pods.every(isAvailable) ? true : undefined;
  });
  const scaledDownAt = Date.now();
  const emptyAtStart = new Set(
    before.filter((c) => podsOn(c.status?.nodeName) === 0).map((c) => c.metadata.name),
  );
  const emptiedByScaleDown = new Set([...emptyAtStart].filter((n) => occupiedBefore.has(n)));
  // The sweep notices a pod leaving at its next pass (lastPodEventTime is that sweep's start): wait a few
  // sweeps past the scale-down, then until every node is Consolidatable and the ones the scale-down
  // emptied have a pod event from after it began (a node that was empty before has none to have). By
  // design that takes a sweep to notice, consolidateAfter, and a sweep to set the condition (three
  // sweeps at least).
  const sweepMs = stack.timings.sweepPeriodSeconds * 1_000;
  const noticedAfter = scaledDownAt + 3 * sweepMs;
  const consolidatableMs = consolidateAfterSeconds * 1_000 + 3 * sweepMs;
  const consolidatable = patience(stack, 6, consolidatableMs);
  const judged = (c: NodeClaim) =>
    (!emptiedByScaleDown.has(c.metadata.name) ||
      (Date.parse(c.status?.lastPodEventTime ?? '') || 0) >= scaleDownStartedAt) &&
    isConditionTrue(c.status?.conditions, CONSOLIDATABLE_CONDITION);
  await waitFor(
    context,
    'every node Consolidatable after the scale-down',
    consolidatable,
    () => (Date.now() >= noticedAfter && ofPool().every(judged) ? true : undefined),
    () =>
      `scale-down began ${new Date(scaleDownStartedAt).toISOString()}; not yet: ` +
      ofPool()
        .filter((c) => !judged(c))
        .map(
          (c) =>
            `${c.metadata.name} (${emptiedByScaleDown.has(c.metadata.name) ? 'emptied' : `${podsOn(c.status?.nodeName)} pods`}, ` +
            `lastPodEventTime ${c.status?.lastPodEventTime ?? 'unset'}, Consolidatable ` +
            `${c.status?.conditions?.find((k) => k.type === CONSOLIDATABLE_CONDITION)?.status ?? 'absent'})`,
        )
        .join('; '),
  );
  await objects.nodePools.mergePatch(name, {
    spec: { disruption: { budgets: [{ nodes: String(BUDGET) }] } },
  });
  const openedAt = Date.now();
  context.note(
    `${PODS_AFTER} pods left; ${emptyAtStart.size} of ${before.length} nodes empty; all Consolidatable, budget now "${BUDGET}"`,
  );

  // Settled: every pod Running on the pool, nothing disrupting, no empty node, and no NodeClaim changed
  // for long enough that the sweep has judged every node again (consolidateAfter, validation, two sweeps).
  const quietMs =
    (consolidateAfterSeconds +
      stack.timings.consolidationValidationSeconds +
      3 * stack.timings.sweepPeriodSeconds) *
    1_000;
  const unsettled = (): string[] => {
    const claims = ofPool();
    const last = recorder.history.nodeClaims.at(-1)?.at ?? 0;
    const pods = [...recorder.pods.values()];
    const quietFor = Date.now() - Math.max(last, openedAt);
    return [
      ...(quietFor > quietMs ? [] : [`NodeClaims changed ${(quietFor / 1000).toFixed(0)} s ago`]),
      ...(pods.length === PODS_AFTER ? [] : [`${pods.length} pods, not ${PODS_AFTER}`]),
      ...pods.filter((p) => !isAvailable(p)).map((p) => `pod ${p.metadata.name} not available`),
      ...claims.flatMap((c) =>
        c.metadata.deletionTimestamp || disruptionReasonOf(c) || podsOn(c.status?.nodeName) === 0
          ? [
              `${c.metadata.name}: ${c.metadata.deletionTimestamp ? 'deleting' : disruptionReasonOf(c) ? `marked ${disruptionReasonOf(c)}` : 'no pods'}`,
            ]
          : [],
      ),
    ];
  };
  await waitFor(
    context,
    'consolidation to settle',
    patience(stack, 30, quietMs),
    () => (unsettled().length === 0 ? true : undefined),
    () => unsettled().join('; '),
  );
  const after = ofPool();
  const sizesAfter = after.map((c) => instanceTypeOf(recorder, c));
  const priceAfter = hourlyPrice(book, sizesAfter);

  const everyClaim = new Set(
    recorder.history.nodeClaims
      .filter((o) => o.object.metadata.labels?.[WellKnown.nodePoolLabel] === name)
      .map((o) => o.object.metadata.name),
  );
  const { maxInFlight, starts } = disruptionCounts(
    recorder.history.nodeClaims,
    recorder.history.nodes,
    everyClaim,
  );
  const firstStart = new Map<string, number>();
  for (const start of starts) if (!firstStart.has(start.name)) firstStart.set(start.name, start.at);
  const emptyStarts = [...emptyAtStart].map((n) => firstStart.get(n) ?? Infinity);
  const otherStarts = before
    .filter((c) => !emptyAtStart.has(c.metadata.name))
    .map((c) => firstStart.get(c.metadata.name))
    .filter((at): at is number => at !== undefined);
  const emptyFirst = emptyStarts.every((at) => otherStarts.every((other) => at <= other));
  const fates = fatesOf(recorder.history.nodeClaims, before, after, Date.now());
  const replacements = after.filter((c) => !before.some((b) => b.metadata.name === c.metadata.name));
  const breaches = pdbBreaches(recorder.history.pods, scaledDownAt, runId);

  const invariants: Invariant[] = [
    {
      name: 'empty nodes go first',
      holds: emptyFirst && emptyStarts.every((at) => at !== Infinity),
      detail: `${emptyAtStart.size} node(s) empty after the scale-down, all disrupted before any node with pods`,
    },
    {
      name: `never more than ${BUDGET} nodes disrupting at once`,
      holds: maxInFlight <= BUDGET,
      detail: `at most ${maxInFlight} disrupting at any recorded NodeClaim or Node version`,
    },
    {
      name: 'no eviction takes a Deployment below its PDB minAvailable',
      holds: breaches.length === 0,
      detail:
        breaches.length === 0
          ? `checked on ${recorder.history.pods.filter((o) => o.at >= scaledDownAt).length} pod versions`
          : breaches.slice(0, 3).join('; '),
    },
    {
      name: 'underutilized nodes removed or replaced by cheaper ones: the pool costs less',
      holds: priceAfter < priceBefore && after.length < before.length,
      detail: `${before.length} nodes $${priceBefore.toFixed(3)}/h → ${after.length} nodes $${priceAfter.toFixed(3)}/h`,
    },
    {
      name: `all ${PODS_AFTER} pods Running afterwards`,
      holds: [...recorder.pods.values()].filter(isAvailable).length === PODS_AFTER,
      detail: `${[...recorder.pods.values()].filter(isAvailable).length} Running and Ready`,
    },
  ];
  const summary = [
    `pods: ${POD_COUNT} → ${PODS_AFTER} (each Deployment to a third), PDB minAvailable = replicas − 2`,
    `before: ${before.length} nodes (${summarize(sizesBefore)}), $${priceBefore.toFixed(3)}/h`,
    `after:  ${after.length} nodes (${summarize(sizesAfter)}), $${priceAfter.toFixed(3)}/h ` +
      `(${(100 * (1 - priceAfter / priceBefore)).toFixed(0)}% less)`,
    `fates: ${summarize(fates.map((f) => f.fate))}; ${replacements.length} cheaper replacement(s) launched`,
    `at most ${maxInFlight} nodes disrupting at once (budget ${BUDGET}); ${emptyAtStart.size} empty node(s) went first`,
  ];
  const marks: TimelineMark[] = fates.map((f) => ({ row: f.name, at: f.at, label: f.fate, kind: 'note' }));

  await deleteDeployments(context);
  for (const workload of WORKLOADS) {
    await pdbs
      .deleteNamespacedPodDisruptionBudget({ name: deploymentName(workload, runId), namespace })
      .catch(() => undefined);
  }
  await deleteNodeClaims(
    context,
    after.map((c) => c.metadata.name),
    patience(stack),
  );
  await deleteNodePoolAndClass(context, nodePool);
  return {
    invariants,
    summary,
    marks,
    figures: {
      nodesBefore: before.length,
      nodesAfter: after.length,
      pricePerHourBefore: Number(priceBefore.toFixed(4)),
      pricePerHourAfter: Number(priceAfter.toFixed(4)),
      emptyAtStart: emptyAtStart.size,
      replacements: replacements.length,
      maxInFlight,
    },
  };
}

const POD_DELETION_COST = 'controller.kubernetes.io/pod-deletion-cost';

/**
 * Nodes whose pods the scale-down can remove entirely: fewest pods first, as long as each Deployment
 * loses no more pods there than its scale-down removes; at most half the nodes.
 */
function nodesToEmpty(claims: readonly NodeClaim[], pods: readonly PodView[], runId: string): Set<string> {
  const nodes = claims
    .map((c) => c.status?.nodeName ?? '')
    .filter((n) => n !== '')
    .map((node) => ({ node, pods: pods.filter((p) => p.spec?.nodeName === node) }))
    .sort((a, b) => a.pods.length - b.pods.length);
  const removable = new Map(
    WORKLOADS.map((w) => [workloadLabels(w, runId).app, w.replicas - replicasAfter(w.replicas)]),
  );
  const chosen = new Set<string>();
  for (const { node, pods: onNode } of nodes) {
    if (chosen.size >= Math.floor(nodes.length / 2)) break;
    const taken = new Map<string, number>();
    for (const pod of onNode) {
      const app = pod.metadata.labels?.app ?? '';
      taken.set(app, (taken.get(app) ?? 0) + 1);
    }
    if (![...taken].every(([app, count]) => count <= (removable.get(app) ?? 0))) continue;
    for (const [app, count] of taken) removable.set(app, (removable.get(app) ?? 0) - count);
    chosen.add(node);
  }
  return chosen;
}

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

function makePolicyApi(context: ScenarioContext): PolicyV1Api {
  const config = new KubeConfig();
  config.loadFromFile(context.stack.kubeconfigPath);
  return config.makeApiClient(PolicyV1Api);
}

interface Fate {
  name: string;
  at: number;
  fate: string;
}

/**
 * What became of each node: kept, deleted for a reason (the last DisruptionReason it carried), or
 * replaced (a NodeClaim that was not there before appeared while it was disrupting); and the replacements.
 */
function fatesOf(
  history: readonly Observed<NodeClaim>[],
  before: readonly NodeClaim[],
  after: readonly NodeClaim[],
  settledAt: number,
): Fate[] {
  const names = new Set(before.map((c) => c.metadata.name));
  const kept = new Set(after.map((c) => c.metadata.name));
  const firstSeen = new Map<string, number>();
  for (const o of history)
    if (!firstSeen.has(o.object.metadata.name)) firstSeen.set(o.object.metadata.name, o.at);
  const newcomers = after.filter((c) => !names.has(c.metadata.name));
  const fates: Fate[] = [];
  for (const claim of before) {
    const name = claim.metadata.name;
    if (kept.has(name)) {
      fates.push({ name, at: settledAt, fate: 'kept' });
      continue;
    }
    const versions = history.filter((o) => o.object.metadata.name === name);
    const marked = versions.filter((o) => disruptionReasonOf(o.object));
    const reason = marked.length > 0 ? disruptionReasonOf(marked.at(-1)!.object) : undefined;
    const markedAt = marked[0]?.at ?? Infinity;
    const goneAt = versions.find((o) => o.type === 'DELETED')?.at ?? settledAt;
    const replaced = newcomers.some((c) => {
      const seen = firstSeen.get(c.metadata.name) ?? 0;
      return seen >= markedAt && seen <= goneAt;
    });
    const why = reason ?? 'deleted';
    fates.push({ name, at: goneAt, fate: replaced ? `replaced (${why})` : `deleted (${why})` });
  }
  for (const claim of newcomers) {
    fates.push({
      name: claim.metadata.name,
      at: firstSeen.get(claim.metadata.name) ?? settledAt,
      fate: 'cheaper replacement',
    });
  }
  return fates;
}

/**
 * Replays the pod versions in order and reports each moment a Deployment had fewer available pods
 * (Running, Ready, not terminating) than its PDB's minAvailable, from `from` (the scale-down done) on.
 */
function pdbBreaches(pods: readonly Observed<PodView>[], from: number, runId: string): string[] {
  const current = new Map<string, PodView>();
  const breaches: string[] = [];
  for (const { type, object, at } of pods) {
    if (type === 'DELETED') current.delete(object.metadata.name);
    else current.set(object.metadata.name, object);
    if (at < from) continue;
    for (const workload of WORKLOADS) {
      const app = workloadLabels(workload, runId).app;
      const available = [...current.values()].filter(
        (p) => p.metadata.labels?.app === app && isAvailable(p),
      ).length;
      const minAvailable = minAvailableOf(workload.replicas);
      if (available < minAvailable) {
        breaches.push(
          `${app}: ${available} available < minAvailable ${minAvailable} after ${type} ${object.metadata.name}`,
        );
      }
    }
  }
  return breaches;
}
