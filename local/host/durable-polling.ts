// In Azure a Durable message (a start, an activity's result, a fired timer, an activity to run) waits in a
// Storage queue until the worker's next poll of that queue, and an idle worker polls ever less often, up
// to host.json's maxQueuePollingInterval. A local host that hands messages over at once would hide that
// wait from every figure measured here; this module makes the local host wait as the Azure Storage
// provider's pollers do, computed from the poll times rather than by polling, so an idle host costs
// nothing and a scaled clock shortens the wait like every other.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock } from './clock.js';

/** The Azure Storage provider's polling of its queues, as host.json configures it. */
export interface DurableQueuePolling {
  /** extensions.durableTask.storageProvider.maxQueuePollingInterval (the provider's default is 30 s). */
  maxIntervalMs: number;
  /** extensions.durableTask.storageProvider.partitionCount: how many control queues (default 4). */
  partitionCount: number;
}

/** The provider's fixed floor: the first wait after a poll that found a message (TaskHubQueue's 50 ms). */
export const MIN_POLLING_INTERVAL_MS = 50;
/** RandomizedExponentialBackoffStrategy's jitter: each increase is scaled by a factor in [0.8, 1.2]. */
const RANDOMIZATION_FACTOR = 0.2;
const DEFAULT_MAX_INTERVAL_MS = 30_000;
const DEFAULT_PARTITION_COUNT = 4;

export const repositoryHostJsonPath = join(import.meta.dirname, '..', '..', 'host.json');

/** Reads the provider's polling settings from a host.json (by default the one the app ships). */
export function readDurableQueuePolling(hostJsonPath: string = repositoryHostJsonPath): DurableQueuePolling {
  const parsed = JSON.parse(readFileSync(hostJsonPath, 'utf8')) as unknown;
  const provider = pathOf(parsed, ['extensions', 'durableTask', 'storageProvider']);
  const interval = pathOf(provider, ['maxQueuePollingInterval']);
  const partitions = pathOf(provider, ['partitionCount']);
  if (interval !== undefined && typeof interval !== 'string')
    throw new Error(`${hostJsonPath}: maxQueuePollingInterval must be a TimeSpan string such as "00:00:02"`);
  if (
    partitions !== undefined &&
    (typeof partitions !== 'number' || !Number.isInteger(partitions) || partitions < 1)
  )
    throw new Error(`${hostJsonPath}: partitionCount must be a positive integer`);
  return {
    maxIntervalMs: interval === undefined ? DEFAULT_MAX_INTERVAL_MS : parseTimeSpanMs(interval),
    partitionCount: partitions ?? DEFAULT_PARTITION_COUNT,
  };
}

/** .NET's TimeSpan text as host.json writes it: `[d.]hh:mm:ss[.fffffff]`. */
export function parseTimeSpanMs(text: string): number {
  const match = /^(?:(\d+)\.)?(\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{1,7}))?$/.exec(text.trim());
  if (match === null) throw new Error(`'${text}' is not a TimeSpan of the form [d.]hh:mm:ss[.fff]`);
  const [, days = '0', hours = '0', minutes = '0', seconds = '0', fraction = ''] = match;
  if (Number(minutes) > 59 || Number(seconds) > 59) throw new Error(`'${text}' is not a valid TimeSpan`);
  const fractionMs = fraction === '' ? 0 : Number(`0.${fraction}`) * 1000;
  return (
    ((Number(days) * 24 + Number(hours)) * 60 + Number(minutes)) * 60_000 +
    Number(seconds) * 1000 +
    fractionMs
  );
}

/**
 * The waits of one poller after a poll that found a message, in order: the provider polls again at once
 * (the first, empty poll resets the wait to the 50 ms floor), then each empty poll adds
 * floor × 2^(k−1) × jitter to the floor until the wait reaches the maximum, where it stays (Azure/durabletask
 * src/DurableTask.AzureStorage/BackoffPollingHelper.cs, with TaskHubQueue's 50 ms floor).
 */
export function createBackoff(
  maxIntervalMs: number,
  random: () => number = Math.random,
): { next(): number; reset(): void } {
  const max = Math.max(maxIntervalMs, MIN_POLLING_INTERVAL_MS);
  let waits = 0;
  let current = 0;
  return {
    next: () => {
      waits += 1;
      if (waits === 1) return 0;
      if (waits === 2) current = Math.min(MIN_POLLING_INTERVAL_MS, max);
      else if (current < max) {
        const jitter = 1 - RANDOMIZATION_FACTOR + random() * 2 * RANDOMIZATION_FACTOR;
        const increased = MIN_POLLING_INTERVAL_MS + jitter * 2 ** (waits - 3) * MIN_POLLING_INTERVAL_MS;
        current = Math.min(increased, max);
      }
      return current;
    },
    reset: () => {
      waits = 0;
      current = 0;
    },
  };
}

