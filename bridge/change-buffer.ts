// The bridge's outbox: changes waiting to be sent to the queue, at most one per object. A second change
// for an object that is still waiting is merged into the first (handlers are level-triggered, so the
// newest resource version says everything the older one did). The buffer never refuses a change; its
// capacity is a high-water mark at which the bridge stops reading watches until it drains (see
// bridge/watcher.ts), and because entries are per object it can never hold more entries than there are
// watched objects.
//
// Pods are the exception to one entry per object: a provisionable pod's message only wakes the
// provisioning window, which reads every provisionable pod itself, so all pod changes share one entry, the
// provisioning signal, and it leaves at most once per `signalIntervalMs`. One message per pod put 2,000
// messages of a 200-node burst in the queue ahead of the NodeClaims' own, and their launches waited behind
// them for over a minute.
import type { ObjectChange } from '../shared/events/cloud-event.js';

export interface PendingChange {
  key: string;
  change: ObjectChange;
  /**
   * The CloudEvent id. It stays the same while the same change is retried (a consumer may drop a
   * duplicate of an id it has seen) and is renewed when a newer change is merged in.
   */
  eventId: string;
  /** When the bridge saw the change (epoch ms); the CloudEvent `time`. */
  observedAt: number;
  /** Bumped on every merge, so an acknowledgement of an older send does not remove a newer change. */
  revision: number;
}

export interface ChangeBufferOptions {
  capacity: number;
  newEventId: () => string;
  now: () => number;
  /**
   * The least time between two provisioning signals checked out (0: no pause). Below half the
   * provisioning window's idle time, so a steady stream of new pods keeps one window open.
   */
  signalIntervalMs?: number;
}

export type OfferOutcome = 'queued' | 'coalesced';

/** The one entry every pod change shares: a signal to the provisioning window, whichever pod sent it. */
export const PROVISIONING_SIGNAL_KEY = 'Pod/provisioning-signal';

export function changeKey(change: ObjectChange): string {
  return change.kind === 'Pod' ? PROVISIONING_SIGNAL_KEY : `${change.kind}/${change.uid}`;
}

/**
 * Merges a change into one still waiting for the same object. A deletion is final; a RESYNC only
 * re-announces, so it never replaces a real change type, while a real change replaces a waiting RESYNC.
 */
export function mergeChanges(waiting: ObjectChange, incoming: ObjectChange): ObjectChange {
  if (waiting.changeType === 'DELETED') return waiting;
  if (incoming.changeType === 'DELETED') return incoming;
  if (incoming.changeType === 'RESYNC') return waiting;
  if (waiting.changeType === 'RESYNC') return incoming;
  // ADDED then MODIFIED is still news of a new object; keep ADDED with the newest resource version.
  return { ...incoming, changeType: waiting.changeType };
}

export class ChangeBuffer {
  readonly #entries = new Map<string, PendingChange>();
  readonly #inFlight = new Set<string>();
  #coalesced = 0;
  #lastSignalAt = Number.NEGATIVE_INFINITY;

  readonly capacity: number;
  readonly #newEventId: () => string;
  readonly #now: () => number;
  readonly #signalIntervalMs: number;

  constructor(options: ChangeBufferOptions) {
    if (!Number.isInteger(options.capacity) || options.capacity < 1) {
      throw new RangeError('capacity must be a positive integer');
    }
    this.capacity = options.capacity;
    this.#newEventId = options.newEventId;
    this.#now = options.now;
    this.#signalIntervalMs = options.signalIntervalMs ?? 0;
  }

  get size(): number {
    return this.#entries.size;
  }

  get inFlight(): number {
    return this.#inFlight.size;
  }

  /** How many changes were merged into a waiting one since the buffer was made. */
  get coalescedTotal(): number {
    return this.#coalesced;
  }

  isFull(): boolean {
    return this.#entries.size >= this.capacity;
  }

  offer(change: ObjectChange): OfferOutcome {
    const key = changeKey(change);
    const waiting = this.#entries.get(key);
    if (waiting === undefined) {
      this.#entries.set(key, {
        key,
        change,
        eventId: this.#newEventId(),
        observedAt: this.#now(),
        revision: 0,
      });
      return 'queued';
    }
    const merged = mergeChanges(waiting.change, change);
    if (merged !== waiting.change) {
      waiting.change = merged;
      waiting.eventId = this.#newEventId();
      waiting.observedAt = this.#now();
      waiting.revision += 1;
    }
    this.#coalesced += 1;
    return 'coalesced';
  }

  /**
   * The oldest waiting change that is not being sent and may go now, marked as being sent; undefined if
   * none. The provisioning signal may go once `signalIntervalMs` has passed since the last one went.
   */
  checkOut(): PendingChange | undefined {
    for (const entry of this.#entries.values()) {
      if (this.#inFlight.has(entry.key)) continue;
      if (entry.key === PROVISIONING_SIGNAL_KEY) {
        if (this.signalDueInMs() > 0) continue;
        this.#lastSignalAt = this.#now();
      }
      this.#inFlight.add(entry.key);
      return { ...entry, change: { ...entry.change } };
    }
    return undefined;
  }

  /**
   * How long until a waiting provisioning signal may go: 0 when it may go now (or none waits to be
   * sent), so the publisher knows when to look again.
   */
  signalDueInMs(): number {
    if (!this.#entries.has(PROVISIONING_SIGNAL_KEY) || this.#inFlight.has(PROVISIONING_SIGNAL_KEY)) return 0;
    return Math.max(0, this.#lastSignalAt + this.#signalIntervalMs - this.#now());
  }

  /** The send of `sent` succeeded: remove it unless a newer change was merged in meanwhile. */
  acknowledge(sent: PendingChange): void {
    this.#inFlight.delete(sent.key);
    const current = this.#entries.get(sent.key);
    if (current !== undefined && current.revision === sent.revision) this.#entries.delete(sent.key);
  }

  /** The send of `sent` failed: it stays where it was and will be checked out again. */
  release(sent: PendingChange): void {
    this.#inFlight.delete(sent.key);
  }

  hasWaiting(): boolean {
    return this.#entries.size > this.#inFlight.size;
  }
}
