// Budgets never exceeded, per reason: each time a NodeClaim is marked for disruption (DisruptionReason)
// the NodePool's budgets for that reason, as they were written and as their schedules stood then, must
// have allowed one more. Replays every recorded NodeClaim and Node version. Pure.
//
// Disrupting, as the budget counts it: deleting, marked, or its Node tainted karpenter.sh/disrupted.
// Upstream also counts NotReady Nodes; the checker does not, because the recorder may see a Node go
// NotReady a moment before the sweep does, and that would blame the sweep for what it could not see.
// For the same reason a mark is judged against the budgets at its time and `slackMs` earlier.
//
// Marks from `judgeUntil` on are counted but not judged: at the end it is the end time every invariant
// is handed (CheckOptions.at), the teardown's start, after which the harness, as a user would, sets every
// budget to 0 and deletes every NodeClaim. A mark the app decided on a fresh read just before that lands
// among the user's deletions; at 1,000 nodes a round of marks written one after another took longer than
// the slack, and three of them were judged as breaches of a budget the user had just spent. While the
// day plays it is the time of the check, and a mark seen after it is judged at the next one.
//
// Node repair's marks (Unhealthy) are budgeted like the others: the repair method counts the same
// disrupting nodes and not the merely NotReady ones. A spot eviction notice's mark is not (the VM goes
// away whatever is decided, so the app replaces it at once, as upstream does): its DisruptionReason
// message names the repair policy, whose action is `preempted`. Expiry is forceful and never marked.
import { allowedDisruptions, type BudgetNode } from '../../../../shared/decisions/budgets.js';
import { findCondition, isConditionTrue } from '../../../../shared/decisions/conditions.js';
import { disruptionReasonOf } from '../../../../shared/decisions/disruption-state.js';
import { parseRepairPolicies } from '../../../../shared/decisions/node-repair/policies.js';
import {
  ConditionTypes,
  WellKnown,
  type Budget,
  type DisruptionReason,
  type NodeClaim,
  type NodePool,
} from '../../../../shared/models/index.js';
import { merged, poolOf, result, secondsAfter, type DayHistory, type InvariantResult } from './history.js';

interface ClaimState {
  pool: string;
  initialized: boolean;
  marked: string | undefined;
  deleting: boolean;
  nodeName: string | undefined;
}

