// drift-budget: the failure docs/design.md calls "Blocking creation serializes drift". A static NodePool of 10 nodes with a
// disruption budget of "5" drifts when its AKSNodeClass's imageFamily changes from Ubuntu2204 to
// AzureLinux. Replacements must fan out up to the budget: 5 in flight at once, never 6, all 10 replaced
// in two waves; the summary compares the makespan with replacing one node at a time.
// The pool's rollout policy is Immediate: a canary first is the rollout scenario's story, not this one's.
import { findCondition } from '../../shared/decisions/conditions.js';
import { RolloutAnnotations } from '../../shared/decisions/rollout.js';
import { ConditionTypes, WellKnown, type Node, type NodeClaim } from '../../shared/models/index.js';
import type { Observed } from '../view/recorder.js';
import type { TimelineMark } from '../view/timeline-svg.js';
import {
  claimsOfPool,
  createNodeClassAndPool,
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

async function play(context: ScenarioContext): Promise<ScenarioOutcome> {
  const { stack, recorder, runId } = context;
  const objects = stack.admin.objects;
  const name = `drift-${runId}`;
  const nodePool = { ...exampleNodePool(name, runId, name, String(BUDGET)) };
  nodePool.spec = { ...nodePool.spec, replicas: REPLICAS };
  // What this scenario shows is the budget's fan-out, so the pool opts out of the canary rollout that
  // drift is by default (the rollout scenario plays that one).
  nodePool.metadata = {
    ...nodePool.metadata,
    annotations: { ...nodePool.metadata.annotations, [RolloutAnnotations.policy]: 'Immediate' },
  };
  await createNodeClassAndPool(context, nodePool);
  context.note(`static NodePool ${name}: replicas ${REPLICAS}, budget "${BUDGET}", imageFamily Ubuntu2204`);

  const ofPool = () => claimsOfPool(recorder, name);
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

  const { maxInFlight, starts, firstGoneAt, spans } = disruptionCounts(
    recorder.history.nodeClaims,
    recorder.history.nodes,
    originals,
  );
  const firstWave = new Set(starts.filter((start) => start.at < firstGoneAt).map((start) => start.name)).size;
  const oneAtATimeMs = spans.reduce((sum, span) => sum + span, 0);
  const abandoned = starts.length - originals.size;
  const invariants: Invariant[] = [
    {
      name: `never more than ${BUDGET} nodes disrupting at once`,
      holds: maxInFlight <= BUDGET,
      detail: `at most ${maxInFlight} old nodes disrupting (DisruptionReason, karpenter.sh/disrupted taint, or deleting) at any observed moment${abandoned > 0 ? `; ${abandoned} replacement(s) abandoned and retried` : ''}`,
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

/**
 * Replays the recorded NodeClaim and Node versions in time order and counts, after each, the original
 * NodeClaims that are disrupting as the budget counts them: a DisruptionReason condition, deletion, or
 * their Node tainted karpenter.sh/disrupted. An abandoned replacement (taint removed, node back in
 * service) stops counting until the node is tried again.
 */
export function disruptionCounts(
  nodeClaims: readonly Observed<NodeClaim>[],
  nodes: readonly Observed<Node>[],
  originals: ReadonlySet<string>,
): { maxInFlight: number; starts: { name: string; at: number }[]; firstGoneAt: number; spans: number[] } {
  type Event = { at: number; claim?: Observed<NodeClaim>; node?: Observed<Node> };
  const events: Event[] = [
    ...nodeClaims
      .filter((o) => originals.has(o.object.metadata.name))
      .map((claim) => ({ at: claim.at, claim })),
    ...nodes.map((node) => ({ at: node.at, node })),
  ].sort((a, b) => a.at - b.at);
  const claimDisrupting = new Map<string, boolean>();
  const nodeOfClaim = new Map<string, string>();
  const nodeTainted = new Map<string, boolean>();
  const gone = new Set<string>();
  const since = new Map<string, number>();
  const starts: { name: string; at: number }[] = [];
  const spans: number[] = [];
  let maxInFlight = 0;
  let firstGoneAt = Infinity;
  for (const event of events) {
    if (event.claim) {
      const { object, type, at } = event.claim;
      const name = object.metadata.name;
      if (object.status?.nodeName) nodeOfClaim.set(name, object.status.nodeName);
      if (type === 'DELETED') {
        gone.add(name);
        firstGoneAt = Math.min(firstGoneAt, at);
      }
      claimDisrupting.set(
        name,
        Boolean(object.metadata.deletionTimestamp) ||
          Boolean(findCondition(object.status?.conditions, ConditionTypes.disruptionReason)),
      );
    }
    if (event.node) {
      const { object, type } = event.node;
      nodeTainted.set(
        object.metadata.name,
        type !== 'DELETED' && (object.spec.taints ?? []).some((t) => t.key === WellKnown.disruptedTaintKey),
      );
    }
    let inFlight = 0;
    for (const name of originals) {
      const node = nodeOfClaim.get(name);
      const disrupting =
        !gone.has(name) &&
        (claimDisrupting.get(name) === true || (node !== undefined && nodeTainted.get(node) === true));
      if (disrupting) inFlight += 1;
      const started = since.get(name);
      if (disrupting && started === undefined) {
        since.set(name, event.at);
        starts.push({ name, at: event.at });
      } else if (!disrupting && started !== undefined) {
        since.delete(name);
        if (gone.has(name)) spans.push(event.at - started);
      }
    }
    maxInFlight = Math.max(maxInFlight, inFlight);
  }
  return { maxInFlight, starts, firstGoneAt, spans };
}
