// The host's activity slots: a work item runs at once while a slot is free and queues otherwise, and the
// figures the scale scenario reports (peak in use, the wait for a slot, slot-seconds, time with every
// slot taken) follow exactly what the slots did, on a hand-moved clock.
import { describe, expect, test } from 'vitest';
import { createActivitySlots, waitBucketOf } from '../../local/host/activity-slots.js';

function slotsAt(capacity: number) {
  let now = 1_000_000;
  const slots = createActivitySlots({ capacity, now: () => now });
  const releases = new Map<string, () => void>();
  const started: string[] = [];
  const abandoned: string[] = [];
  const request = (activity: string, id: string): void =>
    slots.request(
      activity,
      (release) => {
        started.push(id);
        releases.set(id, release);
      },
      () => abandoned.push(id),
    );
  return {
    slots,
    request,
    started,
    abandoned,
    release: (id: string) => releases.get(id)?.(),
    advance: (ms: number) => (now += ms),
  };
}

describe('the activity slots', () => {
  test('a free slot is taken at once; a full host queues, oldest first, and counts the wait', () => {
    const host = slotsAt(2);
    host.request('awaitVmCreation', 'a');
    host.request('awaitVmCreation', 'b');
    host.request('recordLaunch', 'c');
    host.request('recordLaunch', 'd');
    expect(host.started).toEqual(['a', 'b']);
    expect(host.slots.snapshot()).toMatchObject({ inUse: 2, waiting: 2 });

    host.advance(3_000);
    host.release('a');
    expect(host.started).toEqual(['a', 'b', 'c']);
    host.advance(1_000);
    host.release('c');
    host.release('b');
    expect(host.started).toEqual(['a', 'b', 'c', 'd']);
    host.advance(500);
    host.release('d');

    const snapshot = host.slots.snapshot();
    expect(snapshot.inUse).toBe(0);
    expect(snapshot.total.executions).toBe(4);
    expect(snapshot.total.queued).toBe(2);
    expect(snapshot.total.peakInUse).toBe(2);
    // a 3 s, b 4 s, c 1 s, d 0.5 s.
    expect(snapshot.total.slotSeconds).toBe(8.5);
    // Waits 0, 0, 3 s (c), 4 s (d): nearest rank p50 is the second smallest.
    expect(snapshot.total.waitForSlot.maxMs).toBe(4_000);
    expect(snapshot.total.waitForSlot.p50Ms).toBe(0);
    expect(snapshot.total.waitForSlot.p99Ms).toBe(4_000);
    expect(snapshot.byActivity.awaitVmCreation).toMatchObject({
      executions: 2,
      queued: 0,
      peakInUse: 2,
      slotSeconds: 7,
      waitForSlot: { p50Ms: 0, p99Ms: 0, maxMs: 0 },
    });
    expect(snapshot.byActivity.recordLaunch).toMatchObject({
      executions: 2,
      queued: 2,
      peakInUse: 1,
      slotSeconds: 1.5,
      waitForSlot: { maxMs: 4_000 },
    });
    // Both slots taken from the start until b's release, 4 s later (c's and a's were taken again at once).
    expect(snapshot.allInUseSeconds).toBe(4);
  });

  test('slots held at the snapshot count up to then, and so does a span with every slot taken', () => {
    const host = slotsAt(1);
    host.request('advanceNodeClaimTermination', 'a');
    host.advance(45_000);
    const snapshot = host.slots.snapshot();
    expect(snapshot.total.slotSeconds).toBe(45);
    expect(snapshot.byActivity.advanceNodeClaimTermination?.slotSeconds).toBe(45);
    expect(snapshot.allInUseSeconds).toBe(45);
    // Releasing twice frees one slot only.
    host.release('a');
    host.release('a');
    expect(host.slots.snapshot().inUse).toBe(0);
  });

  test('a stopping host abandons the queued work items and no others', () => {
    const host = slotsAt(1);
    host.request('x', 'a');
    host.request('x', 'b');
    host.request('x', 'c');
    host.slots.abandonQueued();
    expect(host.abandoned).toEqual(['b', 'c']);
    host.release('a');
    expect(host.started).toEqual(['a']);
    expect(host.slots.snapshot()).toMatchObject({ inUse: 0, waiting: 0 });
  });

  test('waits are kept to the millisecond below 64 ms and within 1/32 above, never under', () => {
    expect(waitBucketOf(0)).toBe(0);
    expect(waitBucketOf(0.2)).toBe(1);
    expect(waitBucketOf(63)).toBe(63);
    expect(waitBucketOf(64)).toBe(64);
    expect(waitBucketOf(65)).toBe(66);
    for (const wait of [100, 1_234, 45_000, 3_600_000]) {
      const bucket = waitBucketOf(wait);
      expect(bucket).toBeGreaterThanOrEqual(wait);
      expect(bucket).toBeLessThanOrEqual(wait * (1 + 1 / 32));
    }
    // A long run keeps few buckets: every wait up to an hour, to the millisecond, in a few hundred.
    const buckets = new Set<number>();
    for (let wait = 0; wait <= 3_600_000; wait += 7) buckets.add(waitBucketOf(wait));
    expect(buckets.size).toBeLessThan(600);
  });

  test('a percentile reads its bucket but never passes the exact maximum', () => {
    const host = slotsAt(1);
    host.request('x', 'a');
    host.request('x', 'b');
    host.advance(1_001);
    host.release('a');
    host.release('b');
    const wait = host.slots.snapshot().total.waitForSlot;
    expect(wait.maxMs).toBe(1_001);
    expect(wait.p99Ms).toBe(1_001);
  });
});
