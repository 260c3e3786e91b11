// Reserved offerings from Capacity Reservation Groups: each reservation (one VM size in one zone, or
// regional, with a reserved count) becomes an offering of capacity type `reserved` beside the size's
// on-demand one, with an integer availability, as upstream's ReservedCapacity models offerings. Pure:
// the adapter's records and the cluster's NodeClaims in, offerings out.
import type { NodeClaim } from '../../../models/index.js';
import { WellKnown } from '../../../models/karpenter.js';
import type { Offering } from '../../../decisions/offerings.js';
import { vmNameFor } from './vm-spec.js';
import { reservationIdOf } from './capacity-reservation-groups.js';
import {
  RESERVATION_CLAIMED_AT_ANNOTATION,
  RESERVATION_COMMITTED_ANNOTATION,
} from '../../../decisions/launch-annotations.js';

/** One capacity reservation as its group's instance view reports it. */
export interface CapacityReservationRecord {
  groupId: string;
  groupName: string;
  name: string;
  vmSize: string;
  /** The bare zone number ("1"); undefined for a regional reservation. */
  zoneNumber?: string;
  /** The reserved count (sku.capacity). */
  capacity: number;
  /** Names of the VMs allocated to it (instanceView.utilizationInfo.virtualMachinesAllocated). */
  allocatedVmNames: readonly string[];
  /** Azure's provisioningState; only a Succeeded reservation holds capacity. */
  provisioningState?: string;
}

/**
 * Availability: the reserved count less the VMs in the reservation, where "in" is every VM the instance
 * view lists plus the VMs of this cluster's NodeClaims that launched (or are launching) into it and are
 * not listed yet, counted once each. So availability drops the moment a launch claims a slot, on every
 * instance of the app, without waiting for Azure's instance view; and a VM deleted but still listed
 * keeps its slot until Azure drops it. Never below 0: Azure lets a group run over its count (those VMs
 * are billed as on-demand, without the reservation's SLA), and this app never launches into a full one.
 */
export function reservationAvailability(
  record: CapacityReservationRecord,
  launchingVmNames: ReadonlySet<string>,
): number {
  const inUse = new Set(record.allocatedVmNames.map((n) => n.toLowerCase()));
  for (const name of launchingVmNames) inUse.add(name.toLowerCase());
  return Math.max(0, record.capacity - inUse.size);
}

/**
 * The reserved offerings of the catalog's sizes: a copy of the size's on-demand offering in the same
 * zone (regional for a regional reservation) with capacity type `reserved`, the reservation's ID and
 * group, and its availability. A reservation whose size or zone the catalog does not offer (a size AKS
 * cannot run, a restricted zone) or that Azure has not finished creating gives none.
 * `launchingVmNamesOf` names the VMs this cluster's NodeClaims have in the reservation (its label).
 */
export function reservedOfferings(
  records: readonly CapacityReservationRecord[],
  catalog: readonly Offering[],
  launchingVmNamesOf: (reservationId: string) => ReadonlySet<string>,
): Offering[] {
  const offerings: Offering[] = [];
  for (const record of records) {
    if (record.provisioningState !== undefined && record.provisioningState !== 'Succeeded') continue;
    const base = catalog.find(
      (o) =>
        o.capacityType === 'on-demand' &&
        o.vmSize.toLowerCase() === record.vmSize.toLowerCase() &&
        o.zoneNumber === record.zoneNumber,
    );
    if (!base) continue;
    const reservationId = reservationIdOf(record.groupName, record.name);
    offerings.push({
      ...base,
      capacityType: 'reserved',
      reservationId,
      reservationGroupId: record.groupId,
      reservedAvailable: reservationAvailability(record, launchingVmNamesOf(reservationId)),
    });
  }
  return offerings;
}

/** A NodeClaim that launched, or is launching, into a reservation (it carries the reservation's label). */
// The claim's annotations are the lifecycle's (launch writes them); exported here too for their readers.
export { RESERVATION_CLAIMED_AT_ANNOTATION, RESERVATION_COMMITTED_ANNOTATION };

export interface ReservationClaimant {
  nodeClaimName: string;
  vmName: string;
  creationTimestamp: string;
  /** RESERVATION_CLAIMED_AT_ANNOTATION; absent on a claim written before it existed. */
  claimedAt?: string;
  /** Whether its VM PUT was already accepted (status.providerID set): it holds its slot whatever comes. */
  launched: boolean;
  /** RESERVATION_COMMITTED_ANNOTATION names this reservation: its launch is sending, or about to send, its PUT. */
  committed?: boolean;
  /** The NodeClaim's metadata.resourceVersion as listed (the order of its last write among NodeClaims). */
  resourceVersion?: string;
}

