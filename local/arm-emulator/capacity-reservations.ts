// Capacity Reservation Groups as Compute models them: a group holds reservations, each of one VM size in
// one zone (or regional) with a reserved count; a VM whose PUT names the group is matched to the
// reservation of its size and zone, and the group's instance view lists, per reservation, the VMs
// allocated to it. Allocation is derived from the VMs that exist, so deleting a VM frees its slot and
// nothing has to be kept in step. As Azure does, a VM beyond the reserved count still succeeds
// ("overallocation": billed as on-demand, outside the reservation's SLA); a group that does not exist, or
// has no reservation of the VM's size and zone, refuses the PUT.
import { ArmError, resourceNotFound } from './errors.js';
import { isObject } from './vm-spec.js';
import type { StoredVm } from './vm-store.js';

/** A reservation as the test or the admin API defines it. */
export interface CapacityReservationInput {
  name: string;
  vmSize: string;
  /** The zone number ("1"); absent for a regional reservation. */
  zone?: string;
  capacity: number;
}

export interface CapacityReservationGroupInput {
  subscriptionId: string;
  resourceGroup: string;
  name: string;
  location: string;
  reservations: readonly CapacityReservationInput[];
}

interface StoredGroup extends CapacityReservationGroupInput {
  id: string;
}

const groupType = 'Microsoft.Compute/capacityReservationGroups';

const text = (value: unknown): value is string => typeof value === 'string' && value.trim() !== '';

/** The admin API's body for a group, checked field by field; a string names what is wrong. */
export function parseCapacityReservationGroupInput(body: unknown): CapacityReservationGroupInput | string {
  if (!isObject(body)) return 'the body must be a JSON object';
  for (const field of ['subscriptionId', 'resourceGroup', 'name', 'location'] as const) {
    if (!text(body[field])) return `${field} must be a non-empty string`;
  }
  if (!Array.isArray(body.reservations)) return 'reservations must be an array';
  const reservations: CapacityReservationInput[] = [];
  for (const [index, entry] of (body.reservations as unknown[]).entries()) {
    if (!isObject(entry) || !text(entry.name) || !text(entry.vmSize))
      return `reservations[${index}] needs a name and a vmSize`;
    if (typeof entry.capacity !== 'number' || !Number.isInteger(entry.capacity) || entry.capacity < 0)
      return `reservations[${index}].capacity must be a whole number ≥ 0`;
    if (entry.zone !== undefined && !text(entry.zone)) return `reservations[${index}].zone must be a string`;
    reservations.push({
      name: entry.name,
      vmSize: entry.vmSize,
      capacity: entry.capacity,
      ...(entry.zone !== undefined ? { zone: entry.zone } : {}),
    });
  }
  return {
    subscriptionId: body.subscriptionId as string,
    resourceGroup: body.resourceGroup as string,
    name: body.name as string,
    location: body.location as string,
    reservations,
  };
}

export function capacityReservationGroupId(
  group: Pick<CapacityReservationGroupInput, 'subscriptionId' | 'resourceGroup' | 'name'>,
): string {
  return `/subscriptions/${group.subscriptionId}/resourceGroups/${group.resourceGroup}/providers/${groupType}/${group.name}`;
}

/** The group a VM's PUT named (properties.capacityReservation.capacityReservationGroup.id), if any. */
export function capacityReservationGroupOfVm(properties: unknown): string | undefined {
  if (!isObject(properties) || !isObject(properties.capacityReservation)) return undefined;
  const group = properties.capacityReservation.capacityReservationGroup;
  return isObject(group) && typeof group.id === 'string' ? group.id : undefined;
}

function sameId(a: string, b: string): boolean {
  // ARM IDs are case-insensitive; the docs' own example omits the leading slash.
  return a.replace(/^\/?/, '/').toLowerCase() === b.replace(/^\/?/, '/').toLowerCase();
}

function matches(reservation: CapacityReservationInput, vmSize: string, zones: readonly string[]): boolean {
  return (
    reservation.vmSize.toLowerCase() === vmSize.toLowerCase() &&
    (reservation.zone === undefined
      ? zones.length === 0
      : zones.length === 1 && zones[0] === reservation.zone)
  );
}

export class CapacityReservationStore {
  private readonly groups = new Map<string, StoredGroup>();

  /** Creates or replaces a group with its reservations (the admin API's and tests' set-up). */
  define(input: CapacityReservationGroupInput): void {
    for (const reservation of input.reservations) {
      if (!Number.isInteger(reservation.capacity) || reservation.capacity < 0)
        throw new Error(`reservation ${reservation.name}: capacity must be a whole number ≥ 0`);
    }
    const id = capacityReservationGroupId(input);
    this.groups.set(id.toLowerCase(), { ...input, id, reservations: [...input.reservations] });
  }

