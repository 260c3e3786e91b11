// The day's disruptions: each NodeClaim's first mark, and a deletion old enough to be expireAfter's. A
// deletion after the end time the invariants are handed (CheckOptions.at, the teardown's start) is the
// teardown's, not an expiry, however old the NodeClaim was: counted as one, it was a disruption no
// decision record could name.
import { describe, expect, it } from 'vitest';
import { disruptionsOf } from '../../../local/scenarios/day/figures.js';
import type { PoolPlan } from '../../../local/scenarios/day/plan.js';
import { claim } from './day-history-fixtures.js';

const HOUR = 1_000;
const pools = [{ name: 'arm', expireAfterHours: 10 } as PoolPlan];
const pool = 'arm-run1';

describe('the day disruptions', () => {
  it('counts a mark, and a deletion past 90% of expireAfter before the end, but not the teardown', () => {
    const history = {
      nodeClaims: [
        claim(0, 'marked', { pool }),
        claim(0, 'expired', { pool }),
        claim(0, 'torn-down', { pool }),
        claim(2 * HOUR, 'marked', { pool, reason: 'Drifted' }),
        claim(9.5 * HOUR, 'expired', { pool, deleting: true }),
        claim(12 * HOUR, 'torn-down', { pool, deleting: true }),
      ],
    };
    const found = disruptionsOf(history, { pools }, { msPerHour: HOUR }, 'run1', { at: 11 * HOUR });
    expect(found.map((d) => [d.name, d.reason])).toEqual([
      ['marked', 'Drifted'],
      ['expired', 'Expired'],
    ]);
    // With no end time, the teardown's deletion was taken for an expiry.
    const unbounded = disruptionsOf(history, { pools }, { msPerHour: HOUR }, 'run1', { at: Infinity });
    expect(unbounded.map((d) => d.name)).toContain('torn-down');
  });
});
