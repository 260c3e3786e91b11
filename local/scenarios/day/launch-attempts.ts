// How often a launch succeeds the first time: each VM PUT that Compute took up (not a 429, which the app
// sends again unchanged, nor a 412: the app creates with If-None-Match: *, so a redelivered launch whose VM
// exists is refused that way and adopts the VM) is one attempt, and the attempt came up unless Compute refused it on the spot or
// its creation later ended Failed. On Azure the cost of a failed attempt is the wait before the next
// offering is tried, so the time from the attempt's PUT to its failure is counted as lost. Read from the
// ARM request log and the emulator's change feed, the same evidence the day's invariants use. Pure.
import type { ArmRequest, VmFailure } from './invariants/history.js';

export interface LaunchAttemptFigures {
  /** VM PUTs Compute took up or refused (429s and 412s left out). */
  attempts: number;
  /** Attempts whose VM came up (accepted, and no Failed creation after). */
  cameUp: number;
  /** cameUp ÷ attempts; 1 when nothing was attempted. */
  firstAttemptSuccessRate: number;
  /** Summed over failed attempts: from the attempt's PUT to its refusal or its creation's failure. */
  secondsLostToFailedAttempts: number;
  /** Failed attempts by ARM's error code ("refused 409" when a refusal carried none). */
  failedByCode: Record<string, number>;
}

/** Throttled (sent again unchanged), and the VM already there (a redelivered create). */
const NOT_AN_ATTEMPT: ReadonlySet<number> = new Set([429, 412]);

interface Attempt {
  at: number;
  failedAt?: number;
  code?: string;
}

export function launchAttemptFigures(
  requests: readonly ArmRequest[],
  failures: readonly VmFailure[],
): LaunchAttemptFigures {
  const attemptsByVm = new Map<string, Attempt[]>();
  const events = [
    ...requests
      .filter(
        (r) =>
          r.kind === 'putVm' && r.method === 'PUT' && r.vmName !== undefined && !NOT_AN_ATTEMPT.has(r.status),
      )
      .map((r) => ({ at: r.at, vmName: r.vmName as string, put: r })),
    ...failures.map((f) => ({ at: f.at, vmName: f.vmName, failure: f })),
  ].sort((a, b) => a.at - b.at);
  for (const event of events) {
    const attempts = attemptsByVm.get(event.vmName) ?? [];
    attemptsByVm.set(event.vmName, attempts);
    const open = attempts.at(-1);
    if ('failure' in event) {
      if (open && open.failedAt === undefined) {
        open.failedAt = event.at;
        open.code = event.failure.code;
      }
      continue;
    }
    const accepted = event.put.status >= 200 && event.put.status < 300;
    // A PUT sent again while the same creation is still open (a redelivery) is not a new attempt.
    if (accepted && open && open.failedAt === undefined) continue;
    attempts.push(
      accepted
        ? { at: event.at }
        : { at: event.at, failedAt: event.at, code: event.put.errorCode ?? `refused ${event.put.status}` },
    );
  }
  const all = [...attemptsByVm.values()].flat();
  const failed = all.filter((a) => a.failedAt !== undefined);
  const failedByCode: Record<string, number> = {};
  for (const attempt of failed)
    failedByCode[attempt.code ?? 'unknown'] = (failedByCode[attempt.code ?? 'unknown'] ?? 0) + 1;
  const lostMs = failed.reduce((sum, a) => sum + ((a.failedAt as number) - a.at), 0);
  return {
    attempts: all.length,
    cameUp: all.length - failed.length,
    firstAttemptSuccessRate:
      all.length === 0 ? 1 : Number(((all.length - failed.length) / all.length).toFixed(3)),
    secondsLostToFailedAttempts: Number((lostMs / 1000).toFixed(1)),
    failedByCode,
  };
}
