// Budget-limited fan-out of drift replacements. Per NodePool, each sweep:
// 1. reports invalid budgets on the NodePool (budget-status.ts);
// 2. looks after replacements already in flight (marked DisruptionReason=True): a missing orchestration is
//    started again, one that ended without cleaning up is abandoned here, finished ones are purged;
// 3. computes how many more nodes may start disrupting (budgets.ts, which subtracts every node already
//    disrupting: deleting, NotReady, tainted, or marked) and starts that many replacement orchestrations in
//    this same sweep, oldest drift first (disruption-candidates.ts).
// The mark is written before the orchestration starts, so the budget counts the node from that moment
// until its NodeClaim is gone, whatever the orchestration's progress.
import { allowedDisruptions } from '../../decisions/budgets.js';
import { findCondition } from '../../decisions/conditions.js';
import {
  replacementCandidateFromNodeClaim,
  selectReplacementCandidates,
} from '../../decisions/disruption-candidates.js';
import {
  budgetNodesOf,
  disruptionReasonOf,
  isDisrupting,
  replacementBackoffOf,
} from '../../decisions/disruption-state.js';
import { ConditionTypes, type NodeClaim, type NodePool } from '../../models/karpenter.js';
import { isOrchestrationActive } from '../../runtime/definitions.js';
import { forEachObject, type StepReport, type SweepContext, type SweepStep } from '../sweep/step.js';
import { reportBudgetValidity } from './budget-status.js';
import {
  abandonReplacement,
  markForDisruption,
  replacementInput,
  replacementInstanceId,
} from './replacement.js';
import { ReplacementNames } from '../../runtime/function-names.js';
import { nodeClaimsByPool, nodePoolsInScope } from './scope.js';

export const fanOutStep: SweepStep = {
  name: 'drift-replacement',
  async run(context) {
    const report: StepReport = { step: 'drift-replacement', examined: 0, acted: 0, failed: 0 };
    const byPool = nodeClaimsByPool(context.view.nodeClaims());
    for (const nodePool of nodePoolsInScope(context)) {
      if (context.stopping()) break;
      report.examined += 1;
      try {
        report.acted += await fanOutPool(context, nodePool, byPool.get(nodePool.metadata.name) ?? []);
      } catch (error) {
        report.failed += 1;
        context.log.warn('drift replacement failed for one NodePool', {
          nodePool: nodePool.metadata.name,
          error,
        });
      }
    }
    return report;
  },
};

function driftDetail(nodeClaim: NodeClaim): string {
  const drifted = findCondition(nodeClaim.status?.conditions, ConditionTypes.drifted);
  return drifted ? `${drifted.reason}: ${drifted.message}` : 'Drifted';
}

/** Returns how many replacements it started. */
async function fanOutPool(context: SweepContext, nodePool: NodePool, claims: NodeClaim[]): Promise<number> {
  const { deps } = context;
  await reportBudgetValidity(deps, nodePool);
  const poolName = nodePool.metadata.name;

  await forEachObject(
    context,
    'drift-replacement',
    // Consolidation tends its own marks (consolidation-step.ts): restarting a drift replacement for a node
    // marked Empty would launch capacity nobody asked for.
    claims.filter((c) => disruptionReasonOf(c) === 'Drifted' || c.metadata.deletionTimestamp),
    (c) => c.metadata.name,
    async (nodeClaim) => {
      await tendInFlight(context, poolName, nodeClaim);
      return false;
    },
  );

  const now = deps.now();
  const nodesFor = (c: NodeClaim) => context.view.nodesFor(c);
  const budget = allowedDisruptions(nodePool, 'Drifted', budgetNodesOf(claims, nodesFor), now);
  const candidates = selectReplacementCandidates({
    nodePool,
    nodeClaims: claims.map((c) => {
      const backoff = replacementBackoffOf(c);
      const node = nodesFor(c)[0];
      return replacementCandidateFromNodeClaim(c, {
        ...(node ? { node } : {}),
        disrupting: isDisrupting(c, nodesFor(c)),
        ...(backoff.backoffUntil ? { backoffUntil: backoff.backoffUntil } : {}),
      });
    }),
    allowed: budget.allowed,
    now,
  });
  if (candidates.length === 0) return 0;

  const byName = new Map(claims.map((c) => [c.metadata.name, c]));
  // A few at a time (10% of a large pool can be hundreds), each failure logged and retried next sweep.
  const started = await forEachObject(
    context,
    'drift-replacement',
    candidates.flatMap((name) => byName.get(name) ?? []),
    (c) => c.metadata.name,
    (nodeClaim) => startReplacement(context, poolName, nodeClaim),
  );
  const count = started.acted;
  context.log.info('drift replacements started', {
    nodePool: poolName,
    started: count,
    allowed: budget.allowed,
    disrupting: budget.disrupting,
    total: budget.total,
  });
  return count;
}

async function startReplacement(
  context: SweepContext,
  poolName: string,
  nodeClaim: NodeClaim,
): Promise<boolean> {
  const { deps, orchestrations } = context;
  const uid = nodeClaim.metadata.uid ?? '';
  const instanceId = replacementInstanceId(uid);
  const existing = await orchestrations.getStatus(instanceId);
  // An earlier attempt is still winding down (it has unmarked the node but not returned yet).
  if (isOrchestrationActive(existing)) return false;
  if (existing) await orchestrations.purge(instanceId);

  const detail = driftDetail(nodeClaim);
  const marked = await markForDisruption(deps, nodeClaim, 'Drifted', detail);
  if (!marked) {
    context.view.removeNodeClaim(nodeClaim);
    return false;
  }
  context.view.updateNodeClaim(marked);
  const attempt = replacementBackoffOf(marked).attempts;
  await orchestrations.startNew(ReplacementNames.orchestration, {
    instanceId,
    input: replacementInput(deps, marked, poolName, 'Drifted', detail, attempt),
  });
  return true;
}

/**
 * A marked or deleting NodeClaim: make sure a marked one has its orchestration, abandon one whose
 * orchestration ended without unmarking it (it failed), and purge finished instances of deleting ones.
 */
async function tendInFlight(context: SweepContext, poolName: string, nodeClaim: NodeClaim): Promise<void> {
  const { deps, orchestrations } = context;
  const uid = nodeClaim.metadata.uid ?? '';
  const instanceId = replacementInstanceId(uid);
  const status = await orchestrations.getStatus(instanceId);
  if (isOrchestrationActive(status)) return;
  if (nodeClaim.metadata.deletionTimestamp) {
    if (status) await orchestrations.purge(instanceId);
    return;
  }
  const input = replacementInput(
    deps,
    nodeClaim,
    poolName,
    'Drifted',
    driftDetail(nodeClaim),
    replacementBackoffOf(nodeClaim).attempts,
  );
  if (!status) {
    // Marked, but the orchestration never started (the process stopped between the two writes).
    await orchestrations.startNew(ReplacementNames.orchestration, { instanceId, input });
    deps.log.info('replacement orchestration restarted', { nodeClaim: nodeClaim.metadata.name });
    return;
  }
  await abandonReplacement(deps, {
    replacement: input,
    why: `the replacement orchestration ended ${status.runtimeStatus}`,
  });
  await orchestrations.purge(instanceId);
}
