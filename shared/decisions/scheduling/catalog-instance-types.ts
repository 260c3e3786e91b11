// The region's offerings (offerings.ts: one per VM size × zone × capacity type) grouped into the
// simulation's instance types: one per VM size, its labels, capacity and allocatable from offerings.ts,
// and one priced offering per zone and capacity type.
import { WellKnown, type CapacityType } from '../../models/karpenter.js';
import {
  capacityFor,
  offeringLabels,
  unavailabilityKeysOf,
  type CapacityOptions,
  type Offering,
} from '../offerings.js';
import type { InstanceType } from './types.js';

export interface CatalogInstanceTypeOptions extends CapacityOptions {
  /** Keys from offeringKey / unavailabilityKey ruled out by recent launch failures. */
  unavailable?: ReadonlySet<string>;
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
      const { capacity, allocatable } = capacityFor(offering, options);
      instanceType = { name: offering.vmSize, labels, capacity, allocatable, offerings: [] };
      byName.set(offering.vmSize, instanceType);
    }
    const unavailable = options.unavailable;
    instanceType.offerings.push({
      zone: offering.zone,
      capacityType: offering.capacityType,
      price: options.priceOf?.(offering.vmSize, offering.capacityType) ?? Infinity,
      available: !unavailable || !unavailabilityKeysOf(offering).some((key) => unavailable.has(key)),
    });
  }
  return [...byName.values()];
}
