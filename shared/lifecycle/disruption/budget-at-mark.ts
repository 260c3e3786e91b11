// The disruption budget, asked again at the moment of marking. A graceful method decides on reads that
// are seconds old (the sweep's view, a command's validation a step earlier), and more than one writer
// marks a NodePool's nodes: the sweep, the run a freed budget slot starts, and each command's workflow
// when it begins. A decision made before another writer's mark would otherwise mark on top of it, over
// the budget. Reading the NodePool, its NodeClaims and their Nodes fresh just before the mark narrows
// that window from seconds to one list and one write. It is not a lock: two writers that list within
// the same few milliseconds can still both pass (README.md, "The budget is read again at the mark").
import { allowedDisruptions } from '../../decisions/budgets.js';
import { budgetNodesOf } from '../../decisions/disruption-state.js';
import { WellKnown, type DisruptionReason } from '../../models/karpenter.js';
import { SweepView } from '../cluster/snapshot.js';
import type { LifecycleDependencies } from '../dependencies.js';

export type BudgetAtMark = { allows: true } | { allows: false; why: string };

/** Whether `toMark` more of the NodePool's nodes may be marked for `reason` now, by a fresh read. */
export async function budgetAllowsMarks(
  deps: Pick<LifecycleDependencies, 'objects' | 'nodes' | 'now'>,
  nodePoolName: string,
  reason: DisruptionReason,
  toMark: number,
): Promise<BudgetAtMark> {
  if (toMark === 0) return { allows: true };
  const nodePool = await deps.objects.nodePools.get(nodePoolName);
  if (!nodePool) return { allows: false, why: `NodePool ${nodePoolName} is gone` };
  const labelSelector = `${WellKnown.nodePoolLabel}=${nodePoolName}`;
  const readAt = deps.now();
  const [nodeClaims, nodes] = await Promise.all([
    deps.objects.nodeClaims.list({ labelSelector }),
    deps.nodes.listLabelled(labelSelector),
  ]);
  const view = new SweepView({ readAt, nodeClaims, nodes, nodePools: [nodePool], nodeClasses: [] });
  const budget = allowedDisruptions(
    nodePool,
    reason,
    budgetNodesOf(nodeClaims, (c) => view.nodesFor(c)),
    readAt,
  );
  if (toMark <= budget.allowed) return { allows: true };
  return {
    allows: false,
    why: `the ${reason} budget allows ${budget.allowed} more now, ${toMark} to mark`,
  };
}