export interface QueuedMessage {
  /** Called at the first poll at or after `visibleAt`. */
  deliver(): void;
  /** Called instead when the poller is cancelled first (a stopping host). */
  abandon(): void;
  /** When the message became visible in its queue (clock ms); default now. */
  visibleAt?: number;
}

export interface QueuePoller {
  receive(message: QueuedMessage): void;
  /** Abandons every message not yet received. */
  cancel(): void;
  /** Messages waiting for their poll. */
  readonly waiting: number;
  readonly stats: QueuePollerStats;
}

export interface QueuePollerStats {
  /** Messages handed over. */
  received: number;
  /** Sum and largest of their waits between becoming visible and the poll that took them, clock ms. */
  totalWaitMs: number;
  maxWaitMs: number;
}

/**
 * One queue's poller on `clock`: the poll times follow `createBackoff` from the last poll that found a
 * message (or from the poller's start), so a message that becomes visible after an idle spell waits for
 * the next poll of the grown interval, and one that follows another closely is taken within the floor.
 */
export function createQueuePoller(options: {
  clock: Clock;
  maxIntervalMs: number;
  random?: () => number;
}): QueuePoller {
  const { clock } = options;
  const backoff = createBackoff(options.maxIntervalMs, options.random);
  let anchor = clock.now();
  // Poll times after the anchor, generated as far as a message needed them.
  let polls: number[] = [];
  type Waiting = QueuedMessage & { visibleAt: number };
  const due = new Map<number, Waiting[]>();
  const armed = new Map<number, () => void>();
  const stats: QueuePollerStats = { received: 0, totalWaitMs: 0, maxWaitMs: 0 };

  const pollAtOrAfter = (time: number): number => {
    let last = polls.at(-1) ?? anchor;
    while (polls.length === 0 || last < time) {
      last += backoff.next();
      polls.push(last);
    }
    return polls.find((poll) => poll >= time) ?? last;
  };

  const take = (pollTime: number): void => {
    armed.delete(pollTime);
    const messages = due.get(pollTime) ?? [];
    due.delete(pollTime);
    // This poll found messages: the next one follows at once and the waits grow again from the floor.
    // A message due at a later poll of the old sequence became visible after this poll, so it moves onto
    // the new one, where it waits no longer.
    anchor = pollTime;
    polls = [];
    backoff.reset();
    const later = [...due.values()].flat();
    due.clear();
    for (const cancel of armed.values()) cancel();
    armed.clear();
    for (const message of messages) {
      const wait = pollTime - message.visibleAt;
      stats.received += 1;
      stats.totalWaitMs += wait;
      stats.maxWaitMs = Math.max(stats.maxWaitMs, wait);
      message.deliver();
    }
    for (const message of later) schedule(message);
  };

  const schedule = (message: Waiting): void => {
    const pollTime = pollAtOrAfter(Math.max(message.visibleAt, anchor));
    const waiting = due.get(pollTime);
    if (waiting) waiting.push(message);
    else due.set(pollTime, [message]);
    if (!armed.has(pollTime))
      armed.set(
        pollTime,
        clock.setTimer(pollTime, () => take(pollTime), 'queue-poll'),
      );
  };

  return {
    receive: (message) => schedule({ ...message, visibleAt: message.visibleAt ?? clock.now() }),
    cancel: () => {
      for (const cancel of armed.values()) cancel();
      armed.clear();
      const dropped = [...due.values()].flat();
      due.clear();
      for (const message of dropped) message.abandon();
    },
    get waiting() {
      let count = 0;
      for (const waiting of due.values()) count += waiting.length;
      return count;
    },
    stats,
  };
}

/** Which control queue an instance's messages go to: a stable hash of its ID over the partitions. */
export function partitionOf(instanceId: string, partitionCount: number): number {
  // FNV-1a, 32 bits, over the ID's UTF-16 code units.
  let hash = 0x811c9dc5;
  for (let index = 0; index < instanceId.length; index += 1) {
    hash ^= instanceId.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % partitionCount;
}

function pathOf(value: unknown, path: readonly string[]): unknown {
  let current = value;
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}
