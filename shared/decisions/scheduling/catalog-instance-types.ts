// The region's offerings (offerings.ts: one per VM size × zone × capacity type) grouped into the
// simulation's instance types: one per VM size, its labels, capacity and allocatable from offerings.ts,
// and one priced offering per zone and capacity type (and per reservation, for reserved ones).
import { WellKnown, type CapacityType } from '../../models/karpenter.js';
import {
  capacityFor,
  isReservationFull,
  offeringLabels,
  type CapacityOptions,
  type Offering,
} from '../offerings.js';
import { isOfferingBlocked, type OfferingBlock } from '../offering-blocks.js';
import type { InstanceType } from './types.js';

export interface CatalogInstanceTypeOptions extends CapacityOptions {
  /** What recent launch failures rule out (the unavailable-offerings table's active blocks). */
  unavailable?: readonly OfferingBlock[];
  /** USD/h for a VM size and capacity type; undefined when unknown (the offering sorts last). */
  priceOf?: (vmSize: string, capacityType: CapacityType) => number | undefined;
}

export function instanceTypesFromOfferings(
  offerings: readonly Offering[],
  options: CatalogInstanceTypeOptions = {},
): InstanceType[] {
  const byName = new Map<string, InstanceType>();
  for (const offering of offerings) {
    let instanceType = byName.get(offering.vmSize);
    if (!instanceType) {
      const labels = offeringLabels(offering);
      delete labels[WellKnown.zoneLabel];
      delete labels[WellKnown.capacityTypeLabel];
      delete labels[WellKnown.capacityReservationIdLabel];
      const { capacity, allocatable } = capacityFor(offering, options);
      instanceType = { name: offering.vmSize, labels, capacity, allocatable, offerings: [] };
      byName.set(offering.vmSize, instanceType);
    }
    instanceType.offerings.push({
      zone: offering.zone,
      capacityType: offering.capacityType,
      price: options.priceOf?.(offering.vmSize, offering.capacityType) ?? Infinity,
      // A full reservation is listed but unavailable, as upstream lists a reserved offering at 0.
      available: !isOfferingBlocked(offering, options.unavailable) && !isReservationFull(offering),
    });
  }
  return [...byName.values()];
}
