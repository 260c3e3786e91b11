// A consolidation command, one per NodePool at a time (instance `consolidate-<NodePool uid>`): the sweep
// decides it, this orchestration waits the validation delay (upstream: 15 s) on a durable timer, then
// checks it again against fresh state and acts on what still holds. The wait exists for the reason it
// exists upstream: a pod may have just been scheduled onto a node the decision thought empty, or a pending
// pod nominated to it, and the cluster state the sweep read is seconds old. While a command waits, the
// sweep starts no other for that NodePool, as upstream's singleton waits.
import type * as df from 'durable-functions';
import { callActivityThroughOutages } from '../outage-retry.js';
import { allowedDisruptions } from '../../decisions/budgets.js';
import { evaluateCandidate, type Candidate } from '../../decisions/consolidation/candidates.js';
import { removeCondition } from '../../decisions/conditions.js';
import {
  CONSOLIDATION_FAILURES_ANNOTATION,
  parseCommandMemory,
} from '../../decisions/consolidation/command-memory.js';
import { commandKey, computeConsolidation } from '../../decisions/consolidation/underutilized.js';
import { budgetNodesOf, disruptionReasonOf } from '../../decisions/disruption-state.js';
import { isNotFound } from '../../kube/errors.js';
import { listNodes, toDomainNode } from '../../kube/nodes.js';
import {
  ConditionTypes,
  WellKnown,
  type DisruptionReason,
  type NodeClaim,
  type NodePool,
} from '../../models/karpenter.js';
import type { HandlerContext } from '../../runtime/definitions.js';
import { ConsolidationNames } from '../../runtime/function-names.js';
import type { LifecycleDependencies } from '../dependencies.js';
import { SweepView } from '../sweep/snapshot.js';
import { deleteNodeClaim } from '../termination/termination.js';
import { publishTerminating, publishUnconsolidatable } from './blocked-events.js';
import { forgetConsolidationFailures, rememberFailedConsolidation } from './command-memory.js';
import { nodeClaimTarget, updateNodeClaimStatus } from '../nodeclaim-writes.js';
import { nodesOfNodeClaim } from '../nodeclaim-nodes.js';
import { taintNodeDisrupted, untaintNodeDisrupted } from '../node-taints.js';
import { nodeInputsOf, readClusterPods, type ClusterPods } from './cluster-pods.js';
import {
  awaitReplacementInitialized,
  deleteUninitializedReplacement,
  launchReplacement,
  markForDisruption,
  replacementInput,
  type ReplacementInput,
} from './replacement.js';
import { nodeClaimsByPool } from './scope.js';
import { nodesWithNodeClaims, underutilizedInput } from './underutilized-input.js';

export const consolidationInstanceId = (nodePoolUid: string): string => `consolidate-${nodePoolUid}`;

export interface ConsolidationCommand {
  nodePool: { name: string; uid: string };
  reason: Extract<DisruptionReason, 'Empty' | 'Underutilized'>;
  /** The NodeClaims to delete. */
  candidates: { name: string; uid: string }[];
  decidedAt: string;
  validationSeconds: number;
  /** Underutilized only: delete the candidates, or replace them with one cheaper node first. */
  decision?: 'delete' | 'replace';
  /** The decision's savings in USD/h, for the log. */
  savings?: number;
  /** Underutilized only: the command's commandKey, under which a failure is remembered. */
  key?: string;
}

export interface ConsolidationReplacementInput {
  replacement: ReplacementInput;
  candidates: { name: string; uid: string }[];
  why?: string;
  /** The commandKey of the replace being carried out (absent in histories from before it existed). */
  key?: string;
}

export type ConsolidationOutcome =
  | { outcome: 'Executed'; deleted: string[]; dropped: { name: string; why: string }[] }
  | {
      outcome: 'Replacing';
      replacement: ReplacementInput;
      candidates: { name: string; uid: string }[];
      key?: string;
    }
  | { outcome: 'Replaced'; replacement: string; deleted: string[] }
  | { outcome: 'Abandoned'; why: string }
  | { outcome: 'Invalid'; why: string };

