// The pure rules of event aggregation: one name per series, counts within the window, a fresh series after
// it, and the per-object token bucket (burst, refill, never above the burst).
import { describe, expect, it } from 'vitest';
import {
  eventObjectKey,
  eventSeriesName,
  nextEventSeriesCount,
  takeToken,
  type EventSeriesKey,
} from '../../shared/decisions/event-series.js';

const key: EventSeriesKey = {
  component: 'nodeclaim-azure-functions',
  type: 'Warning',
  reason: 'LaunchFailed',
  message: 'quota',
  involvedObject: { apiVersion: 'karpenter.sh/v1', kind: 'NodeClaim', name: 'general-abc12', uid: 'u1' },
};

describe('eventSeriesName', () => {
  it('is the same for every repeat and differs per type, reason, message and object', () => {
    expect(eventSeriesName(key)).toBe(eventSeriesName({ ...key }));
    expect(eventSeriesName(key)).toMatch(/^general-abc12\.[0-9a-f]{16}$/);
    const variants = [
      { ...key, type: 'Normal' as const },
      { ...key, reason: 'Other' },
      { ...key, message: 'other' },
      { ...key, involvedObject: { ...key.involvedObject, uid: 'u2' } },
    ];
    for (const variant of variants) expect(eventSeriesName(variant)).not.toBe(eventSeriesName(key));
  });

  it('stays a valid object name for the longest object names', () => {
    const long = { ...key, involvedObject: { ...key.involvedObject, name: 'n'.repeat(253) } };
    expect(eventSeriesName(long).length).toBeLessThanOrEqual(253);
  });

  it('rate limits per object, whatever the reason', () => {
    expect(eventObjectKey(key)).toBe(
      eventObjectKey({ ...key, reason: 'Other', message: 'x', type: 'Normal' }),
    );
  });
});

describe('nextEventSeriesCount', () => {
  const t0 = new Date('2026-01-01T00:00:00Z');
  const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);

  it('starts at 1', () => {
    expect(nextEventSeriesCount(undefined, t0)).toEqual({ count: 1, firstTimestamp: t0, lastTimestamp: t0 });
  });

  it('adds a repeat within the window and keeps the first timestamp', () => {
    const existing = { count: 4, firstTimestamp: t0, lastTimestamp: at(60) };
    expect(nextEventSeriesCount(existing, at(120), 600_000)).toEqual({
      count: 5,
      firstTimestamp: t0,
      lastTimestamp: at(120),
    });
  });

  it('starts over after the window since the last occurrence', () => {
    const existing = { count: 4, firstTimestamp: t0, lastTimestamp: at(60) };
    expect(nextEventSeriesCount(existing, at(60 + 601), 600_000)).toEqual({
      count: 1,
      firstTimestamp: at(661),
      lastTimestamp: at(661),
    });
  });
});

describe('takeToken', () => {
  const limits = { burst: 3, refillIntervalMs: 1000 };

  it('allows the burst, then one per interval, never more than the burst', () => {
    let bucket = undefined;
    const allowed: boolean[] = [];
    for (let i = 0; i < 4; i++) {
      const taken = takeToken(bucket, 0, limits);
      allowed.push(taken.allowed);
      bucket = taken.bucket;
    }
    expect(allowed).toEqual([true, true, true, false]);
    expect(takeToken(bucket, 999, limits).allowed).toBe(false);
    const refilled = takeToken(bucket, 1000, limits);
    expect(refilled.allowed).toBe(true);
    expect(takeToken(refilled.bucket, 1000, limits).allowed).toBe(false);
    expect(takeToken(bucket, 1_000_000, limits).bucket.tokens).toBe(limits.burst - 1);
  });
});
