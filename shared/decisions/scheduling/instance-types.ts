// Instance types compiled once per solve: their requirements as value sets (single-valued labels plus
// the zones and capacity types of their available offerings), allocatable and capacity as numbers.
import { WellKnown } from '../../models/karpenter.js';
import { ANY_VALUE, allows, type ValueSet } from './value-set.js';
import type { RequirementMap } from './requirement-map.js';
import { parseResources, type Resources } from './resources.js';
import type { InstanceType, InstanceTypeOffering } from './types.js';

export interface CompiledInstanceType {
  readonly source: InstanceType;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly allocatable: Resources;
  /** Capacity plus `nodes: 1`, what a NodeClaim of this type takes from its NodePool's limits. */
  readonly capacity: Resources;
  readonly offerings: readonly InstanceTypeOffering[];
  /** The cheapest available offering's price, regardless of requirements (Infinity when none). */
  readonly cheapest: number;
}

export type CompiledInstanceTypeResult = { instanceType: CompiledInstanceType } | { error: string };

export function compileInstanceType(instanceType: InstanceType): CompiledInstanceTypeResult {
  const allocatable = parseResources(
    instanceType.allocatable,
    `instance type ${instanceType.name} allocatable`,
  );
  if ('error' in allocatable) return allocatable;
  const capacity = parseResources(instanceType.capacity, `instance type ${instanceType.name} capacity`);
  if ('error' in capacity) return capacity;
  capacity.resources.set('nodes', 1);
  let cheapest = Infinity;
  for (const offering of instanceType.offerings) {
    if (offering.available && offering.price < cheapest) cheapest = offering.price;
  }
  return {
    instanceType: {
      source: instanceType,
      name: instanceType.name,
      labels: { ...instanceType.labels, [WellKnown.instanceTypeLabel]: instanceType.name },
      allocatable: allocatable.resources,
      capacity: capacity.resources,
      offerings: instanceType.offerings,
      cheapest,
    },
  };
}

/** Provider-defined keys an instance type that lacks them is treated as not having (e.g. sku-gpu-count). */
const PROVIDER_DOMAIN = 'karpenter.azure.com/';

/**
 * The first requirement the instance type's labels contradict, or undefined. Karpenter intersects only
 * keys both sides define; this also treats an undefined karpenter.azure.com/* key as absent, so a
 * NodePool asking for a provider property this catalog does not model (GPUs) never gets a machine
 * without it. Zone and capacity type are judged by offerings (offeringAllowed).
 */
export function instanceTypeMismatch(
  instanceType: CompiledInstanceType,
  requirements: RequirementMap,
): string | undefined {
  for (const [key, set] of requirements) {
    if (key === WellKnown.zoneLabel || key === WellKnown.capacityTypeLabel) continue;
    const value = Object.hasOwn(instanceType.labels, key) ? instanceType.labels[key] : undefined;
    if (value === undefined && !key.startsWith(PROVIDER_DOMAIN)) continue;
    if (!allows(set, value)) return key;
  }
  return undefined;
}

export function offeringAllowed(
  offering: InstanceTypeOffering,
  zones: ValueSet,
  capacityTypes: ValueSet,
): boolean {
  return (
    offering.available &&
    allows(zones, offering.zone === '' ? undefined : offering.zone) &&
    allows(capacityTypes, offering.capacityType)
  );
}

/** The cheapest available offering the requirements allow, or undefined. */
export function cheapestOffering(
  instanceType: CompiledInstanceType,
  requirements: RequirementMap,
): InstanceTypeOffering | undefined {
  const zones = requirements.get(WellKnown.zoneLabel) ?? ANY_VALUE;
  const capacityTypes = requirements.get(WellKnown.capacityTypeLabel) ?? ANY_VALUE;
  let best: InstanceTypeOffering | undefined;
  for (const offering of instanceType.offerings) {
    if (!offeringAllowed(offering, zones, capacityTypes)) continue;
    if (best === undefined || offering.price < best.price) best = offering;
  }
  return best;
}

/**
 * Whether some offering, available or not, is in the zones and capacity types the requirements allow:
 * tells an option ruled out by failure memory or quota (NoOffering) from one never offered there.
 */
export function offeredIgnoringAvailability(
  instanceType: CompiledInstanceType,
  requirements: RequirementMap,
): boolean {
  const zones = requirements.get(WellKnown.zoneLabel) ?? ANY_VALUE;
  const capacityTypes = requirements.get(WellKnown.capacityTypeLabel) ?? ANY_VALUE;
  return instanceType.offerings.some(
    (offering) =>
      allows(zones, offering.zone === '' ? undefined : offering.zone) &&
      allows(capacityTypes, offering.capacityType),
  );
}

/** Values of `key` the instance type can take under the requirements (zones/capacity types from offerings). */
export function instanceTypeValues(
  instanceType: CompiledInstanceType,
  key: string,
  requirements: RequirementMap,
): string[] {
  if (key !== WellKnown.zoneLabel && key !== WellKnown.capacityTypeLabel) {
    const value = instanceType.labels[key];
    return value === undefined ? [] : [value];
  }
  const zones = requirements.get(WellKnown.zoneLabel) ?? ANY_VALUE;
  const capacityTypes = requirements.get(WellKnown.capacityTypeLabel) ?? ANY_VALUE;
  const values = new Set<string>();
  for (const offering of instanceType.offerings) {
    if (!offeringAllowed(offering, zones, capacityTypes)) continue;
    const value = key === WellKnown.zoneLabel ? offering.zone : offering.capacityType;
    if (value !== '') values.add(value);
  }
  return [...values];
}