  clear(): void {
    this.groups.clear();
  }

  private find(id: string): StoredGroup | undefined {
    return [...this.groups.values()].find((g) => sameId(g.id, id));
  }

  /**
   * The check a VM PUT naming a group passes before anything is created: the group exists in the VM's
   * location and holds a reservation of the VM's size in the VM's zone (regional for a zone-less VM).
   * Azure's exact error codes for these refusals were not found in its public documentation; the codes
   * here are ARM's generic ones (see docs/capacity-reservations.md), with messages that name the group.
   */
  checkVmPut(groupId: string, vm: { location: string; vmSize: string; zones: readonly string[] }): void {
    const group = this.find(groupId);
    if (!group) {
      const name = groupId.split('/').pop() ?? groupId;
      const resourceGroup = /\/resourceGroups\/([^/]+)/i.exec(groupId)?.[1] ?? '';
      throw resourceNotFound(groupType, name, resourceGroup);
    }
    if (group.location.toLowerCase() !== vm.location.toLowerCase()) {
      throw new ArmError(
        400,
        'InvalidParameter',
        `The capacity reservation group '${group.id}' is in location '${group.location}', not in the virtual machine's location '${vm.location}'.`,
        'capacityReservation.capacityReservationGroup.id',
      );
    }
    if (!group.reservations.some((r) => matches(r, vm.vmSize, vm.zones))) {
      const where = vm.zones.length > 0 ? `zone ${vm.zones.join(',')}` : 'no zone';
      throw new ArmError(
        400,
        'InvalidParameter',
        `The capacity reservation group '${group.id}' has no capacity reservation for VM size '${vm.vmSize}' in ${where}.`,
        'capacityReservation.capacityReservationGroup.id',
      );
    }
  }

  /**
   * GET of a group: its reservations and associated VMs, and with `$expand=instanceView` each
   * reservation's utilization (the VMs allocated to it, in the order they were created). A VM being
   * deleted still holds its slot until it is gone, as in Azure.
   */
  renderGroup(
    address: { subscriptionId: string; resourceGroup: string; name: string },
    vms: readonly StoredVm[],
    instanceView: boolean,
  ): unknown {
    const group = this.find(capacityReservationGroupId(address));
    if (!group) throw resourceNotFound(groupType, address.name, address.resourceGroup);
    const associated = vms
      .filter((vm) => {
        const named = capacityReservationGroupOfVm(vm.spec.properties);
        return named !== undefined && sameId(named, group.id);
      })
      .sort((a, b) => a.timeCreated.localeCompare(b.timeCreated) || a.name.localeCompare(b.name));
    const reservationId = (name: string): string => `${group.id}/capacityReservations/${name}`;
    const zones = [...new Set(group.reservations.flatMap((r) => (r.zone ? [r.zone] : [])))].sort();
    return {
      name: group.name,
      id: group.id,
      type: groupType,
      location: group.location,
      ...(zones.length > 0 ? { zones } : {}),
      properties: {
        capacityReservations: group.reservations.map((r) => ({ id: reservationId(r.name) })),
        virtualMachinesAssociated: associated.map((vm) => ({ id: vm.id })),
        ...(instanceView
          ? {
              instanceView: {
                capacityReservations: group.reservations.map((r) => ({
                  name: r.name,
                  utilizationInfo: {
                    currentCapacity: r.capacity,
                    virtualMachinesAllocated: associated
                      .filter((vm) => matches(r, vm.spec.vmSize, vm.spec.zones))
                      .map((vm) => ({ id: vm.id })),
                  },
                  statuses: [
                    {
                      code: 'ProvisioningState/succeeded',
                      level: 'Info',
                      displayStatus: 'Provisioning succeeded',
                    },
                  ],
                })),
              },
            }
          : {}),
      },
    };
  }

  /** The reservations of a group as `capacityReservations` lists them (sku with the reserved count, zones). */
  listReservations(address: { subscriptionId: string; resourceGroup: string; name: string }): unknown[] {
    const group = this.find(capacityReservationGroupId(address));
    if (!group) throw resourceNotFound(groupType, address.name, address.resourceGroup);
    return group.reservations.map((r) => ({
      name: r.name,
      id: `${group.id}/capacityReservations/${r.name}`,
      type: `${groupType}/capacityReservations`,
      location: group.location,
      sku: { name: r.vmSize, capacity: r.capacity },
      ...(r.zone ? { zones: [r.zone] } : {}),
      properties: { provisioningState: 'Succeeded' },
    }));
  }
}
