// drift-budget: the reference failure of DESIGN.md Problem (2). A static NodePool of 10 nodes with a
// disruption budget of "5" drifts when its AKSNodeClass's imageFamily changes from Ubuntu2204 to
// AzureLinux. Replacements must fan out up to the budget: 5 in flight at once, never 6, all 10 replaced
// in two waves; the summary compares the makespan with replacing one node at a time.
import { findCondition } from '../../shared/decisions/conditions.js';
import { ConditionTypes, WellKnown, type NodeClaim } from '../../shared/models/index.js';
import type { Observed } from '../view/recorder.js';
import type { TimelineMark } from '../view/timeline-svg.js';
import {
  exampleNodeClass,
  exampleNodePool,
  patience,
  waitFor,
  type Invariant,
  type Scenario,
  type ScenarioContext,
  type ScenarioOutcome,
} from './scenario.js';

const REPLICAS = 10;
const BUDGET = 5;

export const driftBudget: Scenario = {
  name: 'drift-budget',
  title: `drift with budget "${BUDGET}": ${BUDGET} replacements in flight at once, never ${BUDGET + 1}`,
  description:
    `A static NodePool of ${REPLICAS} nodes with budget "${BUDGET}"; its AKSNodeClass's imageFamily changes from ` +
    `Ubuntu2204 to AzureLinux. ${BUDGET} replacements run at once, never more, and all ${REPLICAS} are replaced in ` +
    'two waves; the summary compares the makespan with one replacement at a time.',
  usesPods: false,
  play,
};

interface Disruption {
  name: string;
  from: number;
  to: number;
}

async function play(context: ScenarioContext): Promise<ScenarioOutcome> {
  const { stack, recorder, runId } = context;
  const objects = stack.app.deps.objects;
  const name = `drift-${runId}`;
  const nodeClass = exampleNodeClass(name, runId);
  const nodePool = { ...exampleNodePool(name, runId, name, String(BUDGET)) };
  nodePool.spec = { ...nodePool.spec, replicas: REPLICAS };
  await objects.nodeClasses.create(nodeClass);
  await objects.nodePools.create(nodePool);
  context.note(`static NodePool ${name}: replicas ${REPLICAS}, budget "${BUDGET}", imageFamily Ubuntu2204`);

  const ofPool = (): NodeClaim[] =>
    [...recorder.nodeClaims.values()].filter((c) => c.metadata.labels?.[WellKnown.nodePoolLabel] === name);
  const original = await waitFor(context, `${REPLICAS} initialized nodes`, patience(stack, 4), () => {
    const claims = ofPool();
    return claims.length === REPLICAS && claims.every(initialized)
      ? claims.map((c) => c.metadata.name)
      : undefined;
  });
  const originals = new Set(original);
  context.note(`${REPLICAS} nodes initialized; changing imageFamily to AzureLinux`);

  const driftedAt = Date.now();
  await objects.nodeClasses.mergePatch(name, { spec: { imageFamily: 'AzureLinux' } });
  await waitFor(context, `every node replaced`, patience(stack, 8), () => {
    const claims = ofPool();
    const old = claims.filter((c) => originals.has(c.metadata.name));
    const fresh = claims.filter((c) => !originals.has(c.metadata.name));
    return old.length === 0 && fresh.length === REPLICAS && fresh.every(initialized) ? true : undefined;
  });
  const makespanMs = Date.now() - driftedAt;

  const disruptions = disruptionIntervals(
    recorder.history.nodeClaims,
    originals,
    nodeNameTaintTimes(context),
  );
  const maxInFlight = maxOverlap(disruptions);
  const firstGone = Math.min(...disruptions.map((d) => d.to));
  const firstWave = disruptions.filter((d) => d.from < firstGone).length;
  const oneAtATimeMs = disruptions.reduce((sum, d) => sum + (d.to - d.from), 0);
  const invariants: Invariant[] = [
    {
      name: `never more than ${BUDGET} nodes disrupting at once`,
      holds: maxInFlight <= BUDGET && disruptions.length === REPLICAS,
      detail: `at most ${maxInFlight} in flight, from the first disrupted taint or DisruptionReason to the old NodeClaim gone`,
    },
    {
      name: `${BUDGET} replacements in flight at once (the budget is used, not one at a time)`,
      holds: maxInFlight === BUDGET && firstWave === BUDGET,
      detail: `${firstWave} started before the first old node was gone`,
    },
  ];
  const marks: TimelineMark[] = [];
  const summary = [
    `${REPLICAS} nodes replaced after the drift in ${(makespanMs / 1000).toFixed(1)} s; at most ${maxInFlight} in flight (budget ${BUDGET})`,
    `serialized baseline (one replacement at a time, each as long as measured here): ${(oneAtATimeMs / 1000).toFixed(1)} s → ${(oneAtATimeMs / makespanMs).toFixed(1)}× slower`,
  ];

  await objects.nodePools.delete(name);
  await waitFor(context, 'the NodePool and its NodeClaims to be gone', patience(stack, 2), () =>
    ofPool().length === 0 && !recorder.nodePools.has(name) ? true : undefined,
  );
  await objects.nodeClasses.delete(name);
  return { invariants, summary, marks, figures: { makespanMs, maxInFlight, oneAtATimeMs, firstWave } };
}

