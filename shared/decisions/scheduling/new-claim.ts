// A NodeClaim opened during the solve (Karpenter's scheduling.NodeClaim): its requirements narrow and
// its instance-type options shrink as pods join; at the end it becomes the NodeClaim to create.
import { WellKnown } from '../../models/karpenter.js';
import type { NodeSelectorRequirement } from '../../models/kube.js';
import { NO_DAEMONS } from './daemonsets.js';
import type { HostPort, PodVariant } from './pods.js';
import { cheapestOffering, offeringAllowed, type CompiledInstanceType } from './instance-types.js';
import { firstMinValuesShortfall, minValuesLowered, relaxMinValues } from './min-values.js';
import { isWellKnownLabel, type RequirementMap } from './requirement-map.js';
import { addInto, toResourceList, type Resources } from './resources.js';
import type { Template } from './templates.js';
import { HOSTNAME_KEY } from './topology.js';
import type { NewNodeClaim, PodReference } from './types.js';
import { ANY_VALUE, singleValue, toRequirements } from './value-set.js';

/** A pod on a NodeClaim with what placed it there, so the cost packer can move it later. */
export interface ClaimMember {
  readonly ref: PodReference;
  readonly requests: Resources;
  /** The relaxation level the pod was placed at: its requirements, tolerations, host ports. */
  readonly variant: PodVariant;
}

export class NewClaim {
  readonly requests: Resources = new Map();
  readonly pods: PodReference[] = [];
  readonly members: ClaimMember[] = [];
  readonly hostPorts: HostPort[] = [];
  /** Variants without topology constraints this claim turned down: it only gets fuller, so for good. */
  readonly rejected = new Set<number>();
  /** Index in the ClaimQueue's pod-count order. */
  position = 0;
  /** Per resource, the most / the least any remaining option leaves after its DaemonSets. */
  private ceiling: Resources = new Map();
  private floor: Resources = new Map();
  private boundsOf: readonly CompiledInstanceType[] | undefined;

  constructor(
    readonly template: Template,
    readonly hostname: string,
    public requirements: RequirementMap,
    public instanceTypes: CompiledInstanceType[],
    readonly index: number,
  ) {}

  add(member: ClaimMember, requirements: RequirementMap, instanceTypes: CompiledInstanceType[]): void {
    this.pods.push(member.ref);
    this.members.push(member);
    addInto(this.requests, member.requests);
    const ports = member.variant.group.hostPorts;
    this.requirements = requirements;
    // Options only ever shrink, so an equally long list is the same list: keep it and its bounds.
    if (instanceTypes.length !== this.instanceTypes.length) this.instanceTypes = instanceTypes;
    if (ports.length) this.hostPorts.push(...ports);
  }

  /**
   * A cheap necessary condition: no resource exceeds what the largest remaining option leaves after
   * its DaemonSets. Rejects full NodeClaims without scanning their instance types.
   */
  mayFit(requests: Resources): boolean {
    if (this.boundsOf !== this.instanceTypes) this.computeBounds();
    for (const [name, amount] of requests) {
      if ((this.requests.get(name) ?? 0) + amount > (this.ceiling.get(name) ?? 0)) return false;
    }
    return true;
  }

  /**
   * Whether every remaining option still fits after adding `requests`: then filtering the options by
   * size would remove none, and is skipped. Most pods joining a NodeClaim take this path.
   */
  fitsEveryOption(requests: Resources): boolean {
    if (this.boundsOf !== this.instanceTypes) this.computeBounds();
    for (const [name, amount] of requests) {
      if ((this.requests.get(name) ?? 0) + amount > (this.floor.get(name) ?? 0)) return false;
    }
    return true;
  }

  private computeBounds(): void {
    const ceiling: Resources = new Map();
    const floor: Resources = new Map();
    for (const [index, it] of this.instanceTypes.entries()) {
      const room = this.template.room.get(it) ?? it.allocatable;
      for (const [name, left] of room) {
        if (left > (ceiling.get(name) ?? -Infinity)) ceiling.set(name, left);
        if (index === 0 || left < (floor.get(name) ?? Infinity)) floor.set(name, left);
      }
      // A resource an option lacks leaves nothing of it on that option.
      if (room.size !== floor.size) for (const name of floor.keys()) if (!room.has(name)) floor.set(name, 0);
    }
    this.ceiling = ceiling;
    this.floor = floor;
    this.boundsOf = this.instanceTypes;
  }
}

export type FinalizedClaim = { claim: NewNodeClaim } | { reason: string };

/**
 * The NodeClaim to create (Karpenter's TruncateInstanceTypes + NodeClaimTemplate.ToNodeClaim): options
 * ordered by their cheapest available compatible offering and cut at `maxInstanceTypes`; requirements
 * narrowed by the pods, with instance-type and capacity-type In lists; requests including the smallest
 * DaemonSet overhead among the options; the hostname placeholder dropped. Under Strict a NodeClaim whose
 * kept options fall below a minValues is not created; under BestEffort (strictMinValues false) those
 * minValues are lowered to what the kept options have, and the NodeClaim says so when any of the
 * NodePool's ended lower than the NodePool asks (minValuesRelaxed).
 */
