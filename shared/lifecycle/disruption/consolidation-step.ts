// Consolidation in each sweep, per NodePool that consolidates (consolidateAfter not Never; static
// NodePools keep their replica count and are left to static-nodepools): say why blocked nodes are not
// candidates (DisruptionBlocked events), then decide one command and start its orchestration, which
// re-validates it after the validation delay (consolidation.ts). Methods in upstream's order, the first
// that yields a command wins: Empty (any policy; as many empty nodes as the Empty budget allows), then
// Underutilized (policy WhenEmptyOrUnderutilized). A command that failed lately is not decided again
// (command-memory.ts), and each candidate the single-node search could not consolidate says why in one
// Unconsolidatable event (deduplicated as upstream), instead of a command that launch would refuse.
import { allowedDisruptions } from '../../decisions/budgets.js';

import {
  evaluateCandidates,
  selectEmpty,
  type Candidate,
  type CandidateVerdict,
} from '../../decisions/consolidation/candidates.js';
import { consolidateAfterOf } from '../../decisions/consolidation/timing.js';
import {
  commandKey,
  orderCandidates,
  underutilizedSearch,
} from '../../decisions/consolidation/underutilized.js';
import { removeCondition } from '../../decisions/conditions.js';
import { budgetNodesOf, disruptionReasonOf } from '../../decisions/disruption-state.js';
import { ConditionTypes, KarpenterDefaults, type NodeClaim, type NodePool } from '../../models/karpenter.js';
import { isOrchestrationActive } from '../../runtime/definitions.js';
import type { StepReport, SweepContext, SweepStep } from '../sweep/step.js';
import { publishBudgetBlocked, publishNodeBlocked, publishUnconsolidatable } from './blocked-events.js';
import { heldConsolidationCommands } from './command-memory.js';
import { nodeInputsOf, sweepClusterPods, type ClusterPods } from './cluster-pods.js';
import { consolidationInstanceId, type ConsolidationCommand } from './consolidation.js';
import { ConsolidationNames } from '../../runtime/function-names.js';
import { untaintNodeDisrupted } from '../node-taints.js';
import { replacementInstanceId } from './replacement.js';
import { updateNodeClaimStatus } from '../nodeclaim-writes.js';
import { nodeClaimsByPool, nodePoolsInScope } from './scope.js';
import { nodesWithNodeClaims, underutilizedInput } from './underutilized-input.js';

function consolidates(nodePool: NodePool): boolean {
  return nodePool.spec.replicas === undefined && consolidateAfterOf(nodePool).enabled;
}

/**
 * The in-scope NodePools that consolidate, each with its NodeClaims, and the sweep's pods (read only when
 * some NodePool consolidates); undefined when none does.
 */
export async function consolidatingPools(
  context: SweepContext,
): Promise<{ pools: { nodePool: NodePool; claims: NodeClaim[] }[]; pods: ClusterPods } | undefined> {
  const pools = nodePoolsInScope(context).filter(consolidates);
  if (pools.length === 0) return undefined;
  const pods = await sweepClusterPods(context.deps, context.view);
  const byPool = nodeClaimsByPool(context.view.nodeClaims());
  return {
    pools: pools.map((nodePool) => ({ nodePool, claims: byPool.get(nodePool.metadata.name) ?? [] })),
    pods,
  };
}

export const consolidationStep: SweepStep = {
  name: 'consolidation',
  async run(context) {
    const report: StepReport = { step: 'consolidation', examined: 0, acted: 0, failed: 0 };
    const scope = await consolidatingPools(context);
    if (!scope) return report;
    for (const { nodePool, claims } of scope.pools) {
      if (context.stopping()) break;
      report.examined += 1;
      try {
        if (await consolidatePool(context, nodePool, claims, scope.pods)) {
          report.acted += 1;
        }
      } catch (error) {
        report.failed += 1;
        context.log.warn('consolidation failed for one NodePool', {
          nodePool: nodePool.metadata.name,
          error,
        });
      }
    }
    return report;
  },
};

