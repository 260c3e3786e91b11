// Underutilized consolidation, as upstream Karpenter's multi- and single-node consolidation
// (disruption/consolidation.go, multinodeconsolidation.go, singlenodeconsolidation.go), over the
// scheduling simulation: with the candidates removed, do their pods fit on the remaining nodes (delete
// them) or on the remaining nodes plus exactly one new node that is strictly cheaper than the candidates
// together (replace them)? Multi-node first (the largest prefix of the candidates, at most 100, found by
// binary search, that consolidates), then single-node (the first candidate that does). Never m → n.
// A command that failed lately (the command memory holds its key) is passed over, and every candidate the
// single-node pass could not consolidate says why (upstream's Unconsolidatable), naming the cheaper
// replacement that recent launch failures block when that is the reason. Under policy Balanced every
// move must also score at least 1/k (balanced.ts); a candidate whose outright deletion would not is not
// simulated on its own. Nodes still within their consolidateAfter receive none of the moved pods
// (upstream's consolidateAfter on destinations): a command may replace, not pack onto a node that just
// received pods or just came up.
import { WellKnown, type CapacityType } from '../../models/karpenter.js';
import type { NodeSelectorRequirement } from '../../models/kube.js';
import { solve } from '../scheduling/solve.js';
import { canPassThreshold, describeScore, scoreMove, type MoveScore, type PoolTotals } from './balanced.js';
import type {
  ExistingNode,
  InstanceType,
  NewNodeClaim,
  SchedulingInput,
  SchedulingNodePool,
  SchedulingPod,
} from '../scheduling/types.js';

/** Upstream's cap on candidates a multi-node search considers. */
const MAX_MULTI_NODE_CANDIDATES = 100;
/** Upstream's minimum number of cheaper spot options before one spot node is replaced by another. */
const MIN_SPOT_TO_SPOT_OPTIONS = 15;

export interface UnderutilizedCandidate {
  /** NodeClaim name. */
  name: string;
  /** Node name: the existing node the simulation must not place pods on. */
  nodeName: string;
  /** USD/h of the node's offering; Infinity when unknown (then it can be deleted, never replaced). */
  price: number;
  capacityType: CapacityType;
  /** node.kubernetes.io/instance-type. */
  instanceType: string;
  /** Its reschedulable pods. */
  pods: SchedulingPod[];
  /** Upstream's RescheduleDisruptionCost: 1 + one per pod to move. */
  disruptionCost: number;
}

export interface UnderutilizedInput {
  /** In the order to try them (see orderCandidates). */
  candidates: readonly UnderutilizedCandidate[];
  /** Every NodePool (with instance types and prices), the nodes pods may land on, DaemonSets. */
  cluster: Omit<SchedulingInput, 'pods'>;
  /** Pods waiting for a node: simulated too, so consolidation does not take the room they need. */
  pendingPods: readonly SchedulingPod[];
  /** How many nodes the Underutilized budget lets go now. */
  allowed: number;
  spotToSpot: boolean;
  /** Stop starting new simulations after this (upstream: 1 min multi-node, 3 min single-node). */
  deadline?: number;
  now?: () => number;
  /**
   * The NodePools as they would be with no offering blocked by recent launch failures; present only when
   * some offering is blocked. Used only to say why a candidate is not consolidated, never to decide.
   */
  unblockedNodePools?: SchedulingNodePool[];
  /** Keys (commandKey) of commands that failed lately and are not to be issued again yet. */
  heldCommands?: ReadonlySet<string>;
  /**
   * Nodes still within their NodePool's consolidateAfter (timing.ts isUnderConsolidateAfter): the pods a
   * command moves may not land there, unless still Pending; pending pods may (upstream's #3006).
   */
  settlingNodes?: ReadonlySet<string>;
  /** Policy Balanced: the NodePool's totals and k; every move must score at least 1/k. */
  balanced?: { totals: PoolTotals; k: number };
}

/** A candidate the single-node pass could not consolidate, and why. */
export interface Unconsolidatable {
  name: string;
  why: string;
}

