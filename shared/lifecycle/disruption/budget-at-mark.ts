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
//
// Writers in one process that ask at the same time share one Lease and one read per NodePool: each asks to
// mark its candidates, and whoever holds the Lease reads each asking NodePool's budget once and lets
// through, in the order asked, every request that still fits, their marks made together. One Lease and one fresh read per command made a
// 1,000-node drift start about four commands a NodePool per pass (each read lists the pool's NodeClaims
// and Nodes; the writers of one pass queued on the Lease, and most gave up after its retries). Rounds per
// NodePool were not enough either: each took the one Lease, so the pools' rounds refused each other.
// Rounds that follow each other keep the Lease, renewed beside the next round's read (serveMarks says why
// that is safe and what it saved). The fresh read is a consistent one: the process's watch-fed caches once
// they have seen every change up to a consistent list's resourceVersion, or lists when they do not get
// there promptly (ClusterReader.readSelectedFresh). At 1,000 nodes one NodePool's NodeClaims and Nodes
// were 4 MB each, and listing them took most of each round (6.6 s of 8 s, median).
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { allowedDisruptions } from '../../decisions/budgets.js';
import { budgetNodesOf } from '../../decisions/disruption-state.js';
import { driftCountsOf, rolloutRoom, rolloutTargetOf } from '../../decisions/rollout.js';
import { WellKnown, type DisruptionReason } from '../../models/karpenter.js';
import type { FreshSource, SelectedObjects } from '../../kube/cluster-reader.js';
import type { HeldLease } from '../../kube/lease.js';
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

type MarkDependencies = Pick<
  LifecycleDependencies,
  'objects' | 'cluster' | 'now' | 'leases' | 'settings' | 'log'
>;

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
): Promise<MarkOutcome<T>> {
  if (toMark === 0) return { marked: true, value: await mark() };
  return new Promise<MarkOutcome<T>>((resolve, reject) => {
    const request: MarkRequest = {
      nodePoolName,
      reason,
      toMark,
      mark,
      settle: (outcome) => resolve(outcome as MarkOutcome<T>),
      fail: reject,
    };
    const queue = waitingMarks.get(deps);
    // A round is being served for this app: the next round takes this request.
    if (queue) {
      queue.push(request);
      return;
    }
    waitingMarks.set(deps, [request]);
    void serveMarks(deps);
  });
}

type MarkOutcome<T> = { marked: true; value: T } | { marked: false; why: string };

interface MarkRequest {
  nodePoolName: string;
  reason: DisruptionReason;
  toMark: number;
  mark: () => Promise<unknown>;
  settle: (outcome: MarkOutcome<unknown>) => void;
  fail: (error: unknown) => void;
}

/**
 * Requests waiting for the next round, per set of dependencies (per app), whatever their NodePool and
 * reason: every round takes the one Lease, so rounds per NodePool would hold it against each other.
 */
const waitingMarks = new WeakMap<MarkDependencies, MarkRequest[]>();

/**
 * How many requests one round serves: their marks are made together while the Lease is held, which must
 * stay far inside its duration (10 s).
 */
export const MARKS_PER_ROUND = 50;

/** The longest one process holds the Lease for rounds back to back before it gives it back. */
const MARKS_STRETCH_MS = DISRUPTION_MARKS_LEASE.durationSeconds * 1_000;

/**
 * Rounds until no request waits: take the Lease, then the requests queued so far (so those that came
 * while it was being taken are in), read each of their NodePools' budgets once for each reason, and let
 * through in order each request that fits what is left of its budget; the rest learn why not. Failing to
 * take the Lease refuses all that wait, as a single writer would have been refused.
 *
 * While requests keep coming the Lease is kept for the next round (for one Lease duration at most, then
 * given back so another process's writers get their turn), renewed beside that round's read rather than
 * given back and taken again before it: at 1,000 nodes taking it (a read and a write) was 0.7 s of each
 * round (median), and a request waits for the round being served and then its own. A renewal beside the
 * read is safe:
 * any other writer must write the Lease before it marks, so a renewal that succeeds (it is guarded by the
 * Lease's resourceVersion) proves no one else marked since this process's previous write of it.
 */