/** True when it started a command. */
async function consolidatePool(
  context: SweepContext,
  nodePool: NodePool,
  claims: NodeClaim[],
  pods: ClusterPods,
): Promise<boolean> {
  const { deps, orchestrations } = context;
  const instanceId = consolidationInstanceId(nodePool.metadata.uid ?? nodePool.metadata.name);
  const existing = await orchestrations.getStatus(instanceId);
  if (isOrchestrationActive(existing)) return false;
  await releaseStaleMarks(context, claims);

  const now = deps.now();
  const nodesFor = (c: NodeClaim) => context.view.nodesFor(c);
  const verdicts = evaluateCandidates(nodeInputsOf(claims, nodesFor, pods), {
    nodePool,
    pdbs: pods.pdbs,
    nominatedNodes: pods.nominatedNodes,
    now,
  });
  await publishBlocked(context, verdicts);

  const budgetNodes = budgetNodesOf(claims, nodesFor);
  const command =
    (await emptinessCommand(context, nodePool, verdicts, budgetNodes)) ??
    (await underutilizedCommandFor(context, nodePool, verdicts, budgetNodes, pods));
  if (!command) return false;
  if (existing) await orchestrations.purge(instanceId);
  await orchestrations.startNew(ConsolidationNames.orchestration, { instanceId, input: command });
  deps.log.info('consolidation decided; validating', {
    nodePool: nodePool.metadata.name,
    reason: command.reason,
    ...(command.decision ? { decision: command.decision, savings: command.savings } : {}),
    candidates: command.candidates.map((c) => c.name),
  });
  return true;
}

function commandOf(
  context: SweepContext,
  nodePool: NodePool,
  reason: ConsolidationCommand['reason'],
  chosen: readonly Candidate[],
): ConsolidationCommand {
  return {
    nodePool: { name: nodePool.metadata.name, uid: nodePool.metadata.uid ?? '' },
    reason,
    candidates: chosen.map((c) => ({ name: c.name, uid: c.input.nodeClaim.metadata.uid ?? '' })),
    decidedAt: context.deps.now().toISOString(),
    validationSeconds: context.deps.settings.disruption.consolidationValidationSeconds,
  };
}

/** Every empty candidate the Empty budget allows; any consolidation policy. */
async function emptinessCommand(
  context: SweepContext,
  nodePool: NodePool,
  verdicts: readonly CandidateVerdict[],
  budgetNodes: ReturnType<typeof budgetNodesOf>,
): Promise<ConsolidationCommand | undefined> {
  if (!verdicts.some((v) => v.kind === 'candidate' && v.empty)) return undefined;
  const budget = allowedDisruptions(nodePool, 'Empty', budgetNodes, context.deps.now());
  const chosen = selectEmpty(verdicts, budget.allowed);
  if (chosen.length === 0) {
    await publishBudgetBlocked(context.deps, nodePool, 'Empty');
    return undefined;
  }
  return commandOf(context, nodePool, 'Empty', chosen);
}

/** Upstream bounds single-node consolidation to 3 minutes; the sweep has less to spare. */
const UNDERUTILIZED_SEARCH_MS = 30_000;

/**
 * Policy WhenEmptyOrUnderutilized or Balanced (which also scores every move): multi-node, then
 * single-node, within the Underutilized budget.
 */
