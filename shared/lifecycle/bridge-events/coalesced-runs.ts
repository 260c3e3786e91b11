// One run per key at a time in this process, and requests that come while it runs folded into one more
// run after it: a workqueue's de-duplication of keys, for work whose every run reads the current state.
//
// Why: each NodeClaim deletion's bridge event runs its NodePool's disruption pass (freed-slot.ts). At
// 1,000 nodes a drift deletes several NodeClaims a second and the queue trigger runs up to 24 handlers at
// once, so a dozen passes of the same NodePool ran together: each read every in-flight command, all but
// one found the freed slot already taken (1,004 of 1,159 passes in one run), and the queue fell minutes
// behind, holding back the pods' provisioning signals until the scenario timed out. A pass reads the
// NodePool afresh, so the events that came while one ran need one more pass, not one each.
//
// A request folded into a run in progress returns at once; if that run fails or the process dies, the
// sweep's own pass (level-triggered) still does the work. A run repeats at most `maxRuns` times for the
// requests that keep coming, so one handler never holds its message for a whole drift.
export type CoalescedOutcome<R> = { ran: true; result: R; runs: number } | { ran: false };

export interface CoalescedRuns<K> {
  run<R>(key: K, work: () => Promise<R>): Promise<CoalescedOutcome<R>>;
}

export function coalescedRuns<K>(maxRuns: number): CoalescedRuns<K> {
  const running = new Map<K, { again: boolean }>();
  return {
    async run<R>(key: K, work: () => Promise<R>): Promise<CoalescedOutcome<R>> {
      const current = running.get(key);
      if (current) {
        current.again = true;
        return { ran: false };
      }
      const entry = { again: false };
      running.set(key, entry);
      try {
        let runs = 0;
        let result: R;
        do {
          entry.again = false;
          runs += 1;
          result = await work();
        } while (entry.again && runs < maxRuns);
        return { ran: true, result, runs };
      } finally {
        running.delete(key);
      }
    },
  };
}