export interface UnderutilizedSearch {
  command?: UnderutilizedCommand;
  /** Candidates the single-node pass tried and could not consolidate (empty when multi-node decided). */
  unconsolidatable: Unconsolidatable[];
  /** Policy Balanced: the score of every move the search simulated, approved or not. */
  scored: MoveScore[];
  /** Candidates whose own command the command memory holds (passed over), for the decision record. */
  held?: string[];
}

export interface ConsolidationReplacement {
  nodePoolName: string;
  /** The NodeClaim's requirements, instance types cut to those strictly cheaper than the candidates. */
  requirements: NodeSelectorRequirement[];
  instanceTypeNames: string[];
  /** The most the replacement may cost (its worst compatible offering), USD/h. */
  worstPrice: number;
  /** The cheapest option's price, USD/h: what the decision record states the command leads to. */
  cheapestPrice?: number;
}

export type UnderutilizedCommand = (
  | { decision: 'delete'; candidates: UnderutilizedCandidate[]; savings: number }
  | {
      decision: 'replace';
      candidates: UnderutilizedCandidate[];
      replacement: ConsolidationReplacement;
      savings: number;
    }
) & { score?: MoveScore };

export type ComputeOutcome = { command: UnderutilizedCommand } | { none: string; score?: MoveScore };

/** Most expensive per disruption first, as upstream: where moving pods saves the most. */
export function orderCandidates(candidates: readonly UnderutilizedCandidate[]): UnderutilizedCandidate[] {
  const score = (c: UnderutilizedCandidate) => (Number.isFinite(c.price) ? c.price : 0) / c.disruptionCost;
  return [...candidates].sort(
    (a, b) => score(b) - score(a) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  );
}

function valuesOf(requirements: readonly NodeSelectorRequirement[], key: string): (value: string) => boolean {
  const relevant = requirements.filter((r) => r.key === key);
  return (value) =>
    relevant.every((r) =>
      r.operator === 'In'
        ? (r.values ?? []).includes(value)
        : r.operator === 'NotIn'
          ? !(r.values ?? []).includes(value)
          : r.operator !== 'DoesNotExist',
    );
}

/**
 * The most the instance type may cost under the requirements, or undefined: upstream's WorstLaunchPrice,
 * which looks only at the capacity type launch would use, in its precedence reserved, spot, on-demand (so
 * a free reservation slot prices a replacement as reserved, and a node may move onto it).
 */
function worstPrice(
  instanceType: InstanceType,
  requirements: readonly NodeSelectorRequirement[],
): number | undefined {
  const zoneOk = valuesOf(requirements, WellKnown.zoneLabel);
  const capacityOk = valuesOf(requirements, WellKnown.capacityTypeLabel);
  const compatible = instanceType.offerings.filter(
    (o) => o.available && (o.zone === '' || zoneOk(o.zone)) && capacityOk(o.capacityType),
  );
  for (const capacityType of LAUNCH_PRECEDENCE) {
    const prices = compatible.filter((o) => o.capacityType === capacityType).map((o) => o.price);
    if (prices.length > 0) return Math.max(...prices);
  }
  return undefined;
}

const LAUNCH_PRECEDENCE: readonly CapacityType[] = ['reserved', 'spot', 'on-demand'];

function withRequirement(
  requirements: readonly NodeSelectorRequirement[],
  key: string,
  values: string[],
): NodeSelectorRequirement[] {
  return [...requirements.filter((r) => r.key !== key), { key, operator: 'In', values }];
}

/**
 * The replacement cut to instance types whose worst price is strictly below what the candidates cost
 * together, cheapest first; undefined when none is. Spot is pinned when spot is allowed, so a spot
 * shortage cannot fall back to a pricier on-demand node; spot-to-spot needs the setting and, for one
 * node, at least 15 cheaper options (kept to the 15 cheapest), as upstream, to avoid replacement churn.
 */
