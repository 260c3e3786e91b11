// Writers in one process that ask to mark at the same time share one disruption-marks Lease and one fresh
// budget read per NodePool and reason, whatever NodePools they mark: whoever holds the Lease lets through,
// in the order asked, every request that still fits, and tells the others why not. The budget still holds
// across them all, and a Lease held by another writer refuses everyone who waits, as it refused each
// writer alone. Requests that come while a round is served are the next round, under the same Lease
// renewed beside its fresh read; a Lease taken over meanwhile marks nothing more.
import { beforeEach, describe, expect, test } from 'vitest';
import {
  DISRUPTION_MARKS_LEASE,
  markWithinBudget,
} from '../../../shared/lifecycle/disruption/budget-at-mark.js';
import type { NodePool } from '../../../shared/models/karpenter.js';
import { markForDisruption } from '../../../shared/lifecycle/disruption/replacements.js';
import { fakeLifecycle, FAKE_NOW, type FakeLifecycle } from '../../support/fake-lifecycle.js';
import { nodePool } from '../../support/fixtures.js';
import { initializedNodeClaim, nodeOf } from '../../support/method-pass.js';

const pool: NodePool = {
  ...nodePool('general', 'default', { budgets: [{ nodes: '3' }], consolidateAfter: '0s' }),
  metadata: { name: 'general', uid: 'pool-uid' },
};

