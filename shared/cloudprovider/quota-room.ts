// What the vCPU quotas leave for new VMs, as blocks on offerings, before any PUT. The usages API is read
// on a cadence (and afresh after a quota refusal); between reads the launches this process has chosen are
// counted in flight, so a burst cannot overrun a quota between two reads: a launch's cores are held from
// its plan until a read sent after its PUT counts them, or until its PUT failed. Launches planned on other
// instances of the app are not seen here; the refusal they would meet is still remembered by the failure
// memory and makes the next read come at once.
import type { ComputeUsages, UsagesRead } from '../azure/compute-usages.js';
import {
  quotaShortfalls,
  type InFlightCores,
  type QuotaShortfall,
} from './azure/decisions/quota-headroom.js';
import { blocks } from '../decisions/offering-blocks.js';
import type { Offering } from '../decisions/offerings.js';

/** A held launch that never reached its PUT (its activity died) is dropped after this. */
const HOLD_LIMIT_MS = 10 * 60_000;

interface Hold extends InFlightCores {
  plannedAt: number;
  /** When Azure accepted the PUT: a usage read sent after this counts the VM. */
  putAt?: number;
}

export class QuotaRoom {
  private readonly holds = new Map<string, Hold>();
  private latest: UsagesRead | undefined;

  constructor(
    private readonly usages: Pick<ComputeUsages, 'read' | 'invalidate'>,
    private readonly now: () => number,
  ) {}

  /** Reads the usages (through their cache) for the next `shortfalls`. */
  async refresh(): Promise<void> {
    this.latest = await this.usages.read();
  }

  /**
   * The quotas too short for some of `offerings` as last refreshed, counting the held launches except
   * `exceptVmName`'s own (a launch planned again must not count itself); only those that rule out at
   * least one offering. Synchronous, so a launch checks and holds with no other launch in between.
   */
  shortfalls(offerings: readonly Offering[], exceptVmName?: string): QuotaShortfall[] {
    const read = this.latest;
    if (!read) return [];
    const now = this.now();
    const inFlight: InFlightCores[] = [];
    for (const [vmName, hold] of this.holds) {
      const counted = hold.putAt !== undefined && hold.putAt < read.sentAt;
      if (counted || now - hold.plannedAt > HOLD_LIMIT_MS) {
        this.holds.delete(vmName);
        continue;
      }
      if (vmName !== exceptVmName) inFlight.push(hold);
    }
    return quotaShortfalls(read.usages, inFlight).filter((s) =>
      offerings.some((o) => o.reservationId === undefined && blocks(s.block, o)),
    );
  }

  /** Holds the cores of the offering `vmName` is about to be created on. */
  hold(vmName: string, offering: Offering): void {
    if (offering.reservationId !== undefined) return;
    this.holds.set(vmName, {
      skuFamily: offering.skuFamily,
      cpu: offering.cpu,
      capacityType: offering.capacityType,
      plannedAt: this.now(),
    });
  }

  /** Azure accepted `vmName`'s PUT: the next read sent from now on counts it. */
  created(vmName: string): void {
    const hold = this.holds.get(vmName);
    if (hold) hold.putAt = this.now();
  }

  /** `vmName`'s PUT made no VM (refused, or another delivery's VM was there): its cores are free again. */
  release(vmName: string): void {
    this.holds.delete(vmName);
  }

  /** A quota refusal: what was read is wrong, so the next launch reads again. */
  refused(): void {
    this.usages.invalidate();
  }
}
