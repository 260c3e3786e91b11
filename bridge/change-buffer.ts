// The bridge's outbox: changes waiting to be sent to the queue, at most one per object. A second change
// for an object that is still waiting is merged into the first (handlers are level-triggered, so the
// newest resource version says everything the older one did). The buffer never refuses a change; its
// capacity is a high-water mark at which the bridge stops reading watches until it drains (see
// bridge/watcher.ts), and because entries are per object it can never hold more entries than there are
// watched objects.
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
}

export type OfferOutcome = 'queued' | 'coalesced';

export function changeKey(change: ObjectChange): string {
  return `${change.kind}/${change.uid}`;
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

  readonly capacity: number;
  readonly #newEventId: () => string;
  readonly #now: () => number;

  constructor(options: ChangeBufferOptions) {
    if (!Number.isInteger(options.capacity) || options.capacity < 1) {
      throw new RangeError('capacity must be a positive integer');
    }
    this.capacity = options.capacity;
    this.#newEventId = options.newEventId;
    this.#now = options.now;
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

  /** The oldest waiting change that is not being sent, marked as being sent; undefined if none. */
  checkOut(): PendingChange | undefined {
    for (const entry of this.#entries.values()) {
      if (this.#inFlight.has(entry.key)) continue;
      this.#inFlight.add(entry.key);
      return { ...entry, change: { ...entry.change } };
    }
    return undefined;
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