function cheaperReplacement(
  newNodeClaim: NewNodeClaim,
  candidates: readonly UnderutilizedCandidate[],
  input: UnderutilizedInput,
): ConsolidationReplacement | { none: string } {
  const total = candidates.reduce((sum, c) => sum + c.price, 0);
  if (!Number.isFinite(total)) return { none: 'a candidate has no known price' };
  const pool = input.cluster.nodePools.find((p) => p.name === newNodeClaim.nodePoolName);
  if (!pool) return { none: `NodePool ${newNodeClaim.nodePoolName} is not known` };
  let requirements = newNodeClaim.requirements;
  const allowsSpot = valuesOf(requirements, WellKnown.capacityTypeLabel)('spot');
  const allSpot = candidates.every((c) => c.capacityType === 'spot');
  if (allSpot) {
    if (!input.spotToSpot) return { none: 'spot-to-spot consolidation is disabled' };
    if (!allowsSpot) return { none: 'the replacement cannot be spot' };
  }
  if (allowsSpot) requirements = withRequirement(requirements, WellKnown.capacityTypeLabel, ['spot']);
  const byName = new Map(pool.instanceTypes.map((t) => [t.name, t]));
  let options = newNodeClaim.instanceTypeNames
    .map((name) => ({
      name,
      price: byName.get(name) ? worstPrice(byName.get(name) as InstanceType, requirements) : undefined,
    }))
    .filter((o): o is { name: string; price: number } => o.price !== undefined && o.price < total)
    .sort((a, b) => a.price - b.price || (a.name < b.name ? -1 : 1));
  if (options.length === 0) return { none: `no replacement is cheaper than $${total.toFixed(4)}/h` };
  if (allSpot && candidates.length === 1) {
    if (options.length < MIN_SPOT_TO_SPOT_OPTIONS) {
      return { none: `only ${options.length} cheaper spot options (${MIN_SPOT_TO_SPOT_OPTIONS} needed)` };
    }
    options = options.slice(0, MIN_SPOT_TO_SPOT_OPTIONS);
  }
  const names = options.map((o) => o.name);
  return {
    nodePoolName: newNodeClaim.nodePoolName,
    requirements: withRequirement(requirements, WellKnown.instanceTypeLabel, names),
    instanceTypeNames: names,
    worstPrice: Math.max(...options.map((o) => o.price)),
    cheapestPrice: Math.min(...options.map((o) => o.price)),
  };
}

/** Upstream's computeConsolidation for one set of candidates, scored under policy Balanced. */
export function computeConsolidation(
  candidates: readonly UnderutilizedCandidate[],
  input: UnderutilizedInput,
  options: { sameTypeMustBeCheaper?: boolean } = {},
): ComputeOutcome {
  const outcome = feasibleConsolidation(candidates, input, options);
  if (!input.balanced || 'none' in outcome) return outcome;
  const disruption = candidates.reduce((sum, c) => sum + c.disruptionCost, 0);
  const score = scoreMove(outcome.command.savings, disruption, input.balanced.totals, input.balanced.k);
  if (!score.approved) return { none: describeScore(score), score };
  return { command: { ...outcome.command, score } };
}