/** The NodeClaims that carry a reservation's label, as claimants of its slots. */
export function reservationClaimants(
  nodeClaims: readonly NodeClaim[],
  reservationId: string,
): ReservationClaimant[] {
  return nodeClaims
    .filter((nc) => nc.metadata.labels?.[WellKnown.capacityReservationIdLabel] === reservationId)
    .map((nc) => ({
      nodeClaimName: nc.metadata.name,
      vmName: vmNameFor(nc.metadata.name),
      creationTimestamp: nc.metadata.creationTimestamp ?? '',
      ...(nc.metadata.annotations?.[RESERVATION_CLAIMED_AT_ANNOTATION] !== undefined && {
        claimedAt: nc.metadata.annotations[RESERVATION_CLAIMED_AT_ANNOTATION],
      }),
      launched: Boolean(nc.status?.providerID),
      committed: nc.metadata.annotations?.[RESERVATION_COMMITTED_ANNOTATION] === reservationId,
      ...(nc.metadata.resourceVersion !== undefined && { resourceVersion: nc.metadata.resourceVersion }),
    }));
}

/**
 * After a launch labelled its NodeClaim with a reservation, and before its VM PUT: does it hold one of
 * the reservation's free slots? Several launches (on several instances of the app) may have read the same
 * availability; each one lists the reservation's claimants again and they agree on who goes in: those
 * already launched first, then in the order they claimed, then the oldest NodeClaims, then by name. The
 * others take another offering, so a reservation is not overallocated by this app's concurrent launches
 * (Azure would accept those VMs, outside the reservation's SLA and at the on-demand price).
 *
 * The claim order matters: a launch lists after its own claim is written, so it sees every claim made
 * before its own and yields to them. Ordered by creation time and name instead, a claimant that listed
 * later could sort ahead of one that had already decided and was sending its PUT, and both went in.
 */
/** A claim's time as a sortable string; a claim without one sorts first, as it was written earliest. */
function claimOrder(claimant: ReservationClaimant): string {
  const at = Date.parse(claimant.claimedAt ?? '');
  return Number.isFinite(at) ? new Date(at).toISOString() : '';
}

export function holdsReservationSeat(
  record: Pick<CapacityReservationRecord, 'capacity' | 'allocatedVmNames'>,
  claimants: readonly ReservationClaimant[],
  self: string,
): boolean {
  const allocated = new Set(record.allocatedVmNames.map((n) => n.toLowerCase()));
  const me = claimants.find((c) => c.nodeClaimName === self);
  if (me && allocated.has(me.vmName.toLowerCase())) return true;
  const waiting = claimants
    .filter((c) => !allocated.has(c.vmName.toLowerCase()))
    .sort(
      (a, b) =>
        Number(b.launched) - Number(a.launched) ||
        claimOrder(a).localeCompare(claimOrder(b)) ||
        a.creationTimestamp.localeCompare(b.creationTimestamp) ||
        (a.nodeClaimName < b.nodeClaimName ? -1 : a.nodeClaimName > b.nodeClaimName ? 1 : 0),
    );
  const free = record.capacity - allocated.size;
  const position = waiting.findIndex((c) => c.nodeClaimName === self);
  return position >= 0 && position < free;
}

/**
 * Kubernetes resource versions of one resource, compared as the integers they are (KEP-5504, stable in
 * Kubernetes 1.35, documents what etcd-backed API servers have always served): negative when `a` was
 * written before `b`. Undefined when either is not a positive decimal integer.
 */
export function compareResourceVersions(a: string, b: string): number | undefined {
  const valid = /^[1-9][0-9]*$/;
  if (!valid.test(a) || !valid.test(b)) return undefined;
  return a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The second check, after a launch that held a seat (holdsReservationSeat) wrote its commitment and listed
 * the claimants again: does it keep the seat? The claim order alone cannot keep concurrent launches apart,
 * since a claim stamped earlier can land after a later claimant listed, and then both believe they come
 * first. The commitments are ordered by the API server itself: a committed claimant whose resource
 * version is below this launch's commitment wrote its commitment before, and counts against the slots,
 * as does any claimant already launched or allocated. One that committed after this launch lists after
 * its own commitment and so sees this one, with a lower version: of any capacity + 1 commitments, the last
 * one counts all the others and yields. Only the earliest commitments go in, so two launches never both
 * yield a slot one of them could have had. A claimant whose version cannot be compared counts, to be safe.
 */
export function holdsCommittedSeat(
  record: Pick<CapacityReservationRecord, 'capacity' | 'allocatedVmNames'>,
  claimants: readonly ReservationClaimant[],
  self: string,
  ownCommitVersion: string,
): boolean {
  const taken = new Set(record.allocatedVmNames.map((n) => n.toLowerCase()));
  const me = claimants.find((c) => c.nodeClaimName === self);
  if (me && taken.has(me.vmName.toLowerCase())) return true;
  for (const other of claimants) {
    if (other.nodeClaimName === self) continue;
    const order =
      other.resourceVersion === undefined
        ? undefined
        : compareResourceVersions(other.resourceVersion, ownCommitVersion);
    const before = order === undefined || order < 0;
    if (other.launched || (other.committed === true && before)) taken.add(other.vmName.toLowerCase());
  }
  return taken.size < record.capacity;
}

/** The record behind a reserved offering, found by the offering's reservation ID. */
export function recordOfReservation(
  records: readonly CapacityReservationRecord[],
  reservationId: string,
): CapacityReservationRecord | undefined {
  return records.find((r) => reservationIdOf(r.groupName, r.name) === reservationId);
}
