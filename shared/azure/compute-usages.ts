// The region's vCPU quotas and their usage (Compute's usages API), read through a short cache: a burst of
// launches shares one read, and a quota refusal forgets the cache so the next launch reads afresh. A read
// that fails (throttled, refused, unreachable) answers nothing rather than failing the launch: quota is
// then learned from the PUT, as it was before this read existed.
import type { ComputeManagementClient } from '@azure/arm-compute';
import type { QuotaUsage } from '../cloudprovider/azure/decisions/quota-headroom.js';

/** A read of the usages: the quotas, and when the read was sent (what it can already count). */
export interface UsagesRead {
  usages: QuotaUsage[];
  /** Epoch milliseconds at which the request left: VMs PUT before then are in `usages`. */
  sentAt: number;
}

/** How long a good read still answers while the reads after it fail. */
const STALE_LIMIT_MS = 5 * 60_000;

export class ComputeUsages {
  private cached: UsagesRead | undefined;
  /** When the last read was sent, good or not: a failed read is not repeated before the TTL either. */
  private lastAttemptAt = -Infinity;
  private inFlight: Promise<UsagesRead | undefined> | undefined;
  private reads = 0;

  constructor(
    private readonly client: ComputeManagementClient,
    private readonly location: string,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {}

  /** The quotas as last read, read again when older than the TTL; undefined when no read succeeded. */
  async read(): Promise<UsagesRead | undefined> {
    if (this.now() - this.lastAttemptAt < this.ttlMs) return this.usable();
    this.inFlight ??= this.fetch().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  /** The next read goes to Azure (a quota refusal said the last one was wrong). */
  invalidate(): void {
    this.cached = undefined;
    this.lastAttemptAt = -Infinity;
  }

  /** How many reads were sent, for the bench's request figures. */
  get readCount(): number {
    return this.reads;
  }

  private usable(): UsagesRead | undefined {
    return this.cached && this.now() - this.cached.sentAt < STALE_LIMIT_MS ? this.cached : undefined;
  }

  private async fetch(): Promise<UsagesRead | undefined> {
    const sentAt = this.now();
    this.lastAttemptAt = sentAt;
    this.reads++;
    try {
      const usages: QuotaUsage[] = [];
      for await (const usage of this.client.usage.list(this.location)) {
        if (usage.name.value === undefined) continue;
        usages.push({ name: usage.name.value, currentValue: usage.currentValue, limit: usage.limit });
      }
      this.cached = { usages, sentAt };
      return this.cached;
    } catch (error) {
      this.onError(error);
      // A recent good read still answers; an old one is no better than none.
      return this.usable();
    }
  }
}