function feasibleConsolidation(
  candidates: readonly UnderutilizedCandidate[],
  input: UnderutilizedInput,
  options: { sameTypeMustBeCheaper?: boolean },
): ComputeOutcome {
  const leaving = new Set(candidates.map((c) => c.nodeName));
  const moving = candidates.flatMap((c) => c.pods);
  const movingUids = new Set(moving.map((p) => p.metadata.uid));
  const refusedPods = new Set(moving.filter((p) => p.status?.phase !== 'Pending').map((p) => p.metadata.uid));
  const existingNodes: ExistingNode[] = (input.cluster.existingNodes ?? [])
    .filter((n) => !leaving.has(n.name))
    .map((n) => (input.settlingNodes?.has(n.name) && refusedPods.size > 0 ? { ...n, refusedPods } : n));
  // A command launches one replacement at most: the packer may not split it into two cheaper ones.
  const result = solve({
    ...input.cluster,
    existingNodes,
    pods: [...moving, ...input.pendingPods],
    options: { ...input.cluster.options, packing: 'CostWithoutMoreNodeClaims' },
  });
  const stuck = result.unschedulable.find((u) => movingUids.has(u.pod.uid));
  if (stuck)
    return { none: `pod ${stuck.pod.namespace}/${stuck.pod.name} would not schedule: ${stuck.reason}` };
  const receivers = new Map(existingNodes.map((n) => [n.name, n]));
  const uninitialized = result.existingPlacements.find(
    (p) =>
      movingUids.has(p.pod.uid) &&
      (p.kind === 'NodeClaim' || receivers.get(p.nodeName)?.initialized === false),
  );
  if (uninitialized)
    return { none: `pod ${uninitialized.pod.name} would need a node that is not initialized yet` };
  // New NodeClaims only pending pods need are provisioning's business, not this command's.
  const launches = result.newNodeClaims.filter((nc) => nc.pods.some((p) => movingUids.has(p.uid)));
  const cost = candidates.reduce((sum, c) => sum + c.price, 0);
  if (launches.length === 0)
    return { command: { decision: 'delete', candidates: [...candidates], savings: cost } };
  if (launches.length > 1) return { none: `the pods would need ${launches.length} new nodes` };
  const launch = launches[0] as NewNodeClaim;
  // Under MIN_VALUES_POLICY=BestEffort provisioning may lower a minValues to place pods at all; a
  // voluntary move does not give up the flexibility the NodePool asks for.
  if (launch.minValuesRelaxed)
    return { none: "the replacement would need the NodePool's minValues lowered (BestEffort)" };
  const replacement = cheaperReplacement(launch, candidates, input);
  if ('none' in replacement) return replacement;
  if (options.sameTypeMustBeCheaper) return withoutSameType(replacement, candidates, input);
  return {
    command: {
      decision: 'replace',
      candidates: [...candidates],
      replacement,
      savings: cost - replacement.worstPrice,
    },
  };
}

/**
 * Upstream's filterOutSameInstanceType: an option of the same type as some candidate must be cheaper
 * than the cheapest candidate of that type, or the command only moves pods between identical machines.
 */
function withoutSameType(
  replacement: ConsolidationReplacement,
  candidates: readonly UnderutilizedCandidate[],
  input: UnderutilizedInput,
): ComputeOutcome {
  const cheapestOfType = new Map<string, number>();
  for (const c of candidates) {
    cheapestOfType.set(c.instanceType, Math.min(c.price, cheapestOfType.get(c.instanceType) ?? Infinity));
  }
  const limit = Math.min(
    ...replacement.instanceTypeNames
      .filter((n) => cheapestOfType.has(n))
      .map((n) => cheapestOfType.get(n) ?? Infinity),
  );
  if (!Number.isFinite(limit))
    return {
      command: {
        decision: 'replace',
        candidates: [...candidates],
        replacement,
        savings: candidates.reduce((s, c) => s + c.price, 0) - replacement.worstPrice,
      },
    };
  const pool = input.cluster.nodePools.find((p) => p.name === replacement.nodePoolName);
  const keptPrices: number[] = [];
  const kept = replacement.instanceTypeNames.filter((name) => {
    const type = pool?.instanceTypes.find((t) => t.name === name);
    const price = type ? worstPrice(type, replacement.requirements) : undefined;
    if (price === undefined || price >= limit) return false;
    keptPrices.push(price);
    return true;
  });
  if (kept.length === 0) return { none: 'only replacements no cheaper than a candidate of the same type' };
  const narrowed: ConsolidationReplacement = {
    ...replacement,
    requirements: withRequirement(replacement.requirements, WellKnown.instanceTypeLabel, kept),
    instanceTypeNames: kept,
    cheapestPrice: Math.min(...keptPrices),
  };
  const total = candidates.reduce((sum, c) => sum + c.price, 0);
  return {
    command: {
      decision: 'replace',
      candidates: [...candidates],
      replacement: narrowed,
      savings: total - narrowed.worstPrice,
    },
  };
}

/**
 * What makes two commands the same: the decision, the candidates and, for a replace, the instance types
 * it may launch. A change to any of them (offerings unblocked, other candidates) is a different command.
 */
export function commandKey(command: UnderutilizedCommand): string {
  const names = command.candidates.map((c) => c.name).sort();
  const types = command.decision === 'replace' ? [...command.replacement.instanceTypeNames].sort() : [];
  return `${command.decision}|${names.join(',')}|${types.join(',')}`;
}

const isHeld = (input: UnderutilizedInput, command: UnderutilizedCommand) =>
  input.heldCommands?.has(commandKey(command)) === true;

