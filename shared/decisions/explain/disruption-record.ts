// One disruption pass of one NodePool as a DisruptionRecord (decision-record.ts), from what its methods
// reported while they decided: each candidate's decision and cause, each command started with its $/h
// before and after and the pods it moves. Pure, so the record a user reads is the one tested; the
// lifecycle only collects the notes and hands them here. Also the per-cause count of the nodes a pass
// kept, which the NodePool's status and the blocked-candidates gauge publish, and the classification of
// the simulation's answers into causes (the reasons are produced as text by the consolidation search).
import {
  MAX_RECORD_SUBJECTS,
  type CandidateCause,
  type CandidateDecision,
  type CommandDecision,
  type DisruptionRecord,
} from './decision-record.js';

export interface DisruptionPassNotes {
  nodePool: string;
  at: Date;
  /** In the order they were reported; a later note for the same NodeClaim and method replaces an earlier one. */
  candidates: readonly CandidateDecision[];
  commands: readonly CommandDecision[];
}

/** Chosen first, then what keeps a node, then the methods that did not apply: what a bounded record keeps. */
const rank = (c: CandidateDecision): number =>
  c.decision === 'disrupt' ? 0 : c.cause === 'NotApplicable' ? 2 : 1;

/** The latest note per NodeClaim and method, in the order each was first reported. */
export function latestDecisions(candidates: readonly CandidateDecision[]): CandidateDecision[] {
  const byKey = new Map<string, CandidateDecision>();
  for (const c of candidates) byKey.set(`${c.nodeClaim}\u0000${c.method}`, c);
  return [...byKey.values()];
}

export function disruptionRecordOf(notes: DisruptionPassNotes): DisruptionRecord {
  const at = notes.at.toISOString();
  let candidates = latestDecisions(notes.candidates);
  const omitted = Math.max(0, candidates.length - MAX_RECORD_SUBJECTS);
  if (omitted > 0) {
    candidates = candidates
      .map((c, i) => ({ c, i }))
      .sort((a, b) => rank(a.c) - rank(b.c) || a.i - b.i)
      .slice(0, MAX_RECORD_SUBJECTS)
      .sort((a, b) => a.i - b.i)
      .map(({ c }) => c);
  }
  return {
    kind: 'disruption',
    id: `${notes.nodePool}-${at}`,
    at,
    nodePool: notes.nodePool,
    candidates,
    commands: [...notes.commands],
    ...(omitted > 0 ? { omittedCandidates: omitted } : {}),
  };
}

export interface BlockedCount {
  cause: CandidateCause;
  count: number;
}

/**
 * How many of the pass's nodes were kept, per cause: a node any method chose is not counted; otherwise
 * it counts once, under the first cause (in the order the methods judged it) other than NotApplicable.
 * Sorted by cause.
 */
export function blockedByCause(candidates: readonly CandidateDecision[]): BlockedCount[] {
  const latest = latestDecisions(candidates);
  const disrupted = new Set(latest.filter((c) => c.decision === 'disrupt').map((c) => c.nodeClaim));
  const causeOf = new Map<string, CandidateCause>();
  for (const c of latest) {
    if (c.decision !== 'keep' || c.cause === 'NotApplicable' || disrupted.has(c.nodeClaim)) continue;
    if (!causeOf.has(c.nodeClaim)) causeOf.set(c.nodeClaim, c.cause);
  }
  const counts = new Map<CandidateCause, number>();
  for (const cause of causeOf.values()) counts.set(cause, (counts.get(cause) ?? 0) + 1);
  return [...counts]
    .map(([cause, count]) => ({ cause, count }))
    .sort((a, b) => (a.cause < b.cause ? -1 : a.cause > b.cause ? 1 : 0));
}

/** The NodePool's DisruptionBlocked event for a budget that allows nothing (upstream's text). */
export function budgetBlockedMessage(reason: string): string {
  return `No allowed disruptions for disruption reason ${reason} due to blocking budget`;
}

export function consolidateAfterMessage(until: Date): string {
  return `consolidateAfter has not passed since the node's last pod event (consolidatable at ${until.toISOString()})`;
}

/**
 * The cause of an Unconsolidatable answer of the Underutilized search (underutilized.ts, balanced.ts):
 * a Balanced score below the threshold, a pod that would not schedule elsewhere, or no cheaper way.
 */
export function unconsolidatableCause(why: string): CandidateCause {
  if (why.startsWith('even deleting it: score ') || why.startsWith('score ')) return 'BalancedScore';
  if (why.startsWith('Consolidation failed validation') || why.includes('not tried again before')) {
    return 'CommandBackoff';
  }
  if (
    /^pod \S+ would not schedule/.test(why) ||
    /^pod \S+ would need a node that is not initialized/.test(why) ||
    /^the pods would need \d+ new nodes/.test(why)
  ) {
    return 'PodsCannotMove';
  }
  return 'NothingCheaper';
}

/** Sums prices, an unknown one (not finite) counting as 0. */
function sumKnown(prices: readonly number[]): number {
  return prices.reduce((sum, p) => sum + (Number.isFinite(p) ? p : 0), 0);
}

const round = (usd: number): number => Math.round(usd * 1e6) / 1e6;

/** A command started, as the record states it. */
export function commandDecisionOf(input: {
  method: string;
  reason: string;
  candidates: readonly string[];
  replacements: readonly string[];
  /** Each candidate's price, USD/h (not finite: unknown). */
  candidatePrices: readonly number[];
  /** The replacements' cheapest price, USD/h; ignored for a delete (no replacements). */
  replacementPrice?: number;
  podsMoved: readonly string[];
  /** Whether the command launches replacements; without any it is a delete and costs 0 after. */
  replaces: boolean;
}): CommandDecision {
  const before = round(sumKnown(input.candidatePrices));
  const after =
    !input.replaces || input.replacementPrice === undefined || !Number.isFinite(input.replacementPrice)
      ? input.replaces
        ? before
        : 0
      : round(input.replacementPrice);
  return {
    method: input.method,
    reason: input.reason,
    candidates: [...input.candidates],
    replacements: [...input.replacements],
    pricePerHourBefore: before,
    pricePerHourAfter: after,
    podsMoved: [...input.podsMoved],
  };
}