async function serveMarks(deps: MarkDependencies): Promise<void> {
  const clock = () => performance.now();
  for (;;) {
    const queue = waitingMarks.get(deps) ?? [];
    if (queue.length === 0) {
      waitingMarks.delete(deps);
      return;
    }
    const takeStarted = clock();
    let lease: MarksLease;
    try {
      lease = await takeMarksLease(deps);
    } catch (error) {
      for (const request of queue.splice(0)) request.fail(error);
      continue;
    }
    if (!lease.held) {
      for (const request of queue.splice(0)) request.settle({ marked: false, why: lease.why });
      continue;
    }
    const held = lease.held;
    try {
      let leaseMs = clock() - takeStarted;
      let renew: (() => Promise<boolean>) | undefined;
      while (queue.length > 0 && clock() - takeStarted < MARKS_STRETCH_MS) {
        const kept = await serveRound(deps, queue.splice(0, MARKS_PER_ROUND), renew, leaseMs, queue.length);
        if (!kept) break;
        renew = () => held.renew();
        leaseMs = 0;
      }
    } finally {
      await held.release().catch(() => undefined);
    }
  }
}

/**
 * One round under the Lease: its budget reads (beside the Lease's renewal, when it is kept from the round
 * before), then the marks of the requests admitted. False when the Lease was lost, or a read failed.
 */
async function serveRound(
  deps: MarkDependencies,
  round: MarkRequest[],
  renew: (() => Promise<boolean>) | undefined,
  leaseMs: number,
  waiting: number,
): Promise<boolean> {
  const clock = () => performance.now();
  const started = clock();
  let admitted: MarkRequest[];
  let sources: BudgetRoom['sources'][];
  let renewMs = 0;
  try {
    const renewal = renew?.().finally(() => (renewMs = clock() - started));
    const [stillHeld, fit] = await Promise.all([renewal ?? true, admitWithinBudgets(deps, round)]);
    if (!stillHeld) {
      const why = 'the disruption-marks Lease was taken over while this process held it';
      for (const request of fit.admitted) request.settle({ marked: false, why });
      return false;
    }
    ({ admitted, sources } = fit);
  } catch (error) {
    // A read failed (the API server): this round's requests fail; those unanswered are told why.
    for (const request of round) request.fail(error);
    return false;
  }
  const readMs = clock() - started;
  await Promise.all(
    admitted.map(async (request) => {
      try {
        request.settle({ marked: true, value: await request.mark() });
      } catch (error) {
        request.fail(error);
      }
    }),
  );
  // Where a round's time goes: every request of the next round waits for all of it.
  deps.log.info('disruption marks round', {
    requests: round.length,
    admitted: admitted.length,
    nodePools: new Set(round.map((r) => r.nodePoolName)).size,
    // Budget reads (one per NodePool and reason), and where each took each kind from: the watches caught
    // up, or a list and why (a list of one NodePool's objects took seconds at 1,000 nodes).
    reads: {
      all: sources.length,
      nodeClaims: countSources(sources.map((s) => s.nodeClaims)),
      nodes: countSources(sources.map((s) => s.nodes)),
    },
    waiting,
    partsMs: {
      lease: Math.round(leaseMs || renewMs),
      read: Math.round(readMs),
      marks: Math.round(clock() - started - readMs),
    },
  });
  return true;
}

/**
 * The round's requests that fit, in the order asked, each NodePool's room for each reason read once
 * (the reads side by side); the others are told why not.
 */
async function admitWithinBudgets(
  deps: MarkDependencies,
  round: MarkRequest[],
): Promise<{ admitted: MarkRequest[]; sources: BudgetRoom['sources'][] }> {
  const groups = new Map<string, MarkRequest[]>();
  for (const request of round) {
    const key = `${request.nodePoolName}\u0000${request.reason}`;
    const group = groups.get(key);
    if (group) group.push(request);
    else groups.set(key, [request]);
  }
  const sources: BudgetRoom['sources'][] = [];
  const admittedByGroup = await Promise.all(
    [...groups.values()].map(async (requests) => {
      const [first] = requests as [MarkRequest, ...MarkRequest[]];
      const room = await budgetRoom(deps, first.nodePoolName, first.reason);
      sources.push(room.sources);
      let used = 0;
      const admitted: MarkRequest[] = [];
      for (const request of requests) {
        const why = room.refusal(used, request.toMark);
        if (why) request.settle({ marked: false, why });
        else {
          admitted.push(request);
          used += request.toMark;
        }
      }
      return admitted;
    }),
  );
  const admitted = new Set(admittedByGroup.flat());
  return { admitted: round.filter((request) => admitted.has(request)), sources };
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
  const lease = await takeMarksLease(deps);
  if (!lease.held) return { marked: false, why: lease.why };
  try {
    return await run();
  } finally {
    await lease.held.release().catch(() => undefined);
  }
}

type MarksLease = { held: HeldLease } | { held: undefined; why: string };

