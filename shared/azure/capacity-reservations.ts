// The Capacity Reservation Groups the app is told about (CAPACITY_RESERVATION_GROUP_IDS), read from ARM:
// each group's reservations (VM size, zone, reserved count) and its instance view (the VMs allocated to
// each). Cached for a short TTL, as the SKU catalog is, since every launch reads it; what this cluster
// launched since the last read is counted from its NodeClaims (cloudprovider/azure/decisions/capacity-reservations.ts), so a
// stale read never hands out a slot twice. A group that cannot be read offers nothing until it can, and
// says so in the log.
import type { ComputeManagementClient } from '@azure/arm-compute';
import type { CapacityReservationGroupRef } from '../cloudprovider/azure/decisions/capacity-reservation-groups.js';
import type { CapacityReservationRecord } from '../cloudprovider/azure/decisions/capacity-reservations.js';

/** How long one read of the groups is used: short, so a freed slot is offered again within a sweep. */
export const CAPACITY_RESERVATION_CACHE_MS = 15_000;

const lastSegment = (id: string | undefined): string => id?.split('/').pop() ?? '';

export class CapacityReservationGroups {
  private cached: { records: CapacityReservationRecord[]; fetchedAt: number } | undefined;
  private inFlight: Promise<CapacityReservationRecord[]> | undefined;

  constructor(
    private readonly client: ComputeManagementClient,
    readonly groups: readonly CapacityReservationGroupRef[],
    private readonly onReadError: (group: CapacityReservationGroupRef, error: unknown) => void,
    private readonly now: () => number = Date.now,
    private readonly ttlMs = CAPACITY_RESERVATION_CACHE_MS,
  ) {}

  /** Every reservation of every group that could be read. */
  async records(): Promise<CapacityReservationRecord[]> {
    if (this.groups.length === 0) return [];
    if (this.cached && this.now() - this.cached.fetchedAt < this.ttlMs) return this.cached.records;
    this.inFlight ??= this.fetch().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  /** Forgets the cached read (after a launch into a reservation failed, the next one reads afresh). */
  invalidate(): void {
    this.cached = undefined;
  }

  private async fetch(): Promise<CapacityReservationRecord[]> {
    const perGroup = await Promise.all(
      this.groups.map((group) =>
        this.readGroup(group).catch((error: unknown) => {
          this.onReadError(group, error);
          return [];
        }),
      ),
    );
    const records = perGroup.flat();
    this.cached = { records, fetchedAt: this.now() };
    return records;
  }

  private async readGroup(group: CapacityReservationGroupRef): Promise<CapacityReservationRecord[]> {
    const [view, reservations] = await Promise.all([
      this.client.capacityReservationGroups.get(group.resourceGroup, group.name, { expand: 'instanceView' }),
      (async () => {
        const listed = [];
        for await (const reservation of this.client.capacityReservations.listByCapacityReservationGroup(
          group.resourceGroup,
          group.name,
        ))
          listed.push(reservation);
        return listed;
      })(),
    ]);
    const utilization = new Map(
      (view.instanceView?.capacityReservations ?? []).map((r) => [
        (r.name ?? '').toLowerCase(),
        (r.utilizationInfo?.virtualMachinesAllocated ?? []).map((vm) => lastSegment(vm.id)),
      ]),
    );
    return reservations.flatMap((reservation) => {
      const name = reservation.name ?? '';
      const vmSize = reservation.sku.name ?? '';
      if (!name || !vmSize) return [];
      const zoneNumber = reservation.zones?.[0];
      return [
        {
          groupId: group.id,
          groupName: group.name,
          name,
          vmSize,
          ...(zoneNumber !== undefined ? { zoneNumber } : {}),
          capacity: reservation.sku.capacity ?? 0,
          allocatedVmNames: utilization.get(name.toLowerCase()) ?? [],
          ...(reservation.provisioningState !== undefined
            ? { provisioningState: reservation.provisioningState }
            : {}),
        },
      ];
    });
  }
}
