// Drains the outbox into the queue. A change leaves the outbox only after the queue accepted it; while
// the queue is failing, sends stop, the outbox keeps every change, and a probe retries with exponential
// backoff until the queue answers again. While idle, a periodic probe keeps "queue reachable" fresh for
// the readiness endpoint.
import type { Logger } from '../shared/observability/logger.js';
import type { BackoffPolicy } from './backoff.js';
import { backoffDelay } from './backoff.js';
import type { ChangeBuffer, PendingChange } from './change-buffer.js';
import { QueuePermissionError, type QueueSink } from './queue-sink.js';

export interface PublisherOptions {
  buffer: ChangeBuffer;
  sink: QueueSink;
  /** The message text for a pending change. */
  render: (pending: PendingChange) => string;
  concurrency: number;
  backoff: BackoffPolicy;
  /** How often an idle publisher checks that the queue still answers. */
  probeIntervalMs: number;
  logger: Logger;
  /** Called after every send or probe outcome, so the owner can resume paused watches. */
  onProgress?: () => void;
  now?: () => number;
  random?: () => number;
}

export interface PublisherStats {
  sent: number;
  sendFailures: number;
  consecutiveFailures: number;
  lastQueueSuccessAt: number | undefined;
  lastQueueError: string | undefined;
}

type State = 'probing' | 'sending' | 'waiting' | 'stopped';

export class QueuePublisher {
  readonly #options: PublisherOptions;
  readonly #now: () => number;
  #state: State = 'stopped';
  #inFlight = 0;
  #retryTimer: NodeJS.Timeout | undefined;
  #probeTimer: NodeJS.Timeout | undefined;
  #signalTimer: NodeJS.Timeout | undefined;
  #idleProbeRunning = false;
  #sent = 0;
  #sendFailures = 0;
  #consecutiveFailures = 0;
  #lastSuccessAt: number | undefined;
  #lastError: string | undefined;
  #progressWaiters = new Set<() => void>();