function initialized(nodeClaim: NodeClaim): boolean {
  return findCondition(nodeClaim.status?.conditions, ConditionTypes.initialized)?.status === 'True';
}

/** When each Node first carried karpenter.sh/disrupted. */
function nodeNameTaintTimes(context: ScenarioContext): Map<string, number> {
  const times = new Map<string, number>();
  for (const observation of context.recorder.history.nodes) {
    const name = observation.object.metadata.name;
    if (times.has(name)) continue;
    if ((observation.object.spec.taints ?? []).some((t) => t.key === WellKnown.disruptedTaintKey)) {
      times.set(name, observation.at);
    }
  }
  return times;
}

/**
 * Each old NodeClaim's disruption: from the first sign (DisruptionReason, deletion, or its Node tainted
 * disrupted) until the NodeClaim is gone, as the budget counts it.
 */
export function disruptionIntervals(
  history: readonly Observed<NodeClaim>[],
  names: ReadonlySet<string>,
  taintedAt: ReadonlyMap<string, number>,
): Disruption[] {
  const result = new Map<string, Disruption>();
  for (const observation of history) {
    const claim = observation.object;
    const name = claim.metadata.name;
    if (!names.has(name)) continue;
    const nodeTainted = claim.status?.nodeName ? taintedAt.get(claim.status.nodeName) : undefined;
    const signal =
      observation.type === 'DELETED' ||
      Boolean(claim.metadata.deletionTimestamp) ||
      Boolean(findCondition(claim.status?.conditions, ConditionTypes.disruptionReason));
    const from = Math.min(signal ? observation.at : Infinity, nodeTainted ?? Infinity);
    const current = result.get(name);
    if (Number.isFinite(from) && (!current || from < current.from))
      result.set(name, { name, from, to: current?.to ?? Infinity });
    if (observation.type === 'DELETED') {
      const entry = result.get(name);
      if (entry) entry.to = observation.at;
    }
  }
  return [...result.values()];
}

/** The largest number of intervals open at one moment. */
export function maxOverlap(intervals: readonly { from: number; to: number }[]): number {
  const edges = intervals.flatMap((i) => [
    { at: i.from, delta: 1 },
    { at: i.to, delta: -1 },
  ]);
  // An interval that ends at the moment another starts does not overlap it.
  edges.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let open = 0;
  let max = 0;
  for (const edge of edges) {
    open += edge.delta;
    max = Math.max(max, open);
  }
  return max;
}
