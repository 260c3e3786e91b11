import { describe, expect, it } from 'vitest';
import { ChangeBuffer, mergeChanges } from '../../bridge/change-buffer.js';
import type { ChangeType, ObjectChange } from '../../shared/events/cloud-event.js';

function change(uid: string, changeType: ChangeType, resourceVersion = '1'): ObjectChange {
  return { kind: 'NodeClaim', name: `claim-${uid}`, uid, resourceVersion, changeType };
}

function buffer(capacity = 10): ChangeBuffer {
  let next = 0;
  return new ChangeBuffer({ capacity, newEventId: () => `event-${++next}`, now: () => 1_000 });
}

describe('mergeChanges', () => {
  it.each<[ChangeType, ChangeType, ChangeType, string]>([
    ['ADDED', 'MODIFIED', 'ADDED', '2'],
    ['MODIFIED', 'MODIFIED', 'MODIFIED', '2'],
    ['MODIFIED', 'DELETED', 'DELETED', '2'],
    ['ADDED', 'DELETED', 'DELETED', '2'],
    ['DELETED', 'MODIFIED', 'DELETED', '1'],
    ['DELETED', 'RESYNC', 'DELETED', '1'],
    ['MODIFIED', 'RESYNC', 'MODIFIED', '1'],
    ['RESYNC', 'MODIFIED', 'MODIFIED', '2'],
    ['RESYNC', 'RESYNC', 'RESYNC', '1'],
  ])('%s then %s → %s at resource version %s', (first, second, type, resourceVersion) => {
    const merged = mergeChanges(change('a', first, '1'), change('a', second, '2'));
    expect(merged.changeType).toBe(type);
    expect(merged.resourceVersion).toBe(resourceVersion);
  });
});

describe('ChangeBuffer', () => {
  it('keeps one entry per object and hands them out oldest first', () => {
    const outbox = buffer();
    expect(outbox.offer(change('a', 'ADDED'))).toBe('queued');
    expect(outbox.offer(change('b', 'ADDED'))).toBe('queued');
    expect(outbox.offer(change('a', 'MODIFIED', '2'))).toBe('coalesced');
    expect(outbox.size).toBe(2);
    expect(outbox.coalescedTotal).toBe(1);

    const first = outbox.checkOut();
    const second = outbox.checkOut();
    expect(first?.change).toEqual(change('a', 'ADDED', '2'));
    expect(second?.change.uid).toBe('b');
    expect(outbox.checkOut()).toBeUndefined();
    expect(outbox.inFlight).toBe(2);
  });

  it('keys by kind and uid, so a recreated object with the same name is not merged away', () => {
    const outbox = buffer();
    outbox.offer({ ...change('old', 'DELETED'), name: 'same' });
    outbox.offer({ ...change('new', 'ADDED'), name: 'same' });
    outbox.offer({ ...change('old', 'ADDED'), kind: 'Node', name: 'same' });
    expect(outbox.size).toBe(3);
  });

  it('removes an acknowledged change, keeps a released one for the next try with the same event id', () => {
    const outbox = buffer();
    outbox.offer(change('a', 'ADDED'));
    const sent = outbox.checkOut();
    if (sent === undefined) throw new Error('expected a change');
    outbox.release(sent);
    expect(outbox.size).toBe(1);
    const retry = outbox.checkOut();
    expect(retry?.eventId).toBe(sent.eventId);
    if (retry === undefined) throw new Error('expected a change');
    outbox.acknowledge(retry);
    expect(outbox.size).toBe(0);
    expect(outbox.hasWaiting()).toBe(false);
  });

  it('does not lose a change merged in while an older one was being sent', () => {
    const outbox = buffer();
    outbox.offer(change('a', 'ADDED', '1'));
    const sent = outbox.checkOut();
    if (sent === undefined) throw new Error('expected a change');
    outbox.offer(change('a', 'MODIFIED', '2'));
    outbox.acknowledge(sent);
    expect(outbox.size).toBe(1);
    const next = outbox.checkOut();
    expect(next?.change.resourceVersion).toBe('2');
    expect(next?.eventId).not.toBe(sent.eventId);
  });

  it('a RESYNC merged into a waiting change changes nothing, so the send in flight still clears it', () => {
    const outbox = buffer();
    outbox.offer(change('a', 'MODIFIED', '5'));
    const sent = outbox.checkOut();
    if (sent === undefined) throw new Error('expected a change');
    expect(outbox.offer(change('a', 'RESYNC', '5'))).toBe('coalesced');
    outbox.acknowledge(sent);
    expect(outbox.size).toBe(0);
  });

  it('reports full at capacity but never refuses a change', () => {
    const outbox = buffer(10);
    for (let i = 0; i < 9; i++) outbox.offer(change(`u${i}`, 'ADDED'));
    expect(outbox.isFull()).toBe(false);
    outbox.offer(change('u9', 'ADDED'));
    expect(outbox.isFull()).toBe(true);
    expect(outbox.offer(change('u10', 'ADDED'))).toBe('queued');
    expect(outbox.size).toBe(11);
  });

  it('merges every pod change into one provisioning signal, and lets it go at most once an interval', () => {
    let now = 1_000;
    let next = 0;
    const outbox = new ChangeBuffer({
      capacity: 10,
      newEventId: () => `event-${++next}`,
      now: () => now,
      signalIntervalMs: 500,
    });
    const pod = (uid: string): ObjectChange => ({
      kind: 'Pod',
      name: `pod-${uid}`,
      namespace: 'shop',
      uid,
      resourceVersion: '1',
      changeType: 'ADDED',
    });
    outbox.offer(pod('p1'));
    outbox.offer(change('claim', 'ADDED'));
    expect(outbox.offer(pod('p2'))).toBe('coalesced');
    expect(outbox.size).toBe(2);

    // The first signal goes at once, naming the newest pod.
    const signal = outbox.checkOut();
    expect(signal?.change.name).toBe('pod-p2');
    if (signal === undefined) throw new Error('expected the signal');
    // Pods that come while it is sent wait in the same entry, and their signal waits out the interval.
    outbox.offer(pod('p3'));
    outbox.acknowledge(signal);
    expect(outbox.checkOut()?.change.kind).toBe('NodeClaim');
    expect(outbox.checkOut()).toBeUndefined();
    expect(outbox.signalDueInMs()).toBe(500);
    now += 499;
    expect(outbox.checkOut()).toBeUndefined();
    expect(outbox.signalDueInMs()).toBe(1);
    now += 1;
    expect(outbox.signalDueInMs()).toBe(0);
    expect(outbox.checkOut()?.change.name).toBe('pod-p3');
  });

  it('rejects a capacity that is not a positive integer', () => {
    expect(() => buffer(0)).toThrow(RangeError);
    expect(() => buffer(1.5)).toThrow(RangeError);
  });
});