  constructor(options: PublisherOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  start(): void {
    if (this.#state !== 'stopped') return;
    this.#probe();
    this.#probeTimer = setInterval(() => this.#idleProbe(), this.#options.probeIntervalMs);
    this.#probeTimer.unref();
  }

  /** New changes are waiting; send them if the queue is up. */
  kick(): void {
    if (this.#state === 'sending') this.#pump();
  }

  /** True when the last contact with the queue succeeded and happened within `withinMs`. */
  queueReachable(withinMs: number): boolean {
    return (
      this.#consecutiveFailures === 0 &&
      this.#lastSuccessAt !== undefined &&
      this.#now() - this.#lastSuccessAt <= withinMs
    );
  }

  stats(): PublisherStats {
    return {
      sent: this.#sent,
      sendFailures: this.#sendFailures,
      consecutiveFailures: this.#consecutiveFailures,
      lastQueueSuccessAt: this.#lastSuccessAt,
      lastQueueError: this.#lastError,
    };
  }

  /** Resolves true once the outbox is empty, or false when `timeoutMs` passes first. */
  async flush(timeoutMs: number): Promise<boolean> {
    const deadline = this.#now() + timeoutMs;
    while (this.#options.buffer.size > 0) {
      const remaining = deadline - this.#now();
      if (remaining <= 0 || this.#state === 'stopped') return false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.min(remaining, 1_000));
        function done(): void {
          clearTimeout(timer);
          resolve();
        }
        this.#progressWaiters.add(done);
      });
    }
    return true;
  }

  /** Stops sending; changes still in the outbox stay there. In-flight sends finish on their own. */
  stop(): void {
    this.#state = 'stopped';
    clearTimeout(this.#retryTimer);
    clearInterval(this.#probeTimer);
    clearTimeout(this.#signalTimer);
    this.#notifyProgress();
  }

  #pump(): void {
    const { buffer, concurrency } = this.#options;
    while (this.#state === 'sending' && this.#inFlight < concurrency) {
      const pending = buffer.checkOut();
      if (pending === undefined) break;
      this.#send(pending);
    }
    // A provisioning signal held back by its interval: look again when it may go.
    const dueInMs = buffer.signalDueInMs();
    if (this.#state === 'sending' && dueInMs > 0 && this.#signalTimer === undefined) {
      this.#signalTimer = setTimeout(() => {
        this.#signalTimer = undefined;
        this.#pump();
      }, dueInMs);
      this.#signalTimer.unref();
    }
  }

  #send(pending: PendingChange): void {
    const { buffer, sink, render, logger } = this.#options;
    this.#inFlight += 1;
    let text: string;
    try {
      text = render(pending);
    } catch (error) {
      // Rendering is pure and cannot fail for a valid change; if it does, keep the change and say so.
      this.#inFlight -= 1;
      buffer.release(pending);
      logger.error('could not render a queue message', { change: pending.change, error });
      return;
    }
    sink.send(text).then(
      () => {
        this.#inFlight -= 1;
        buffer.acknowledge(pending);
        this.#sent += 1;
        this.#succeeded();
        logger.debug('sent change', { change: pending.change, eventId: pending.eventId });
        this.#pump();
        this.#notifyProgress();
      },
      (error: unknown) => {
        this.#inFlight -= 1;
        buffer.release(pending);
        this.#sendFailures += 1;
        this.#failed(error, 'send');
        this.#notifyProgress();
      },
    );
  }

  #probe(): void {
    this.#state = 'probing';
    this.#options.sink.probe().then(
      () => {
        if (this.#state === 'stopped') return;
        if (this.#consecutiveFailures > 0) {
          this.#options.logger.info('queue reachable again; sending the outbox', {
            waiting: this.#options.buffer.size,
            failedAttempts: this.#consecutiveFailures,
          });
        }
        this.#succeeded();
        this.#state = 'sending';
        this.#pump();
        this.#notifyProgress();
      },
      (error: unknown) => {
        if (this.#state === 'stopped') return;
        this.#failed(error, 'probe');
        this.#notifyProgress();
      },
    );
  }

  #idleProbe(): void {
    if (this.#state !== 'sending' || this.#inFlight > 0 || this.#idleProbeRunning) return;
    const last = this.#lastSuccessAt ?? 0;
    if (this.#now() - last < this.#options.probeIntervalMs) return;
    this.#idleProbeRunning = true;
    this.#options.sink
      .probe()
      .then(
        () => this.#succeeded(),
        (error: unknown) => {
          if (this.#state === 'sending') this.#failed(error, 'probe');
        },
      )
      .finally(() => {
        this.#idleProbeRunning = false;
      });
  }

  #succeeded(): void {
    this.#consecutiveFailures = 0;
    this.#lastSuccessAt = this.#now();
    this.#lastError = undefined;
  }

  /** Any failure stops sending and schedules one probe; further failures in the meantime only count. */
  #failed(error: unknown, operation: 'send' | 'probe'): void {
    this.#lastError = error instanceof Error ? error.message : String(error);
    if (this.#state === 'waiting' || this.#state === 'stopped') return;
    this.#consecutiveFailures += 1;
    const delayMs = backoffDelay(this.#consecutiveFailures, this.#options.backoff, this.#options.random);
    const fields = {
      operation,
      attempt: this.#consecutiveFailures,
      retryInMs: delayMs,
      waiting: this.#options.buffer.size,
    };
    if (error instanceof QueuePermissionError) {
      // Not an outage: the identity lacks a role. The line says what to grant; retries continue so the
      // bridge recovers without a restart once it is granted.
      this.#options.logger.error(error.message, { ...fields, missingDataAction: error.dataAction });
    } else {
      this.#options.logger.warn('queue unreachable; keeping changes and retrying', {
        ...fields,
        error: this.#lastError,
      });
    }
    this.#state = 'waiting';
    this.#retryTimer = setTimeout(() => {
      if (this.#state === 'waiting') this.#probe();
    }, delayMs);
  }

  #notifyProgress(): void {
    this.#options.onProgress?.();
    const waiters = [...this.#progressWaiters];
    this.#progressWaiters.clear();
    for (const waiter of waiters) waiter();
  }
}