const timeUp = (input: UnderutilizedInput) =>
  input.deadline !== undefined && (input.now ?? Date.now)() >= input.deadline;

/**
 * The largest prefix (of at least two) that consolidates, by binary search as upstream. A replacement of
 * the same instance type as one of the candidates must be cheaper than the cheapest such candidate alone,
 * or the command would only shuffle pods between identical machines.
 */
export function multiNodeConsolidation(
  input: UnderutilizedInput,
  scored: MoveScore[],
): UnderutilizedCommand | undefined {
  const pool = input.candidates.slice(
    0,
    Math.min(MAX_MULTI_NODE_CANDIDATES, Math.max(0, Math.floor(input.allowed))),
  );
  if (pool.length < 2) return undefined;
  let low = 1;
  let high = pool.length - 1;
  let best: UnderutilizedCommand | undefined;
  while (low <= high && !timeUp(input)) {
    const mid = Math.floor((low + high) / 2);
    const outcome = computeConsolidation(pool.slice(0, mid + 1), input, { sameTypeMustBeCheaper: true });
    const score = 'command' in outcome ? outcome.command.score : outcome.score;
    if (score) scored.push(score);
    if ('command' in outcome) {
      best = outcome.command;
      low = mid + 1;
    } else high = mid - 1;
  }
  return best && !isHeld(input, best) ? best : undefined;
}

/**
 * Why a candidate does not consolidate: the simulation's answer, and, when some offering is blocked and
 * the candidate would be replaced were nothing blocked, the blocked instance types that stand in the way.
 */
function whyNot(candidate: UnderutilizedCandidate, none: string, input: UnderutilizedInput): string {
  if (!input.unblockedNodePools) return none;
  const unblocked = computeConsolidation([candidate], {
    ...input,
    cluster: { ...input.cluster, nodePools: input.unblockedNodePools },
  });
  if (!('command' in unblocked) || unblocked.command.decision !== 'replace') return none;
  const types = unblocked.command.replacement.instanceTypeNames;
  const shown = types.slice(0, 3).join(', ') + (types.length > 3 ? `, and ${types.length - 3} more` : '');
  return `${none}: the cheaper replacement (${shown}) is marked unavailable after recent launch failures`;
}

/** The first candidate, in order and within the budget, that consolidates on its own. */
export function singleNodeConsolidation(input: UnderutilizedInput, scored: MoveScore[]): UnderutilizedSearch {
  const unconsolidatable: Unconsolidatable[] = [];
  const held: string[] = [];
  if (input.allowed < 1) return { unconsolidatable, scored };
  for (const candidate of input.candidates) {
    if (timeUp(input)) break;
    const { balanced } = input;
    if (balanced && !canPassThreshold(candidate, balanced.totals, balanced.k)) {
      const best = scoreMove(candidate.price, candidate.disruptionCost, balanced.totals, balanced.k);
      unconsolidatable.push({ name: candidate.name, why: `even deleting it: ${describeScore(best)}` });
      continue;
    }
    const outcome = computeConsolidation([candidate], input);
    const score = 'command' in outcome ? outcome.command.score : outcome.score;
    if (score) scored.push(score);
    if ('none' in outcome) {
      unconsolidatable.push({ name: candidate.name, why: whyNot(candidate, outcome.none, input) });
    } else if (!isHeld(input, outcome.command)) {
      return { command: outcome.command, unconsolidatable, scored, ...(held.length > 0 ? { held } : {}) };
    } else held.push(candidate.name);
  }
  return { unconsolidatable, scored, ...(held.length > 0 ? { held } : {}) };
}

/** Multi-node before single-node, as upstream; what single-node could not consolidate, and why. */
export function underutilizedSearch(input: UnderutilizedInput): UnderutilizedSearch {
  const scored: MoveScore[] = [];
  const multi = multiNodeConsolidation(input, scored);
  return multi ? { command: multi, unconsolidatable: [], scored } : singleNodeConsolidation(input, scored);
}

export function underutilizedCommand(input: UnderutilizedInput): UnderutilizedCommand | undefined {
  return underutilizedSearch(input).command;
}