async function underutilizedCommandFor(
  context: SweepContext,
  nodePool: NodePool,
  verdicts: readonly CandidateVerdict[],
  budgetNodes: ReturnType<typeof budgetNodesOf>,
  pods: ClusterPods,
): Promise<ConsolidationCommand | undefined> {
  const policy = nodePool.spec.disruption?.consolidationPolicy ?? KarpenterDefaults.consolidationPolicy;
  if (policy !== 'WhenEmptyOrUnderutilized' && policy !== 'Balanced') return undefined;
  const candidates = verdicts.filter((v): v is Candidate => v.kind === 'candidate');
  if (candidates.length === 0) return undefined;
  const { deps } = context;
  const budget = allowedDisruptions(nodePool, 'Underutilized', budgetNodes, deps.now());
  if (budget.allowed === 0) {
    await publishBudgetBlocked(deps, nodePool, 'Underutilized');
    return undefined;
  }
  const input = await underutilizedInput(deps, candidates, {
    nodePool,
    nodes: nodesWithNodeClaims(context.view),
    pods,
    allowed: budget.allowed,
    spotToSpot: deps.settings.disruption.spotToSpotConsolidation,
    deadline: Date.now() + UNDERUTILIZED_SEARCH_MS,
  });
  const search = underutilizedSearch({
    ...input,
    candidates: orderCandidates(input.candidates),
    heldCommands: heldConsolidationCommands(nodePool, deps.now()),
  });
  for (const move of search.scored) {
    const labels = {
      decision: move.approved ? 'approved' : 'rejected',
      nodepool: nodePool.metadata.name,
      policy: 'Balanced',
    };
    deps.metrics.observe(
      'karpenter_consolidation_score',
      Number.isFinite(move.score) ? move.score : 1e9,
      labels,
    );
    deps.metrics.increment('karpenter_consolidation_moves_total', labels);
  }
  const byName = new Map(candidates.map((c) => [c.name, c]));
  for (const { name, why } of search.unconsolidatable) {
    const candidate = byName.get(name);
    if (candidate) await publishUnconsolidatable(deps, candidate.input.nodeClaim, candidate.input.node, why);
  }
  const decided = search.command;
  if (!decided) return undefined;
  return {
    ...commandOf(
      context,
      nodePool,
      'Underutilized',
      decided.candidates.flatMap((c) => byName.get(c.name) ?? []),
    ),
    decision: decided.decision,
    savings: decided.savings,
    key: commandKey(decided),
  };
}

/**
 * A NodeClaim marked for consolidation but not deleted, with no command or replacement still working on
 * it (the process stopped between the mark and the delete, or a replacement ended without cleaning up):
 * untainted and unmarked, so it serves again and counts against no budget. The next decision starts over.
 */
async function releaseStaleMarks(context: SweepContext, claims: readonly NodeClaim[]): Promise<void> {
  const { deps, orchestrations } = context;
  for (const nodeClaim of claims) {
    const reason = disruptionReasonOf(nodeClaim);
    if ((reason !== 'Empty' && reason !== 'Underutilized') || nodeClaim.metadata.deletionTimestamp) continue;
    const replacement = await orchestrations.getStatus(replacementInstanceId(nodeClaim.metadata.uid ?? ''));
    if (isOrchestrationActive(replacement)) continue;
    // The sweep's view may lag: only a fresh read can show that the command deleted it meanwhile, and
    // untainting a node that is being drained would invite pods back onto it.
    const current = await deps.objects.nodeClaims.get(nodeClaim.metadata.name);
    if (!current || current.metadata.uid !== nodeClaim.metadata.uid || current.metadata.deletionTimestamp)
      continue;
    if (disruptionReasonOf(current) !== reason) continue;
    for (const node of context.view.nodesFor(current)) await untaintNodeDisrupted(deps, node);
    const released = await updateNodeClaimStatus(deps.objects, current, (latest) => ({
      ...latest.status,
      conditions: latest.metadata.deletionTimestamp
        ? latest.status?.conditions
        : removeCondition(latest.status?.conditions, ConditionTypes.disruptionReason),
    }));
    if (released) context.view.updateNodeClaim(released);
    deps.log.info('stale consolidation mark released', { nodeClaim: nodeClaim.metadata.name, reason });
  }
}

async function publishBlocked(context: SweepContext, verdicts: readonly CandidateVerdict[]): Promise<void> {
  for (const verdict of verdicts) {
    if (verdict.kind !== 'blocked') continue;
    await publishNodeBlocked(context.deps, verdict.input.nodeClaim, verdict.input.node, verdict.message);
  }
}
