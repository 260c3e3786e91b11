// The disruption budget, asked again at the moment of marking, under one Lease. A graceful method decides
// on reads that are seconds old (the sweep's view, a command's validation a step earlier), and more than
// one writer marks a NodePool's nodes: the sweep, the run a freed budget slot starts, and each command's
// workflow when it begins. A decision made before another writer's mark would otherwise mark on top of
// it, over the budget. So every writer takes the disruption-marks Lease, reads the NodePool, its
// NodeClaims and their Nodes fresh, marks, and gives the Lease back: two writers can no longer both count
// the same free slot. A forceful method (expiration) has no budget but marks under the Lease too, since
// its marks count in the graceful budgets. Upstream needs no lock because one disruption loop marks; here the writers run side
// by side. The Lease is held for one list and a few writes; a holder that dies frees it after its
// duration, and a writer that finds it held tries again a few times and otherwise marks nothing now (the
// next pass decides again) (README.md, "The budget is read again at the mark"). A Drifted mark is also
// held to the NodePool's rollout, read fresh the same way (decisions/rollout.ts): two writers deciding
// from the same stale view must not both take the canary's one slot.
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { allowedDisruptions } from '../../decisions/budgets.js';
import { budgetNodesOf } from '../../decisions/disruption-state.js';
import { driftCountsOf, rolloutRoom, rolloutTargetOf } from '../../decisions/rollout.js';
import { WellKnown, type DisruptionReason } from '../../models/karpenter.js';
import { SweepView } from '../cluster/snapshot.js';
import type { LifecycleDependencies } from '../dependencies.js';

export type BudgetAtMark = { allows: true } | { allows: false; why: string };

/** The one Lease every writer of disruption marks holds around its budget read and its marks. */
export const DISRUPTION_MARKS_LEASE = {
  name: 'nodeclaim-azure-disruption-marks',
  durationSeconds: 10,
} as const;

/** How often, and how far apart, a writer that finds the Lease held tries again before it gives up. */
const MARKS_LEASE_ATTEMPTS = 5;
const MARKS_LEASE_RETRY_MS = 100;

type MarkDependencies = Pick<LifecycleDependencies, 'objects' | 'nodes' | 'now' | 'leases' | 'settings'>;

/**
 * Runs `mark` under the disruption-marks Lease if the budget, read fresh once the Lease is held, allows
 * `toMark` more marks for `reason`; otherwise returns why not without calling it.
 */
export async function markWithinBudget<T>(
  deps: MarkDependencies,
  nodePoolName: string,
  reason: DisruptionReason,
  toMark: number,
  mark: () => Promise<T>,
): Promise<{ marked: true; value: T } | { marked: false; why: string }> {
  if (toMark === 0) return { marked: true, value: await mark() };
  return underMarksLease(deps, async () => {
    const budget = await budgetAllowsMarks(deps, nodePoolName, reason, toMark);
    if (!budget.allows) return { marked: false, why: budget.why };
    return { marked: true, value: await mark() };
  });
}

/**
 * Runs a forceful method's `mark` (no budget applies to it) under the same Lease: its marks count in
 * every graceful budget, so one made between a graceful writer's fresh read and that writer's marks
 * would let the graceful one mark past its budget.
 */
export async function markUnderLease<T>(
  deps: MarkDependencies,
  mark: () => Promise<T>,
): Promise<{ marked: true; value: T } | { marked: false; why: string }> {
  return underMarksLease(deps, async () => ({ marked: true, value: await mark() }));
}

async function underMarksLease<T>(
  deps: MarkDependencies,
  run: () => Promise<{ marked: true; value: T } | { marked: false; why: string }>,
): Promise<{ marked: true; value: T } | { marked: false; why: string }> {
  const options = { ...DISRUPTION_MARKS_LEASE, namespace: deps.settings.systemNamespace };
  const identity = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  let holder = '';
  for (let attempt = 1; attempt <= MARKS_LEASE_ATTEMPTS; attempt += 1) {
    const taken = await deps.leases.tryAcquire(options, identity, deps.now);
    if (taken.held) {
      try {
        return await run();
      } finally {
        await taken.held.release().catch(() => undefined);
      }
    }
    holder = taken.holder;
    if (attempt < MARKS_LEASE_ATTEMPTS)
      await new Promise((resolve) => setTimeout(resolve, MARKS_LEASE_RETRY_MS * attempt));
  }
  return {
    marked: false,
    why: `another writer is marking nodes (the disruption-marks Lease is held by ${holder})`,
  };
}

/** Whether `toMark` more of the NodePool's nodes may be marked for `reason` now, by a fresh read. */
export async function budgetAllowsMarks(
  deps: Pick<LifecycleDependencies, 'objects' | 'nodes' | 'now' | 'settings'>,
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
  if (toMark > budget.allowed) {
    return {
      allows: false,
      why: `the ${reason} budget allows ${budget.allowed} more now, ${toMark} to mark`,
    };
  }
  if (reason !== 'Drifted') return { allows: true };
  const nodeClass = await deps.objects.nodeClasses.get(nodePool.spec.template.spec.nodeClassRef.name);
  const room = rolloutRoom({
    nodePool,
    target: rolloutTargetOf(nodePool, nodeClass),
    counts: driftCountsOf(nodeClaims, (c) => view.nodesFor(c)),
    defaultPolicy: deps.settings.rollout.policy,
  });
  if (toMark <= room) return { allows: true };
  return { allows: false, why: `the NodePool's rollout allows ${room} more now, ${toMark} to mark` };
}
