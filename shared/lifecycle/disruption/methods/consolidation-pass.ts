// What the consolidation methods (emptiness, multi- and single-node) share within one NodePool's pass:
// the NodePools they act on, the candidates (evaluated once, DisruptionBlocked said once), and the
// Underutilized simulation's input (prices, offerings, pods; built once for both searches).
import {
  evaluateCandidates,
  type Candidate,
  type CandidateVerdict,
} from '../../../decisions/consolidation/candidates.js';
import {
  CONSOLIDATION_FAILURES_ANNOTATION,
  parseCommandMemory,
} from '../../../decisions/consolidation/command-memory.js';
import { consolidateAfterOf } from '../../../decisions/consolidation/timing.js';
import {
  commandKey,
  orderCandidates,
  type UnderutilizedCommand,
  type UnderutilizedInput,
} from '../../../decisions/consolidation/underutilized.js';
import type { MoveScore } from '../../../decisions/consolidation/balanced.js';
import {
  budgetBlockedMessage,
  consolidateAfterMessage,
  unconsolidatableCause,
} from '../../../decisions/explain/disruption-record.js';
import { KarpenterDefaults, type DisruptionReason, type NodePool } from '../../../models/karpenter.js';
import { publishNodeBlocked, publishUnconsolidatable } from '../blocked-events.js';
import { nodeInputsOf, sweepClusterPods, type ClusterPods } from '../cluster-pods.js';
import { heldConsolidationCommands } from '../command-memory.js';
import { nodesWithNodeClaims, underutilizedInput } from '../underutilized-input.js';
import { candidateOf, commandFor } from './command.js';
import type { DisruptionCommand, DisruptionMethod, MethodPass } from './method.js';

/** Static NodePools keep their replica count; consolidateAfter Never turns consolidation off. */
export function consolidates(nodePool: NodePool): boolean {
  return nodePool.spec.replicas === undefined && consolidateAfterOf(nodePool).enabled;
}

export function consolidatesUnderutilized(nodePool: NodePool): boolean {
  const policy = nodePool.spec.disruption?.consolidationPolicy ?? KarpenterDefaults.consolidationPolicy;
  return consolidates(nodePool) && (policy === 'WhenEmptyOrUnderutilized' || policy === 'Balanced');
}

/** One consolidation workflow per NodePool at a time, for every consolidation method (upstream's singleton). */
export const CONSOLIDATION_WORKFLOW = { per: 'nodePool', instancePrefix: 'consolidate' } as const;

export interface ConsolidationCandidates {
  pods: ClusterPods;
  verdicts: CandidateVerdict[];
}

/** The pass's candidates; the first method that asks also says why blocked nodes are not candidates. */
export function consolidationCandidates(pass: MethodPass): Promise<ConsolidationCandidates> {
  return pass.shared('consolidation-candidates', async () => {
    const { deps, view } = pass.sweep;
    const pods = await sweepClusterPods(deps, view);
    const verdicts = evaluateCandidates(nodeInputsOf(pass.nodeClaims, pass.nodesFor, pods), {
      nodePool: pass.nodePool,
      pdbs: pods.pdbs,
      nominatedNodes: pods.nominatedNodes,
      now: pass.now,
    });
    for (const verdict of verdicts) {
      noteVerdict(pass, verdict);
      if (verdict.kind !== 'blocked') continue;
      await publishNodeBlocked(deps, verdict.input.nodeClaim, verdict.input.node, verdict.message);
    }
    return { pods, verdicts };
  });
}

/** Why a node that is not a candidate is kept, in the record of the method that evaluated it first. */
function noteVerdict(pass: MethodPass, verdict: CandidateVerdict): void {
  const { recorder } = pass;
  if (!recorder || verdict.kind === 'candidate') return;
  if (verdict.kind === 'blocked') {
    const node = verdict.input.node?.metadata.name;
    recorder.keep(verdict.name, node, verdict.cause, verdict.message);
  } else if (verdict.kind === 'waiting') {
    recorder.keep(verdict.name, undefined, 'ConsolidateAfter', consolidateAfterMessage(verdict.until));
  } else recorder.keep(verdict.name, undefined, 'NotReady', verdict.why);
}

/** `namespace/name` of a candidate's pods that a command moves. */
export const podsMovedBy = (candidates: readonly Candidate[]): string[] =>
  candidates.flatMap((c) => c.reschedulable.map((p) => `${p.namespace}/${p.name}`));