/** The disruption-marks Lease, tried a few times; otherwise who holds it. */
async function takeMarksLease(deps: MarkDependencies): Promise<MarksLease> {
  const options = { ...DISRUPTION_MARKS_LEASE, namespace: deps.settings.systemNamespace };
  const identity = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  let holder = '';
  for (let attempt = 1; attempt <= MARKS_LEASE_ATTEMPTS; attempt += 1) {
    const taken = await deps.leases.tryAcquire(options, identity, deps.now);
    if (taken.held) return { held: taken.held };
    holder = taken.holder;
    if (attempt < MARKS_LEASE_ATTEMPTS)
      await new Promise((resolve) => setTimeout(resolve, MARKS_LEASE_RETRY_MS * attempt));
  }
  return {
    held: undefined,
    why: `another writer is marking nodes (the disruption-marks Lease is held by ${holder})`,
  };
}

/** Whether `toMark` more of the NodePool's nodes may be marked for `reason` now, by a fresh read. */
export async function budgetAllowsMarks(
  deps: Pick<LifecycleDependencies, 'objects' | 'cluster' | 'now' | 'settings'>,
  nodePoolName: string,
  reason: DisruptionReason,
  toMark: number,
): Promise<BudgetAtMark> {
  if (toMark === 0) return { allows: true };
  const why = (await budgetRoom(deps, nodePoolName, reason)).refusal(0, toMark);
  return why ? { allows: false, why } : { allows: true };
}

interface BudgetRoom {
  /** Why `toMark` more do not fit once `used` of the room are taken; undefined when they fit. */
  refusal(used: number, toMark: number): string | undefined;
  /** Where the fresh read took each kind from, and why a kind was listed (ClusterReader.readSelectedFresh). */
  sources: SelectedObjects['sources'];
}

/**
 * The room for marks of `reason` in the NodePool now, by a fresh read: `refusal(used, toMark)` says why
 * `toMark` more do not fit once `used` of the room are taken, or undefined when they fit.
 */
async function budgetRoom(
  deps: Pick<LifecycleDependencies, 'objects' | 'cluster' | 'now' | 'settings'>,
  nodePoolName: string,
  reason: DisruptionReason,
): Promise<BudgetRoom> {
  const labelSelector = `${WellKnown.nodePoolLabel}=${nodePoolName}`;
  const readAt = deps.now();
  // Side by side (a Drifted mark's AKSNodeClass as soon as its NodePool is read): every request of the
  // next round waits for this read.
  const nodePoolRead = deps.objects.nodePools.get(nodePoolName);
  const nodeClassRead = nodePoolRead.then((pool) =>
    pool && reason === 'Drifted'
      ? deps.objects.nodeClasses.get(pool.spec.template.spec.nodeClassRef.name)
      : undefined,
  );
  const [nodePool, nodeClass, { nodeClaims, nodes, sources }] = await Promise.all([
    nodePoolRead,
    nodeClassRead,
    deps.cluster.readSelectedFresh(labelSelector),
  ]);
  if (!nodePool) return { refusal: () => `NodePool ${nodePoolName} is gone`, sources };
  const view = new SweepView({ readAt, nodeClaims, nodes, nodePools: [nodePool], nodeClasses: [] });
  const budget = allowedDisruptions(
    nodePool,
    reason,
    budgetNodesOf(nodeClaims, (c) => view.nodesFor(c)),
    readAt,
  );
  const rollout =
    reason === 'Drifted'
      ? rolloutRoom({
          nodePool,
          target: rolloutTargetOf(nodePool, nodeClass),
          counts: driftCountsOf(nodeClaims, (c) => view.nodesFor(c)),
          defaultPolicy: deps.settings.rollout.policy,
        })
      : Number.POSITIVE_INFINITY;
  return {
    sources,
    refusal: (used, toMark) => {
      if (used + toMark > budget.allowed)
        return `the ${reason} budget allows ${Math.max(0, budget.allowed - used)} more now, ${toMark} to mark`;
      if (used + toMark > rollout)
        return `the NodePool's rollout allows ${Math.max(0, rollout - used)} more now, ${toMark} to mark`;
      return undefined;
    },
  };
}

/** How many reads took a kind from each source ('cache', or why it was listed), for the round's log line. */
function countSources(sources: readonly FreshSource[]): Partial<Record<FreshSource, number>> {
  const counts: Partial<Record<FreshSource, number>> = {};
  for (const source of sources) counts[source] = (counts[source] ?? 0) + 1;
  return counts;
}