/** Until the rounds in flight have ended and given the Lease back. */
const settled = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('markWithinBudget rounds', () => {
  let fake: FakeLifecycle;
  beforeEach(() => {
    fake = fakeLifecycle();
    fake.nodePools.seed(pool);
    for (const name of ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']) {
      const claim = fake.nodeClaims.seed(initializedNodeClaim(`general-${name}`, pool));
      fake.nodes.seed(nodeOf(claim));
    }
  });

  test('concurrent requests share one Lease and one read; the budget holds across them, in order', async () => {
    const marked: number[] = [];
    const outcomes = await Promise.all(
      [0, 1, 2, 3, 4, 5, 6, 7].map((index) =>
        markWithinBudget(fake.deps, pool.metadata.name, 'Empty', 1, async () => {
          marked.push(index);
          return index;
        }),
      ),
    );

    // A budget of 3: the first three asked are marked, the other five told why not.
    expect(outcomes.filter((o) => o.marked).map((o) => (o.marked ? o.value : -1))).toEqual([0, 1, 2]);
    expect(marked.sort()).toEqual([0, 1, 2]);
    const refusals = outcomes.flatMap((o) => (o.marked ? [] : [o.why]));
    expect(refusals).toHaveLength(5);
    expect(refusals[0]).toBe('the Empty budget allows 0 more now, 1 to mark');
    // One round took them all: one Lease for eight writers.
    expect(fake.leases.acquisitionsOf(DISRUPTION_MARKS_LEASE.name)).toHaveLength(1);
  });

  test('a request that does not fit what is left is refused, a later smaller one may still fit', async () => {
    const [two, three, one] = await Promise.all([
      markWithinBudget(fake.deps, pool.metadata.name, 'Empty', 2, async () => 'two'),
      markWithinBudget(fake.deps, pool.metadata.name, 'Empty', 3, async () => 'three'),
      markWithinBudget(fake.deps, pool.metadata.name, 'Empty', 1, async () => 'one'),
    ]);
    expect(two).toEqual({ marked: true, value: 'two' });
    expect(three).toEqual({ marked: false, why: 'the Empty budget allows 1 more now, 3 to mark' });
    expect(one).toEqual({ marked: true, value: 'one' });
  });

  test('a mark that throws fails its own request only', async () => {
    const results = await Promise.allSettled([
      markWithinBudget(fake.deps, pool.metadata.name, 'Empty', 1, async () => {
        throw new Error('conflict');
      }),
      markWithinBudget(fake.deps, pool.metadata.name, 'Empty', 1, async () => 'ok'),
    ]);
    expect(results[0].status).toBe('rejected');
    expect(results[1]).toEqual({ status: 'fulfilled', value: { marked: true, value: 'ok' } });
  });

  test('a Lease held by another writer refuses every request waiting, and nothing is marked', async () => {
    fake.leases.holdFor('another-app', FAKE_NOW, 60, DISRUPTION_MARKS_LEASE.name);
    let marks = 0;
    const outcomes = await Promise.all(
      [0, 1, 2].map(() =>
        markWithinBudget(fake.deps, pool.metadata.name, 'Empty', 1, async () => {
          marks += 1;
        }),
      ),
    );
    expect(marks).toBe(0);
    for (const outcome of outcomes) {
      expect(outcome).toEqual({
        marked: false,
        why: 'another writer is marking nodes (the disruption-marks Lease is held by another-app)',
      });
    }
  });

  test('requests for different NodePools and reasons share one round; each budget holds on its own', async () => {
    const other: NodePool = {
      ...nodePool('batch', 'default', { budgets: [{ nodes: '1' }], consolidateAfter: '0s' }),
      metadata: { name: 'batch', uid: 'batch-uid' },
    };
    fake.nodePools.seed(other);
    for (const name of ['a', 'b']) {
      const claim = fake.nodeClaims.seed(initializedNodeClaim(`batch-${name}`, other));
      fake.nodes.seed(nodeOf(claim));
    }
    const ask = (pool: string, reason: 'Empty' | 'Underutilized', value: string) =>
      markWithinBudget(fake.deps, pool, reason, 1, async () => value);
    const outcomes = await Promise.all([
      ask('batch', 'Empty', 'batch-1'),
      ask('general', 'Empty', 'general-1'),
      ask('batch', 'Empty', 'batch-2'),
      ask('general', 'Underutilized', 'general-u'),
      ask('gone', 'Empty', 'nowhere'),
    ]);
    expect(outcomes).toEqual([
      { marked: true, value: 'batch-1' },
      { marked: true, value: 'general-1' },
      { marked: false, why: 'the Empty budget allows 0 more now, 1 to mark' },
      { marked: true, value: 'general-u' },
      { marked: false, why: 'NodePool gone is gone' },
    ]);
    // One Lease for all of them: rounds per NodePool would have held it against each other.
    expect(fake.leases.acquisitionsOf(DISRUPTION_MARKS_LEASE.name)).toHaveLength(1);
  });

  test('requests that come while a round marks are the next round: the same Lease, a fresh read', async () => {
    const markTwo = async () => {
      for (const name of ['general-a', 'general-b']) {
        const claim = await fake.nodeClaims.get(name);
        if (claim) await markForDisruption(fake.deps, claim, 'Empty', 'empty');
      }
    };
    let later: Promise<unknown>[] = [];
    const first = await markWithinBudget(fake.deps, pool.metadata.name, 'Empty', 2, async () => {
      // Asked while the first round marks: they wait for the next round.
      later = [
        markWithinBudget(fake.deps, pool.metadata.name, 'Empty', 2, async () => 'too many'),
        markWithinBudget(fake.deps, pool.metadata.name, 'Empty', 1, async () => 'one more'),
      ];
      await markTwo();
      return 'first';
    });
    expect(first).toEqual({ marked: true, value: 'first' });
    // The second round read the budget again and saw the first round's two marks: one slot of 3 left.
    expect(await Promise.all(later)).toEqual([
      { marked: false, why: 'the Empty budget allows 1 more now, 2 to mark' },
      { marked: true, value: 'one more' },
    ]);
    // The Lease was taken once, kept for the second round and given back after it.
    await settled();
    expect(fake.leases.acquisitionsOf(DISRUPTION_MARKS_LEASE.name)).toHaveLength(1);
    expect(fake.leases.recordOf(DISRUPTION_MARKS_LEASE.name)).toBeUndefined();
  });

  test('a Lease taken over between rounds: the next round marks nothing and says why', async () => {
    let later: Promise<unknown> | undefined;
    let marks = 0;
    await markWithinBudget(fake.deps, pool.metadata.name, 'Empty', 1, async () => {
      later = markWithinBudget(fake.deps, pool.metadata.name, 'Empty', 1, async () => {
        marks += 1;
      });
      // Another writer takes the Lease (this process's was judged expired) before the next round.
      fake.leases.holdFor('another-app', FAKE_NOW, 60, DISRUPTION_MARKS_LEASE.name);
    });
    expect(await later).toEqual({
      marked: false,
      why: 'the disruption-marks Lease was taken over while this process held it',
    });
    expect(marks).toBe(0);
    // The other writer's hold is left alone.
    expect(fake.leases.recordOf(DISRUPTION_MARKS_LEASE.name)?.holderIdentity).toBe('another-app');
  });

  test('requests after a round is served start a round of their own, with a fresh read', async () => {
    const first = await markWithinBudget(fake.deps, pool.metadata.name, 'Empty', 3, async () => 'first');
    expect(first).toEqual({ marked: true, value: 'first' });
    // The first Lease was given back once no request waited.
    await settled();
    // Nothing was marked on the NodeClaims (the mark callback did not), so the budget reads 3 again.
    const second = await markWithinBudget(fake.deps, pool.metadata.name, 'Empty', 3, async () => 'second');
    expect(second).toEqual({ marked: true, value: 'second' });
    expect(fake.leases.acquisitionsOf(DISRUPTION_MARKS_LEASE.name)).toHaveLength(2);
  });
});
