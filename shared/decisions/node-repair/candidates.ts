// Which unhealthy nodes of one NodePool start repair now: those past their policy's toleration, not
// already being disrupted, while the 20% breaker holds open, up to what the budget for the Unhealthy
// reason allows, longest-unhealthy first (their toleration ended earliest). A spot eviction notice is
// not paced by budget or breaker: the VM goes away whatever this decides, and only a replacement started
// at once gives its pods somewhere to go.
import type { Node } from '../../models/kube.js';
import type { BudgetNode } from '../budgets.js';
import { breakerVerdict, type BreakerVerdict } from './breaker.js';
import { unhealthyMatch, type RepairPolicy, type UnhealthyMatch } from './policies.js';

export interface RepairCandidateInput {
  name: string;
  node: Node | undefined;
  /** Initialized=True: only these count toward the budget's percentages, as upstream. */
  initialized: boolean;
  /** Deleting, marked DisruptionReason=True (repair or another method), or tainted disrupted. */
  disrupting: boolean;
}

export interface RepairSelection {
  start: { name: string; match: UnhealthyMatch }[];
  /** Past their toleration but held by the breaker: each gets the NodeRepairBlocked event. */
  blocked: { name: string; match: UnhealthyMatch }[];
  breaker: BreakerVerdict;
  /** Disrupting nodes for the budget: NotReady alone does not count, it is what repair is for. */
  budgetNodes: BudgetNode[];
}

export function selectRepairs(input: {
  nodeClaims: readonly RepairCandidateInput[];
  /** The Nodes the breaker counts: the NodePool's, or the cluster's for NodeClaims without a NodePool. */
  breakerNodes: readonly Node[];
  policies: readonly RepairPolicy[];
  /** How many more may start disrupting for the Unhealthy reason (budgets.ts on budgetNodes). */
  allowed: (budgetNodes: BudgetNode[]) => number;
  now: Date;
}): RepairSelection {
  const { policies, now } = input;
  const breaker = breakerVerdict(input.breakerNodes, policies);
  const budgetNodes: BudgetNode[] = input.nodeClaims.map((c) => ({
    name: c.name,
    initialized: c.initialized,
    managed: true,
    disrupting: c.disrupting,
  }));
  const due = input.nodeClaims
    .filter((c) => !c.disrupting && c.node && !c.node.metadata.deletionTimestamp)
    .flatMap((c) => {
      const match = c.node ? unhealthyMatch(c.node, policies, now) : undefined;
      return match && match.repairableAt <= now ? [{ name: c.name, match }] : [];
    })
    .sort(
      (a, b) =>
        a.match.repairableAt.getTime() - b.match.repairableAt.getTime() || a.name.localeCompare(b.name),
    );

  const preempted = due.filter((d) => d.match.policy.action === 'preempted');
  const paced = due.filter((d) => d.match.policy.action !== 'preempted');
  if (!breaker.healthy) return { start: preempted, blocked: paced, breaker, budgetNodes };
  const allowed = Math.max(0, input.allowed(budgetNodes));
  return { start: [...preempted, ...paced.slice(0, allowed)], blocked: [], breaker, budgetNodes };
}
