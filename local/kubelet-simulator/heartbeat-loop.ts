// One timer for the heartbeats of every simulated node. Each node has its own due times (so renewals
// spread out the way registrations did instead of bursting together); each tick handles the nodes that
// are due with a bounded number of requests in flight.
//
// As kubelet does when node Leases exist: the Lease is renewed every interval (default 10 s), and the
// Node's status is reported only every statusReportIntervalMs (default 5 min), because the node
// lifecycle controller treats either as a sign of life. A loop without renewLease reports status only:
// the Leases are then renewed by a loop of their own in another process (lease-renewer.ts).
import type { Logger } from '../../shared/observability/logger.js';

/** kubelet's default Lease renewal (a quarter of its 40 s lease), in wall time at any speed. */
export const KUBELET_HEARTBEAT_MS = 10_000;

export interface HeartbeatLoopOptions {
  leaseIntervalMs: number;
  statusReportIntervalMs: number;
  concurrency: number;
  /** Absent: this loop renews no Lease (another process does). */
  renewLease?: (nodeName: string) => Promise<void>;
  reportStatus(nodeName: string): Promise<void>;
  log: Logger;
  now?: () => number;
}

interface Schedule {
  leaseDueAt: number;
  statusDueAt: number;
}

/**
 * The next due time one period after the previous one, so the tick granularity does not stretch every
 * period; after a stall (a slow API server) it restarts from now rather than firing a burst to catch up.
 */
function nextDue(previous: number, period: number, now: number): number {
  const next = previous + period;
  return next > now ? next : now + period;
}

type Beat = { nodeName: string; kind: 'lease' | 'status' };

/** Failed beats are retried sooner than a full interval, but not in a tight loop. */
const retryDelayMs = 1_000;

export class HeartbeatLoop {
  readonly #options: HeartbeatLoopOptions;
  readonly #now: () => number;
  readonly #schedules = new Map<string, Schedule>();
  readonly #tickMs: number;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;

  constructor(options: HeartbeatLoopOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#tickMs = Math.max(50, Math.min(1_000, Math.floor(options.leaseIntervalMs / 4)));
  }

  /** Starts beating for a node: its Lease at once (kubelet creates it on start), its status later. */
  add(nodeName: string, lastStatusReportAt: number): void {
    if (this.#stopped) return;
    this.#schedules.set(nodeName, {
      leaseDueAt: this.#options.renewLease ? this.#now() : Number.POSITIVE_INFINITY,
      statusDueAt: lastStatusReportAt + this.#options.statusReportIntervalMs,
    });
    this.#arm();
  }

  remove(nodeName: string): void {
    this.#schedules.delete(nodeName);
  }

  size(): number {
    return this.#schedules.size;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }

  #arm(): void {
    if (this.#stopped || this.#timer !== undefined || this.#running !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#running = this.#tick().finally(() => {
        this.#running = undefined;
        if (this.#schedules.size > 0) this.#arm();
      });
    }, this.#tickMs);
  }

  async #tick(): Promise<void> {
    const now = this.#now();
    const due: Beat[] = [];
    for (const [nodeName, schedule] of this.#schedules) {
      if (schedule.leaseDueAt <= now) {
        schedule.leaseDueAt = nextDue(schedule.leaseDueAt, this.#options.leaseIntervalMs, now);
        due.push({ nodeName, kind: 'lease' });
      }
      if (schedule.statusDueAt <= now) {
        schedule.statusDueAt = nextDue(schedule.statusDueAt, this.#options.statusReportIntervalMs, now);
        due.push({ nodeName, kind: 'status' });
      }
    }
    let next = 0;
    const worker = async (): Promise<void> => {
      while (!this.#stopped) {
        const beat = due[next++];
        if (beat === undefined) return;
        await this.#beat(beat);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.#options.concurrency, due.length) }, worker));
  }

  async #beat({ nodeName, kind }: Beat): Promise<void> {
    try {
      if (kind === 'lease') await this.#options.renewLease?.(nodeName);
      else await this.#options.reportStatus(nodeName);
    } catch (error) {
      this.#options.log.warn('heartbeat failed; retrying', { node: nodeName, kind, error });
      const schedule = this.#schedules.get(nodeName);
      if (!schedule) return;
      const retryAt = this.#now() + retryDelayMs;
      if (kind === 'lease') schedule.leaseDueAt = Math.min(schedule.leaseDueAt, retryAt);
      else schedule.statusDueAt = Math.min(schedule.statusDueAt, retryAt);
    }
  }
}
