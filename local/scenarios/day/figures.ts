// The day's figures from its history and samples: the disruptions by reason (marked, or expired), cost
// against the lower bound over the day, disruptions per node-day, peaks. Pure.
import { disruptionReasonOf } from '../../../shared/decisions/disruption-state.js';
import { WellKnown } from '../../../shared/models/index.js';
import type { DaySample } from './collector.js';
import type { DayClock } from './day-clock.js';
import type { DayHistory } from './invariants/history.js';
import type { CheckOptions } from './invariants/index.js';
import type { PendingFigures } from './invariants/pending.js';
import { launchAttemptFigures } from './launch-attempts.js';
import type { DayPlan } from './plan.js';
import { poolObjectName } from './workload.js';

export interface Disruption {
  at: number;
  name: string;
  pool: string;
  reason: string;
}

/**
 * Each NodeClaim's first mark, and the deletions that came from expireAfter (no mark, old enough) up to
 * the end time the invariants are handed (`at`, the teardown's start). After it the teardown deletes every
 * NodeClaim: one old enough was counted as expired, and then as a disruption no decision record named
 * (seen in CI).
 */
export function disruptionsOf(
  history: Pick<DayHistory, 'nodeClaims'>,
  plan: Pick<DayPlan, 'pools'>,
  clock: Pick<DayClock, 'msPerHour'>,
  runId: string,
  { at: endAt }: Pick<CheckOptions, 'at'>,
): Disruption[] {
  const firstSeen = new Map<string, number>();
  const found = new Map<string, Disruption>();
  const expiresAfter = new Map(
    plan.pools
      .filter((p) => p.expireAfterHours !== undefined)
      .map((p) => [poolObjectName(p.name, runId), (p.expireAfterHours ?? 0) * clock.msPerHour]),
  );
  for (const { object, at } of history.nodeClaims) {
    const name = object.metadata.name;
    if (!firstSeen.has(name)) firstSeen.set(name, at);
    if (found.has(name)) continue;
    const pool = object.metadata.labels?.[WellKnown.nodePoolLabel] ?? '';
    const reason = disruptionReasonOf(object);
    if (reason) {
      found.set(name, { at, name, pool, reason });
      continue;
    }
    const expireAfter = expiresAfter.get(pool);
    const age = at - (firstSeen.get(name) ?? at);
    if (
      at <= endAt &&
      object.metadata.deletionTimestamp &&
      expireAfter !== undefined &&
      age >= expireAfter * 0.9
    )
      found.set(name, { at, name, pool, reason: 'Expired' });
  }
  return [...found.values()].sort((a, b) => a.at - b.at);
}

export interface DayFigures {
  seed: number;
  dayMinutes: number;
  speed: number;
  wallSeconds: number;
  pods: number;
  pendingP50Seconds: number;
  pendingP95Seconds: number;
  pendingP99Seconds: number;
  pendingMaxSeconds: number;
  pendingBoundSeconds: number;
  costOverLowerBound: number;
  nodeDays: number;
  disruptions: number;
  disruptionsPerNodeDay: number;
  nodeClaims: number;
  launchFailures: number;
  /** VM PUTs Compute took up or refused, and the share whose VM came up (launch-attempts.ts). */
  launchAttempts: number;
  firstAttemptSuccessRate: number;
  secondsLostToFailedAttempts: number;
  /** Failed attempts by ARM's code, as "code n, code n" ("" when none failed). */
  failedAttempts: string;
  peakNodes: number;
  [byReason: `disruptions${string}`]: number;
}

export function dayFigures(input: {
  plan: DayPlan;
  samples: readonly DaySample[];
  disruptions: readonly Disruption[];
  pending: PendingFigures;
  pendingBoundMs: number;
  history: DayHistory;
  dayMinutes: number;
  speed: number;
  wallMs: number;
}): DayFigures {
  const { samples } = input;
  let nodeHours = 0;
  let ratioSum = 0;
  let ratioHours = 0;
  for (let i = 1; i < samples.length; i++) {
    const [a, b] = [samples[i - 1] as DaySample, samples[i] as DaySample];
    const hours = Math.max(0, Math.min(b.hour, 24) - Math.max(a.hour, 0));
    if (hours <= 0) continue;
    nodeHours += Object.values(a.nodesByPool).reduce((s, n) => s + n, 0) * hours;
    if (a.lowerBoundPerHour > 0) {
      ratioSum += (a.pricePerHour / a.lowerBoundPerHour) * hours;
      ratioHours += hours;
    }
  }
  const nodeDays = nodeHours / 24;
  const byReason: Record<string, number> = {};
  for (const d of input.disruptions)
    byReason[`disruptions${d.reason}`] = (byReason[`disruptions${d.reason}`] ?? 0) + 1;
  const names = new Set(input.history.nodeClaims.map((o) => o.object.metadata.name));
  const round = (value: number, digits = 2) => Number(value.toFixed(digits));
  const attempts = launchAttemptFigures(input.history.armRequests, input.history.vmFailures);
  return {
    seed: input.plan.seed,
    dayMinutes: input.dayMinutes,
    speed: input.speed,
    wallSeconds: round(input.wallMs / 1000, 1),
    pods: input.pending.count,
    pendingP50Seconds: round(input.pending.p50Ms / 1000, 1),
    pendingP95Seconds: round(input.pending.p95Ms / 1000, 1),
    pendingP99Seconds: round(input.pending.p99Ms / 1000, 1),
    pendingMaxSeconds: round(input.pending.maxMs / 1000, 1),
    pendingBoundSeconds: round(input.pendingBoundMs / 1000, 1),
    costOverLowerBound: ratioHours > 0 ? round(ratioSum / ratioHours) : 0,
    nodeDays: round(nodeDays),
    disruptions: input.disruptions.length,
    disruptionsPerNodeDay: nodeDays > 0 ? round(input.disruptions.length / nodeDays) : 0,
    nodeClaims: names.size,
    launchFailures:
      input.history.vmFailures.length +
      input.history.armRequests.filter((r) => r.kind === 'putVm' && r.status === 409).length,
    launchAttempts: attempts.attempts,
    firstAttemptSuccessRate: attempts.firstAttemptSuccessRate,
    secondsLostToFailedAttempts: attempts.secondsLostToFailedAttempts,
    failedAttempts: Object.entries(attempts.failedByCode)
      .map(([code, n]) => `${code} ${n}`)
      .join(', '),
    peakNodes: Math.max(0, ...samples.map((s) => Object.values(s.nodesByPool).reduce((x, n) => x + n, 0))),
    ...byReason,
  };
}

/** The goals the bench prints the figures beside. */
export const DAY_GOALS = {
  pendingP99Seconds: {
    goal: 'p99 within the bound the day checks (the pending invariant)',
    at: 'pendingP99Seconds',
  },
  costOverLowerBound: { goal: '≤ 1.5 averaged over the day', limit: 1.5 },
  disruptionsPerNodeDay: { goal: '≤ 3 per node-day (drift, expiry, consolidation together)', limit: 3 },
  firstAttemptSuccessRate: { goal: '≥ 90% of VM PUTs come up the first time', limit: 0.9 },
} as const;
