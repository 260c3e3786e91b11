// The region's offerings with the reserved ones of the configured Capacity Reservation Groups beside
// them, as launch, provisioning and consolidation all see them: each reservation's availability counts
// the VMs Azure lists in it and this cluster's NodeClaims labelled with it (launching or launched), so
// every part of the app, on every instance, hands out a slot once. Taking a slot for a launch writes the
// NodeClaim, so it is the lifecycle's (lifecycle/launch/reservation-seat.ts): the provider writes no
// Kubernetes object.
import {
  reservationClaimants,
  reservedOfferings,
  type CapacityReservationRecord,
} from './azure/decisions/capacity-reservations.js';
import type { Offering } from '../decisions/offerings.js';
import type { NodeClaim } from '../models/index.js';
import { WellKnown } from '../models/karpenter.js';
import type { CloudProviderParts } from './parts.js';
import { catalogOfferings } from './catalog-offerings.js';

export interface OfferingsWithReservations {
  offerings: Offering[];
  records: CapacityReservationRecord[];
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