export function* consolidationOrchestrator(
  context: df.OrchestrationContext,
): Generator<df.Task, ConsolidationOutcome, unknown> {
  const command = context.df.getInput<ConsolidationCommand>();
  const validateAt = Date.parse(command.decidedAt) + command.validationSeconds * 1000;
  if (context.df.currentUtcDateTime.getTime() < validateAt)
    yield context.df.createTimer(new Date(validateAt));
  const outcome = yield* callActivityThroughOutages<ConsolidationOutcome>(
    context,
    ConsolidationNames.execute,
    command,
  );
  if (outcome.outcome !== 'Replacing') return outcome;

  // Replace: the candidates are marked and tainted and the cheaper node launched; wait for it as a
  // drift replacement does, then delete the candidates, or put them back in service if it fails.
  const input = outcome.replacement;
  const key = outcome.key !== undefined ? { key: outcome.key } : {};
  const why = yield* awaitReplacementInitialized(context, input, '');
  if (why === undefined) {
    const done: ConsolidationReplacementInput = {
      replacement: input,
      candidates: outcome.candidates,
      ...key,
    };
    return yield* callActivityThroughOutages<ConsolidationOutcome>(
      context,
      ConsolidationNames.complete,
      done,
    );
  }
  const abandon: ConsolidationReplacementInput = {
    replacement: input,
    candidates: outcome.candidates,
    why,
    ...key,
  };
  yield* callActivityThroughOutages(context, ConsolidationNames.abandon, abandon);
  return { outcome: 'Abandoned', why };
}

/**
 * Fresh NodeClaims and Nodes (the sweep's read is seconds old by now), indexed as the sweep's are. Empty
 * needs only the NodePool's own; Underutilized simulates against every node in the cluster, so it reads
 * them all once and takes the NodePool's from that.
 */
async function readFreshView(
  deps: LifecycleDependencies,
  nodePool: NodePool,
  reason: ConsolidationCommand['reason'],
): Promise<SweepView> {
  const { core } = await deps.kube();
  const readAt = deps.now();
  const whole = reason === 'Underutilized';
  const poolOnly = { labelSelector: `${WellKnown.nodePoolLabel}=${nodePool.metadata.name}` };
  const [nodeClaims, nodes] = await Promise.all([
    deps.objects.nodeClaims.list(whole ? {} : poolOnly),
    whole ? listNodes(core) : core.listNode(poolOnly).then((list) => list.items.map(toDomainNode)),
  ]);
  return new SweepView({ readAt, nodeClaims, nodes, nodePools: [nodePool], nodeClasses: [] });
}

/**
 * Re-validates the command against fresh state and deletes the candidates that are still valid, as many
 * as the budget allows now. Each deleted NodeClaim is marked DisruptionReason=<reason> and its Node tainted
 * first, as upstream, so nothing schedules onto it while termination drains it.
 */
export async function executeConsolidation(
  deps: LifecycleDependencies,
  command: ConsolidationCommand,
  context: Pick<HandlerContext, 'orchestrations' | 'invocationId'>,
): Promise<ConsolidationOutcome> {
  const nodePool = await deps.objects.nodePools.get(command.nodePool.name);
  if (!nodePool || nodePool.metadata.uid !== command.nodePool.uid || nodePool.metadata.deletionTimestamp) {
    return { outcome: 'Invalid', why: `NodePool ${command.nodePool.name} is gone` };
  }
  const [view, pods] = await Promise.all([
    readFreshView(deps, nodePool, command.reason),
    readClusterPods(deps),
  ]);
  const now = deps.now();
  const poolClaims = nodeClaimsByPool(view.nodeClaims()).get(command.nodePool.name) ?? [];
  const nodesFor = (c: NodeClaim) => view.nodesFor(c);
  const wanted = new Map(command.candidates.map((c) => [c.uid, c.name]));
  const inputs = nodeInputsOf(
    poolClaims.filter((c) => wanted.has(c.metadata.uid ?? '')),
    nodesFor,
    pods,
  );
  const candidateContext = { nodePool, pdbs: pods.pdbs, nominatedNodes: pods.nominatedNodes, now };
  const valid: Candidate[] = [];
  const dropped: { name: string; why: string }[] = [];
  for (const input of inputs) {
    const verdict = evaluateCandidate(input, candidateContext);
    if (verdict.kind !== 'candidate') {
      dropped.push({
        name: verdict.name,
        why:
          verdict.kind === 'blocked'
            ? verdict.message
            : verdict.kind === 'waiting'
              ? 'a pod event since the decision'
              : verdict.why,
      });
    } else if (command.reason === 'Empty' && !verdict.empty) {
      dropped.push({ name: verdict.name, why: 'no longer empty' });
    } else valid.push(verdict);
  }
  for (const [uid, name] of wanted) {
    if (!inputs.some((i) => i.nodeClaim.metadata.uid === uid)) dropped.push({ name, why: 'gone' });
  }
  const budget = allowedDisruptions(nodePool, command.reason, budgetNodesOf(poolClaims, nodesFor), now);
  if (command.reason === 'Underutilized') {
    // The simulation judged these nodes together: all must still qualify, and fit in the budget.
    if (dropped.length > 0) return invalid(deps, command, `${dropped[0]?.name}: ${dropped[0]?.why}`);
    if (valid.length > budget.allowed) return invalid(deps, command, 'the budget no longer allows it');
    return executeUnderutilized(deps, command, { nodePool, view, pods }, valid, context);
  }
  for (const late of valid.splice(budget.allowed)) {
    dropped.push({ name: late.name, why: 'the budget no longer allows it' });
  }
  return disruptAll(deps, command, valid, dropped, context);
}

