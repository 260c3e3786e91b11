// How a repeated Kubernetes Event is recorded, as client-go's event correlator does it: the same reason and
// message on the same object is one Event whose count and lastTimestamp grow, so a loop that keeps saying
// the same thing updates one object instead of flooding the namespace; new Events on one object are rate
// limited by a token bucket. The name of a series' Event is derived from what identifies the series, so
// every process (and a restarted one) finds and counts the same Event instead of starting its own.
import { createHash } from 'node:crypto';

/** client-go's aggregation window: a repeat within it counts on the same Event, a later one starts over. */
export const EVENT_SERIES_WINDOW_MS = 10 * 60 * 1000;

/** client-go's spam filter: 25 new Events per object at once, then one more every 5 minutes. */
export const EVENT_BURST_PER_OBJECT = 25;
export const EVENT_REFILL_INTERVAL_MS = 5 * 60 * 1000;

/** The API server's limit on an Event's message; longer ones are cut, as client-go does. */
export const EVENT_MESSAGE_LIMIT = 1024;

const NAME_LIMIT = 253;
const HASH_HEX_LENGTH = 16;

export interface EventSeriesKey {
  component: string;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  involvedObject: { apiVersion: string; kind: string; name: string; namespace?: string; uid?: string };
}

/** `<object name>.<hash of the series>`: a valid Event name, the same for every repeat of the series. */
export function eventSeriesName(key: EventSeriesKey): string {
  const { involvedObject: o } = key;
  const identity = [
    key.component,
    key.type,
    key.reason,
    key.message,
    o.apiVersion,
    o.kind,
    o.namespace ?? '',
    o.name,
    o.uid ?? '',
  ].join('\u0000');
  const hash = createHash('sha256').update(identity).digest('hex').slice(0, HASH_HEX_LENGTH);
  return `${o.name.slice(0, NAME_LIMIT - HASH_HEX_LENGTH - 1)}.${hash}`;
}

/** The key the per-object rate limit counts under: the object, whoever says what about it. */
export function eventObjectKey(key: EventSeriesKey): string {
  const { involvedObject: o } = key;
  return [key.component, o.apiVersion, o.kind, o.namespace ?? '', o.name, o.uid ?? ''].join('\u0000');
}

export interface EventSeriesCount {
  count: number;
  firstTimestamp: Date;
  lastTimestamp: Date;
}

/**
 * The count and timestamps to write for one more occurrence at `now`, given what the series' Event says
 * (undefined: there is none). A repeat within the window of the last one adds to it; after the window the
 * series starts over at 1, as client-go starts a new Event once its aggregation window has passed.
 */
export function nextEventSeriesCount(
  existing: Partial<EventSeriesCount> | undefined,
  now: Date,
  windowMs: number = EVENT_SERIES_WINDOW_MS,
): EventSeriesCount {
  const last = existing?.lastTimestamp ?? existing?.firstTimestamp;
  if (!existing || !last || now.getTime() - last.getTime() > windowMs) {
    return { count: 1, firstTimestamp: now, lastTimestamp: now };
  }
  return {
    count: (existing.count ?? 1) + 1,
    firstTimestamp: existing.firstTimestamp ?? last,
    lastTimestamp: now,
  };
}

export interface TokenBucket {
  tokens: number;
  updatedAtMs: number;
}

export interface TokenBucketLimits {
  burst: number;
  refillIntervalMs: number;
}

export const EVENT_OBJECT_LIMITS: TokenBucketLimits = {
  burst: EVENT_BURST_PER_OBJECT,
  refillIntervalMs: EVENT_REFILL_INTERVAL_MS,
};

/**
 * Reasons whose Events one process writes at a bounded rate whatever the object, as Karpenter's
 * PodNominationRateLimiter (5 a second, a burst of 10) bounds its Nominated events. Every provisioning
 * window nominates each pod it placed, so a burst of 10,000 pending pods would otherwise be 10,000 Event
 * writes in a few windows: on a 1,000-node run they filled the API server's queue for the app's user
 * (priority level global-default, 429 queue-full) and the NodeClaim and Node writes behind them were
 * refused with them. An Event over the rate is dropped, as Karpenter drops it. The burst is 100, not
 * Karpenter's 10, on purpose: Karpenter nominates as its scheduler places pods, this app nominates a
 * whole window's pods at once, and a window of up to 100 pods (every window of a cluster that is not
 * bursting) should still name every pod's planned node (`kubectl describe pod`, and the tests that hold
 * the simulation to kube-scheduler read it there). The decision records keep every placement regardless.
 */
export const EVENT_REASON_LIMITS: Readonly<Record<string, TokenBucketLimits>> = {
  Nominated: { burst: 100, refillIntervalMs: 200 },
};

/** Takes one token from `bucket` (undefined: a full one) at `nowMs`; the bucket afterwards either way. */
export function takeToken(
  bucket: TokenBucket | undefined,
  nowMs: number,
  limits: TokenBucketLimits = EVENT_OBJECT_LIMITS,
): { allowed: boolean; bucket: TokenBucket } {
  const previous = bucket ?? { tokens: limits.burst, updatedAtMs: nowMs };
  const refilled = Math.max(0, nowMs - previous.updatedAtMs) / limits.refillIntervalMs;
  const tokens = Math.min(limits.burst, previous.tokens + refilled);
  if (tokens < 1) return { allowed: false, bucket: { tokens, updatedAtMs: nowMs } };
  return { allowed: true, bucket: { tokens: tokens - 1, updatedAtMs: nowMs } };
}