export function finalizeClaim(
  claim: NewClaim,
  maxInstanceTypes: number,
  strictMinValues: boolean,
): FinalizedClaim {
  const prices = claim.template.pricesUnder(claim.requirements);
  const { options, kept, offeredCapacityTypes } = cheapestOptions(
    claim.instanceTypes,
    prices,
    claim.requirements,
    maxInstanceTypes,
  );
  const shortfall = firstMinValuesShortfall(kept, claim.requirements);
  if (shortfall !== undefined && strictMinValues) {
    return {
      reason: `nodepool "${claim.template.name}": after keeping the ${maxInstanceTypes} cheapest instance types, ${shortfall}`,
    };
  }
  const requirements =
    shortfall === undefined ? claim.requirements : relaxMinValues(kept, claim.requirements);
  const minValuesRelaxed = minValuesLowered(claim.template.requirements, requirements);

  const capacityTypes = requirements.get(WellKnown.capacityTypeLabel) ?? ANY_VALUE;
  const written: NodeSelectorRequirement[] = [];
  const labels: Record<string, string> = { ...claim.template.labels };
  for (const [key, set] of requirements) {
    if (key === HOSTNAME_KEY || key === WellKnown.instanceTypeLabel || key === WellKnown.capacityTypeLabel)
      continue;
    written.push(...toRequirements(key, set));
    const single = singleValue(set);
    if (single !== undefined && !isWellKnownLabel(key)) labels[key] = single;
  }
  const instanceTypeMin = requirements.get(WellKnown.instanceTypeLabel)?.minValues;
  written.push({
    key: WellKnown.instanceTypeLabel,
    operator: 'In',
    values: kept.map((it) => it.name),
    ...(instanceTypeMin !== undefined ? { minValues: instanceTypeMin } : {}),
  });
  const capacityMin = capacityTypes.minValues;
  written.push({
    key: WellKnown.capacityTypeLabel,
    operator: 'In',
    values: [...offeredCapacityTypes],
    ...(capacityMin !== undefined ? { minValues: capacityMin } : {}),
  });

  const requests = new Map(claim.requests);
  addInto(requests, smallestDaemonOverhead(claim, kept));
  return {
    claim: {
      nodePoolName: claim.template.name,
      requirements: written,
      instanceTypeNames: kept.map((it) => it.name),
      requests: toResourceList(requests),
      labels,
      pods: claim.pods,
      cheapestPrice: options[0]?.price ?? Infinity,
      ...(minValuesRelaxed && { minValuesRelaxed: true as const }),
    },
  };
}

interface PricedOption {
  readonly it: CompiledInstanceType;
  readonly price: number;
}

interface OrderedOptions {
  /** Cheapest first (ties by name), cut at the maximum. */
  readonly options: readonly PricedOption[];
  readonly kept: readonly CompiledInstanceType[];
  /** Capacity types with an available offering among the kept options, sorted. */
  readonly offeredCapacityTypes: readonly string[];
}

const orderedOptions = new WeakMap<
  readonly CompiledInstanceType[],
  { prices: ReadonlyMap<CompiledInstanceType, number>; max: number; ordered: OrderedOptions }
>();

/**
 * The options ordered and cut for the NodeClaim. NodeClaims often share one options list (the cost
 * packer gives bins of equal content the same list), and the price table stands for the zone and
 * capacity-type requirements (Template.pricesUnder), so the work is done once per list and table.
 */
function cheapestOptions(
  instanceTypes: readonly CompiledInstanceType[],
  prices: ReadonlyMap<CompiledInstanceType, number>,
  requirements: RequirementMap,
  max: number,
): OrderedOptions {
  const cached = orderedOptions.get(instanceTypes);
  if (cached && cached.prices === prices && cached.max === max) return cached.ordered;
  const options = instanceTypes
    .map((it) => ({ it, price: prices.get(it) ?? cheapestOffering(it, requirements)?.price ?? Infinity }))
    .sort((a, b) => a.price - b.price || (a.it.name < b.it.name ? -1 : a.it.name > b.it.name ? 1 : 0))
    .slice(0, max);
  const kept = options.map((o) => o.it);
  const zones = requirements.get(WellKnown.zoneLabel) ?? ANY_VALUE;
  const capacityTypes = requirements.get(WellKnown.capacityTypeLabel) ?? ANY_VALUE;
  const offered = new Set<string>();
  for (const it of kept) {
    for (const offering of it.offerings) {
      if (offeringAllowed(offering, zones, capacityTypes)) offered.add(offering.capacityType);
    }
  }
  const ordered = { options, kept, offeredCapacityTypes: [...offered].sort() };
  orderedOptions.set(instanceTypes, { prices, max, ordered });
  return ordered;
}

function smallestDaemonOverhead(claim: NewClaim, kept: readonly CompiledInstanceType[]): Resources {
  let smallest: Resources | undefined;
  for (const it of kept) {
    const overhead = (claim.template.daemonOverhead.get(it) ?? NO_DAEMONS).requests;
    if (!smallest) {
      smallest = new Map(overhead);
      continue;
    }
    for (const [name, amount] of smallest) smallest.set(name, Math.min(amount, overhead.get(name) ?? 0));
  }
  return smallest ?? new Map();
}