/** Marks, taints and deletes each candidate: the command's Executed outcome. */
async function disruptAll(
  deps: LifecycleDependencies,
  command: ConsolidationCommand,
  candidates: readonly Candidate[],
  dropped: { name: string; why: string }[],
  context: Pick<HandlerContext, 'orchestrations'>,
): Promise<ConsolidationOutcome> {
  const deleted: string[] = [];
  for (const candidate of candidates) {
    if (await disrupt(deps, candidate, command.reason, context)) deleted.push(candidate.name);
  }
  if (deleted.length > 0) countDecision(deps, command, 'delete', deleted.length);
  deps.log.info('consolidation executed', {
    nodePool: command.nodePool.name,
    reason: command.reason,
    deleted,
    dropped,
  });
  return { outcome: 'Executed', deleted, dropped };
}

/** One decision carried out, labelled as upstream: reason and consolidation type (empty, single, multi). */
function countDecision(
  deps: LifecycleDependencies,
  command: ConsolidationCommand,
  decision: 'delete' | 'replace',
  candidates: number,
): void {
  deps.metrics.increment('karpenter_voluntary_disruption_decisions_total', {
    decision,
    reason: command.reason.toLowerCase(),
    consolidation_type: command.reason === 'Empty' ? 'empty' : candidates > 1 ? 'multi' : 'single',
  });
}

function invalid(
  deps: LifecycleDependencies,
  command: ConsolidationCommand,
  why: string,
): ConsolidationOutcome {
  deps.log.info('consolidation no longer valid', {
    nodePool: command.nodePool.name,
    reason: command.reason,
    why,
  });
  return { outcome: 'Invalid', why };
}

/**
 * Simulates again from fresh state (upstream re-simulates after its 15 s wait too): the pods must still
 * fit, the same way (delete, or one cheaper replacement). A delete deletes; a replace marks and taints
 * every candidate and launches the replacement, which the orchestration then waits for.
 */
async function executeUnderutilized(
  deps: LifecycleDependencies,
  command: ConsolidationCommand,
  fresh: { nodePool: NodePool; view: SweepView; pods: ClusterPods },
  candidates: Candidate[],
  context: Pick<HandlerContext, 'orchestrations' | 'invocationId'>,
): Promise<ConsolidationOutcome> {
  const input = await underutilizedInput(deps, candidates, {
    nodePool: fresh.nodePool,
    nodes: nodesWithNodeClaims(fresh.view),
    pods: fresh.pods,
    allowed: candidates.length,
    spotToSpot: deps.settings.disruption.spotToSpotConsolidation,
  });
  const outcome = computeConsolidation(input.candidates, input, {
    sameTypeMustBeCheaper: candidates.length > 1,
  });
  if ('none' in outcome) return rejected(deps, command, candidates, outcome.none);
  const decided = outcome.command;
  if (decided.decision !== (command.decision ?? 'delete')) {
    return rejected(deps, command, candidates, `the simulation now says ${decided.decision}`);
  }
  if (decided.decision === 'delete') {
    const executed = await disruptAll(deps, command, candidates, [], context);
    await forgetConsolidationFailures(deps, command.nodePool.name);
    return executed;
  }
  const first = candidates[0] as Candidate;
  const detail = `replaced by one cheaper node (${decided.replacement.instanceTypeNames.join(', ')})`;
  for (const candidate of candidates) {
    const marked = await markForDisruption(deps, candidate.input.nodeClaim, 'Underutilized', detail);
    if (!marked) return invalid(deps, command, `${candidate.name} is gone`);
    if (candidate.input.node) await taintNodeDisrupted(deps, candidate.input.node);
  }
  // A fresh name after each failure in the NodePool, so a retry never meets the failed one being deleted.
  const attempt = parseCommandMemory(
    fresh.nodePool.metadata.annotations?.[CONSOLIDATION_FAILURES_ANNOTATION],
  ).failures;
  const replacement: ReplacementInput = {
    ...replacementInput(deps, first.input.nodeClaim, command.nodePool.name, 'Underutilized', detail, attempt),
    requirements: decided.replacement.requirements,
  };
  await launchReplacement(deps, replacement, context);
  countDecision(deps, command, 'replace', candidates.length);
  deps.log.info('consolidation replacing', {
    nodePool: command.nodePool.name,
    candidates: candidates.map((c) => c.name),
    replacement: replacement.replacementName,
    instanceTypes: decided.replacement.instanceTypeNames,
    savings: decided.savings,
  });
  return {
    outcome: 'Replacing',
    replacement,
    candidates: candidates.map((c) => ({ name: c.name, uid: c.input.nodeClaim.metadata.uid ?? '' })),
    key: commandKey(decided),
  };
}

