// The region's offerings with the reserved ones of the configured Capacity Reservation Groups beside
// them, as launch, provisioning and consolidation all see them: each reservation's availability counts
// the VMs Azure lists in it and this cluster's NodeClaims labelled with it (launching or launched), so
// every part of the app, on every instance, hands out a slot once.
import {
  holdsCommittedSeat,
  holdsReservationSeat,
  recordOfReservation,
  reservedOfferings,
  type CapacityReservationRecord,
  RESERVATION_CLAIMED_AT_ANNOTATION,
  RESERVATION_COMMITTED_ANNOTATION,
  type ReservationClaimant,
} from '../decisions/capacity-reservations.js';
import type { Offering } from '../decisions/offerings.js';
import { vmNameFor } from '../decisions/vm-spec.js';
import type { NodeClaim } from '../models/index.js';
import { WellKnown } from '../models/karpenter.js';
import type { CloudProviderParts } from './parts.js';
import { catalogOfferings } from './catalog-offerings.js';
import { ReservationContendedError } from './types.js';

export interface OfferingsWithReservations {
  offerings: Offering[];
  records: CapacityReservationRecord[];
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

/** The NodeClaims of this cluster that carry a reservation label, read from the API server. */
export async function listReservationClaimants(
  deps: Pick<CloudProviderParts, 'objects'>,
): Promise<NodeClaim[]> {
  return deps.objects.nodeClaims.list({ labelSelector: WellKnown.capacityReservationIdLabel });
}

/**
 * Catalog offerings plus reserved ones. `nodeClaims` are the cluster's NodeClaims when the caller has
 * them (provisioning, consolidation); otherwise the labelled ones are listed. `except` leaves one
 * NodeClaim out of the count: the one launching now, whose own earlier claim must not take its slot.
 */
export async function offeringsWithReservations(
  deps: Pick<CloudProviderParts, 'skus' | 'settings' | 'reservations' | 'objects'>,
  options: { nodeClaims?: readonly NodeClaim[]; except?: string } = {},
): Promise<OfferingsWithReservations> {
  const catalog = await catalogOfferings(deps);
  const records = await deps.reservations.records();
  if (records.length === 0) return { offerings: catalog, records };
  const nodeClaims = (options.nodeClaims ?? (await listReservationClaimants(deps))).filter(
    (nc) => nc.metadata.name !== options.except,
  );
  const launching = (reservationId: string): ReadonlySet<string> =>
    new Set(reservationClaimants(nodeClaims, reservationId).map((c) => c.vmName));
  return { offerings: [...catalog, ...reservedOfferings(records, catalog, launching)], records };
}

/**
 * Takes one of the reservation's slots for the NodeClaim about to send its VM PUT, or throws
 * ReservationContendedError (and gives back its commitment) when other launches hold them all. Two
 * checks, each on a fresh list: the claim order (holdsReservationSeat) lets through the launches that
 * come first by their claims, then the commitment written here orders those by the API server's own
 * write order (holdsCommittedSeat), so no interleaving of concurrent launches overallocates the group.
 */
export async function takeReservationSeat(
  deps: Pick<CloudProviderParts, 'objects'>,
  records: readonly CapacityReservationRecord[],
  reservationId: string,
  nodeClaimName: string,
): Promise<void> {
  const record = recordOfReservation(records, reservationId);
  const claimed = reservationClaimants(await listReservationClaimants(deps), reservationId);
  if (!record || !holdsReservationSeat(record, claimed, nodeClaimName))
    throw new ReservationContendedError(`reservation ${reservationId} is contended`);
  const committed = await deps.objects.nodeClaims.mergePatch(nodeClaimName, {
    metadata: { annotations: { [RESERVATION_COMMITTED_ANNOTATION]: reservationId } },
  });
  const ownVersion = committed.metadata.resourceVersion ?? '';
  const listed = reservationClaimants(await listReservationClaimants(deps), reservationId);
  if (holdsCommittedSeat(record, listed, nodeClaimName, ownVersion)) return;
  await deps.objects.nodeClaims.mergePatch(nodeClaimName, {
    metadata: { annotations: { [RESERVATION_COMMITTED_ANNOTATION]: null } },
  });
  throw new ReservationContendedError(`reservation ${reservationId} is taken by earlier launches`);
}