export function checkBudgets(
  history: DayHistory,
  slackMs: number,
  origin: number,
  judgeUntil: number = Number.POSITIVE_INFINITY,
): InvariantResult {
  const claims = new Map<string, ClaimState>();
  const tainted = new Set<string>();
  const violations: string[] = [];
  const highest = new Map<string, { count: number; limit: number }>();
  let marks = 0;
  let unjudged = 0;

  const budgetsAt = (pool: string, at: number): Budget[] | undefined => {
    let found: Budget[] | undefined;
    for (const entry of history.poolBudgets) if (entry.pool === pool && entry.at <= at) found = entry.budgets;
    return found;
  };
  const budgetNodes = (pool: string, except: string): BudgetNode[] =>
    [...claims.entries()]
      .filter(([, state]) => state.pool === pool)
      .map(([name, state]) => ({
        name,
        initialized: state.initialized,
        managed: true,
        disrupting:
          name !== except &&
          (state.deleting ||
            state.marked !== undefined ||
            (state.nodeName !== undefined && tainted.has(state.nodeName))),
      }));
  /** Which initialized NodeClaims of the pool count as disrupting now, and why: the evidence beside a breach. */
  const disruptingNow = (pool: string, except: string): string[] =>
    [...claims.entries()]
      .filter(([name, state]) => state.pool === pool && state.initialized && name !== except)
      .flatMap(([name, state]) => {
        const why = [
          ...(state.deleting ? ['deleting'] : []),
          ...(state.marked !== undefined ? [`marked ${state.marked}`] : []),
          ...(state.nodeName !== undefined && tainted.has(state.nodeName) ? ['tainted'] : []),
        ];
        return why.length > 0 ? [`${name} ${why.join(' and ')}`] : [];
      });
  const allowedAt = (pool: string, reason: DisruptionReason, except: string, at: number) => {
    const budgets = budgetsAt(pool, at);
    const nodePool = { spec: { disruption: budgets ? { budgets } : {} } } as unknown as NodePool;
    return allowedDisruptions(nodePool, reason, budgetNodes(pool, except), new Date(at));
  };

  for (const event of merged(history.nodeClaims, history.nodes)) {
    if ('node' in event) {
      const { object, type } = event.node;
      const isTainted =
        type !== 'DELETED' && (object.spec.taints ?? []).some((t) => t.key === WellKnown.disruptedTaintKey);
      if (isTainted) tainted.add(object.metadata.name);
      else tainted.delete(object.metadata.name);
      continue;
    }
    const { object, type, at } = event.claim;
    const name = object.metadata.name;
    if (type === 'DELETED') {
      claims.delete(name);
      continue;
    }
    const before = claims.get(name);
    const reason = disruptionReasonOf(object);
    const state = stateOf(object, reason);
    if (
      reason !== undefined &&
      before?.marked === undefined &&
      isBudgetedReason(reason) &&
      !isPreemption(object)
    ) {
      claims.set(name, state);
      if (at >= judgeUntil) {
        unjudged += 1;
        continue;
      }
      marks += 1;
      const now = allowedAt(state.pool, reason, name, at);
      const earlier = allowedAt(state.pool, reason, name, at - slackMs);
      const key = `${state.pool} ${reason}`;
      const count = now.disrupting + 1;
      const limit = Math.max(now.allowed, earlier.allowed) + now.disrupting;
      const seen = highest.get(key);
      if (!seen || count > seen.count) highest.set(key, { count, limit });
      if (now.allowed < 1 && earlier.allowed < 1) {
        violations.push(
          `${secondsAfter(at, origin)}: ${name} marked ${reason} while ${now.disrupting} of ${now.total} ` +
            `${state.pool} nodes were disrupting and the budget allowed ${now.disrupting + now.allowed}` +
            ` (disrupting: ${disruptingNow(state.pool, name).join(', ') || 'none initialized'})`,
        );
      }
      continue;
    }
    claims.set(name, state);
  }
  const figures = [...highest.entries()].map(
    ([key, { count, limit }]) => `${key}: at most ${count} (budget allowed ${limit})`,
  );
  return result(
    'disruption budgets never exceeded, per reason',
    violations,
    `${marks} marks checked` +
      (unjudged > 0 ? ` (${unjudged} during the teardown not judged)` : '') +
      `; ${figures.length > 0 ? figures.join('; ') : 'no node was marked'}`,
  );
}

function isBudgetedReason(reason: string): reason is DisruptionReason {
  return reason === 'Drifted' || reason === 'Empty' || reason === 'Underutilized' || reason === 'Unhealthy';
}

/** An Unhealthy mark for a spot eviction notice: the message names a repair policy whose action is `preempted`. */
export function isPreemption(claim: NodeClaim): boolean {
  const message = findCondition(claim.status?.conditions, ConditionTypes.disruptionReason)?.message ?? '';
  const policy = /\(repair policy ([^\s)]+)\)/.exec(message)?.[1];
  if (policy === undefined) return false;
  const parsed = parseRepairPolicies(policy);
  return 'policies' in parsed && parsed.policies.some((p) => p.action === 'preempted');
}

function stateOf(claim: NodeClaim, reason: string | undefined): ClaimState {
  return {
    pool: poolOf(claim),
    initialized: isConditionTrue(claim.status?.conditions, ConditionTypes.initialized),
    marked: reason,
    deleting: Boolean(claim.metadata.deletionTimestamp),
    nodeName: claim.status?.nodeName,
  };
}