/** Every candidate of the pass kept because the budget for `reason` allows no more now. */
export function noteBudget(
  pass: MethodPass,
  candidates: Iterable<Candidate>,
  reason: DisruptionReason,
): void {
  const { recorder } = pass;
  if (!recorder) return;
  for (const c of candidates) {
    recorder.keep(c.name, c.input.node?.metadata.name, 'Budget', budgetBlockedMessage(reason));
  }
}

/** Upstream bounds single-node consolidation to 3 minutes; the sweep has less to spare. */
const UNDERUTILIZED_SEARCH_MS = 30_000;

export interface UnderutilizedPass {
  input: UnderutilizedInput;
  byName: Map<string, Candidate>;
}

/** The simulation's input for both Underutilized searches; undefined when there is no candidate. */
export function underutilizedPass(pass: MethodPass): Promise<UnderutilizedPass | undefined> {
  return pass.shared('underutilized-input', async () => {
    const { pods, verdicts } = await consolidationCandidates(pass);
    const candidates = verdicts.filter((v): v is Candidate => v.kind === 'candidate');
    if (candidates.length === 0) return undefined;
    const { deps } = pass.sweep;
    const input = await underutilizedInput(deps, candidates, {
      nodePool: pass.nodePool,
      nodes: nodesWithNodeClaims(pass.sweep.view),
      pods,
      allowed: pass.allowed,
      spotToSpot: deps.settings.disruption.spotToSpotConsolidation,
      deadline: Date.now() + UNDERUTILIZED_SEARCH_MS,
    });
    return {
      input: {
        ...input,
        candidates: orderCandidates(input.candidates),
        heldCommands: heldConsolidationCommands(pass.nodePool, pass.now),
      },
      byName: new Map(candidates.map((c) => [c.name, c])),
    };
  });
}

/** Policy Balanced: every simulated move in karpenter_consolidation_score and …_moves_total. */
export function countScoredMoves(pass: MethodPass, scored: readonly MoveScore[]): void {
  for (const move of scored) {
    const labels = {
      decision: move.approved ? 'approved' : 'rejected',
      nodepool: pass.nodePool.metadata.name,
      policy: 'Balanced',
    };
    const { metrics } = pass.sweep.deps;
    metrics.observe('karpenter_consolidation_score', Number.isFinite(move.score) ? move.score : 1e9, labels);
    metrics.increment('karpenter_consolidation_moves_total', labels);
  }
}

/** Each candidate the search could not consolidate says why, once (Unconsolidatable, deduplicated). */
export async function publishUnconsolidated(
  pass: MethodPass,
  underutilized: UnderutilizedPass,
  unconsolidatable: readonly { name: string; why: string }[],
): Promise<void> {
  for (const { name, why } of unconsolidatable) {
    const candidate = underutilized.byName.get(name);
    if (!candidate) continue;
    pass.recorder?.keep(name, candidate.input.node?.metadata.name, unconsolidatableCause(why), why);
    await publishUnconsolidatable(pass.sweep.deps, candidate.input.nodeClaim, candidate.input.node, why);
  }
}

/** The command for an Underutilized decision: delete the candidates, or replace them with one cheaper node. */
export function underutilizedCommand(
  method: DisruptionMethod,
  pass: MethodPass,
  underutilized: UnderutilizedPass,
  decided: UnderutilizedCommand,
): DisruptionCommand {
  const chosen = decided.candidates.flatMap((c) => underutilized.byName.get(c.name) ?? []);
  const command = commandFor(method, pass, {
    candidates: chosen.map((c) => candidateOf(c.input.nodeClaim)),
    replacements: decided.decision === 'replace' ? [{ requirements: decided.replacement.requirements }] : [],
    detail:
      decided.decision === 'replace'
        ? `replaced by one cheaper node (${decided.replacement.instanceTypeNames.join(', ')})`
        : 'node is underutilized',
    // A fresh replacement name after each failure in the NodePool, so a retry never meets the failed one.
    attempt: parseCommandMemory(pass.nodePool.metadata.annotations?.[CONSOLIDATION_FAILURES_ANNOTATION])
      .failures,
    key: commandKey(decided),
    savings: decided.savings,
    validateAfterSeconds: pass.sweep.deps.settings.disruption.consolidationValidationSeconds,
  });
  pass.recorder?.command(command, {
    candidatePrices: decided.candidates.map((c) => c.price),
    podsMoved: decided.candidates.flatMap((c) =>
      c.pods.map((p) => `${p.metadata.namespace}/${p.metadata.name}`),
    ),
    ...(decided.decision === 'replace'
      ? {
          replacementTypes: decided.replacement.instanceTypeNames,
          replacementPrice: decided.replacement.cheapestPrice ?? decided.replacement.worstPrice,
        }
      : {}),
  });
  return command;
}