/**
 * Validation found that the simulation no longer says what it said: remembered, so the sweep does not
 * decide the same command again before its backoff, and said once on each candidate.
 */
async function rejected(
  deps: LifecycleDependencies,
  command: ConsolidationCommand,
  candidates: readonly Candidate[],
  why: string,
): Promise<ConsolidationOutcome> {
  if (command.key !== undefined) {
    const held = await rememberFailedConsolidation(deps, command.nodePool.name, { key: command.key, why });
    for (const candidate of candidates) {
      await publishUnconsolidatable(
        deps,
        candidate.input.nodeClaim,
        candidate.input.node,
        `Consolidation failed validation: ${why}${held ? `; not tried again before ${held.until}` : ''}`,
      );
    }
  }
  return invalid(deps, command, why);
}

async function currentCandidate(
  deps: LifecycleDependencies,
  candidate: { name: string; uid: string },
): Promise<NodeClaim | undefined> {
  const nodeClaim = await deps.objects.nodeClaims.get(candidate.name);
  return nodeClaim && nodeClaim.metadata.uid === candidate.uid ? nodeClaim : undefined;
}

/** The replacement is Initialized: delete every candidate; termination drains them. */
export async function completeConsolidationReplacement(
  deps: LifecycleDependencies,
  input: ConsolidationReplacementInput,
  context: Pick<HandlerContext, 'orchestrations'>,
): Promise<ConsolidationOutcome> {
  const deleted: string[] = [];
  for (const candidate of input.candidates) {
    const nodeClaim = await currentCandidate(deps, candidate);
    if (!nodeClaim || nodeClaim.metadata.deletionTimestamp) continue;
    const nodes = await nodesOfNodeClaim(deps, nodeClaim);
    if (!(await deleteNodeClaim(deps, nodeClaim, context))) continue;
    deleted.push(candidate.name);
    await publishTerminating(deps, nodeClaim, nodes, 'Underutilized');
    deps.metrics.increment('karpenter_nodeclaims_disrupted_total', {
      nodepool: input.replacement.old.nodePool,
      reason: 'underutilized',
      outcome: 'replaced',
    });
  }
  await forgetConsolidationFailures(deps, input.replacement.old.nodePool);
  deps.log.info('consolidation replaced', { replacement: input.replacement.replacementName, deleted });
  return { outcome: 'Replaced', replacement: input.replacement.replacementName, deleted };
}

/** The replacement failed: delete it if it never initialized, and put every candidate back in service. */
export async function abandonConsolidationReplacement(
  deps: LifecycleDependencies,
  input: ConsolidationReplacementInput,
): Promise<void> {
  await deleteUninitializedReplacement(deps, input.replacement.replacementName);
  const why = input.why ?? 'unknown';
  const held =
    input.key !== undefined
      ? await rememberFailedConsolidation(deps, input.replacement.old.nodePool, { key: input.key, why })
      : undefined;
  for (const candidate of input.candidates) {
    const nodeClaim = await currentCandidate(deps, candidate);
    if (!nodeClaim || nodeClaim.metadata.deletionTimestamp) continue;
    if (disruptionReasonOf(nodeClaim) !== 'Underutilized') continue;
    for (const node of await nodesOfNodeClaim(deps, nodeClaim)) await untaintNodeDisrupted(deps, node);
    await updateNodeClaimStatus(deps.objects, nodeClaim, (latest) => ({
      ...latest.status,
      conditions: removeCondition(latest.status?.conditions, ConditionTypes.disruptionReason),
    }));
    await deps.events.warning(
      nodeClaimTarget(nodeClaim),
      'DisruptionReplacementFailed',
      `Replacement ${input.replacement.replacementName} failed: ${why}; node untainted` +
        (held ? `; the same consolidation is not tried again before ${held.until}` : ''),
    );
  }
}

async function disrupt(
  deps: LifecycleDependencies,
  candidate: Candidate,
  reason: ConsolidationCommand['reason'],
  context: Pick<HandlerContext, 'orchestrations'>,
): Promise<boolean> {
  const { nodeClaim, node } = candidate.input;
  const message = reason === 'Empty' ? 'node is empty' : 'node is underutilized';
  const marked = await markForDisruption(deps, nodeClaim, reason, message);
  if (!marked) return false;
  if (node) {
    try {
      await taintNodeDisrupted(deps, node);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
  if (!(await deleteNodeClaim(deps, marked, context))) return false;
  await publishTerminating(deps, marked, node ? [node] : [], reason);
  deps.metrics.increment('karpenter_nodeclaims_disrupted_total', {
    nodepool: nodeClaim.metadata.labels?.[WellKnown.nodePoolLabel] ?? '',
    reason: reason.toLowerCase(),
    outcome: 'deleted',
  });
  return true;
}
