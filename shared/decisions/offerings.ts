// Offerings (VM size × zone × capacity type) derived from Azure's Resource SKUs catalog, their node
// labels, their capacity, and the choice of one offering for a NodeClaim.
import type { NodeSelectorRequirement, ResourceList } from '../models/kube.js';
import { WellKnown, type CapacityType } from '../models/karpenter.js';
import { formatMebibytes, formatMilliCpu, parseMilliQuantity, parseWholeQuantity } from './quantity.js';
import {
  EVICTION_HARD_NODEFS_FRACTION,
  nodeReservations,
  vmVisibleMemoryKiB,
  type ClusterNodeSettings,
} from './node-reservations.js';
import { describeRequirement, normalizedKey, requirementAllows } from './requirements.js';
import { blocks, isOfferingBlocked, type OfferingBlock } from './offering-blocks.js';
import { placementScopeOf, REGIONAL_ZONE } from './placement.js';
import { isNvidiaGpuSize, unsupportedSizeReason } from '../cloudprovider/azure/decisions/sku-support.js';

export { placementScopeOf, REGIONAL_ZONE, type PlacementScope } from './placement.js';

export type Architecture = 'amd64' | 'arm64';

/** The Hyper-V generations a VM size can boot (its HyperVGenerations capability). */
export type HyperVGeneration = 'V1' | 'V2';

export interface Offering {
  /** Azure VM size, e.g. "Standard_D2s_v5"; also the node.kubernetes.io/instance-type label. */
  vmSize: string;
  /** Letter family from the size name, e.g. "D" (the karpenter.azure.com/sku-family label). */
  family: string;
  /** Azure's quota family, e.g. "standardDSv5Family" (what family core quota errors refer to). */
  skuFamily: string;
  cpu: number;
  memoryMiB: number;
  arch: Architecture;
  /** Azure location in lower case, e.g. "westus2". */
  location: string;
  /**
   * Zone in Kubernetes' AKS label format "<location>-<n>"; REGIONAL_ZONE ("0", the label AKS gives nodes
   * without a zone) for a regional offering.
   */
  zone: string;
  /** The bare zone number for the VM's ARM `zones` field; undefined for a regional offering. */
  zoneNumber?: string;
  capacityType: CapacityType;
  /** Premium SSD capable (the PremiumIO capability). */
  premiumIO: boolean;
  acceleratedNetworking: boolean;
  /** Hyper-V generations the size boots (its HyperVGenerations capability); picks the node image. */
  hyperVGenerations?: readonly HyperVGeneration[];
  /** NVIDIA GPUs (the nvidia.com/gpu capacity) of a supported GPU size; absent for other sizes. */
  nvidiaGpus?: number;
  /** A reserved offering's reservation ("<group>.<reservation>", capacity-reservation-groups.ts). */
  reservationId?: string;
  /** A reserved offering's Capacity Reservation Group, the ARM ID the VM PUT names. */
  reservationGroupId?: string;
  /** A reserved offering's VMs still free in its reservation (capacity − allocated − launching). */
  reservedAvailable?: number;
}

/**
 * The fields of a Resource SKUs entry (GET .../providers/Microsoft.Compute/skus) this module reads.
 * @azure/arm-compute's `ResourceSku` is assignable to it, so the adapter can pass the SDK's objects.
 */
export interface SkuRecord {
  readonly resourceType?: string;
  readonly name?: string;
  readonly family?: string;
  readonly locations?: readonly string[];
  readonly locationInfo?: readonly { readonly location?: string; readonly zones?: readonly string[] }[];
  readonly capabilities?: readonly { readonly name?: string; readonly value?: string }[];
  readonly restrictions?: readonly {
    readonly type?: string;
    readonly values?: readonly string[];
    readonly restrictionInfo?: { readonly locations?: readonly string[]; readonly zones?: readonly string[] };
    readonly reasonCode?: string;
  }[];
}

function capability(sku: SkuRecord, name: string): string | undefined {
  return sku.capabilities?.find((c) => c.name?.toLowerCase() === name.toLowerCase())?.value;
}

function isTrue(value: string | undefined): boolean {
  return value?.toLowerCase() === 'true';
}

function sameLocation(a: string | undefined, b: string): boolean {
  return a !== undefined && a.toLowerCase() === b;
}

/** "Standard_D2s_v5" → "D", "Standard_NC24ads_A100_v4" → "N": the first letter of the size series. */
export function letterFamily(vmSize: string): string {
  const series = vmSize.replace(/^(Standard|Basic)_/i, '');
  return /^[A-Za-z]/.exec(series)?.[0]?.toUpperCase() ?? '';
}

/**
 * The HyperVGenerations capability ("V1,V2"). A size that does not list it is taken to boot both, so the
 * node image is Generation 2.
 */
export function hyperVGenerationsOf(capabilityValue: string | undefined): HyperVGeneration[] {
  if (capabilityValue === undefined) return ['V1', 'V2'];
  const listed = capabilityValue.split(',').map((g) => g.trim().toUpperCase());
  return (['V1', 'V2'] as const).filter((g) => listed.includes(g));
}

/**
 * Every offering the catalog allows in `location`, in selection order (see compareOfferings).
 * Skipped: non-VM resource types, SKUs without vCPUs/MemoryGB, sizes an AKS node may not be
 * (unsupportedSizeReason: AKS-restricted, below 2 vCPUs / 3.5 GiB, constrained vCPUs, confidential, GPUs
 * without driver support), sizes with no Hyper-V generation this project has images for, SKUs restricted
 * for the location, zones restricted for the SKU. A zonal SKU gets an offering per unrestricted zone and
 * a regional one beside them (Azure places a zone-less VM itself, the fallback when every zone fails); a
 * SKU listed without zones gets only the regional one. Spot offerings exist only where LowPriorityCapable
 * is True.
 */
export function offeringsFromSkus(skus: readonly SkuRecord[], location: string): Offering[] {
  const wanted = location.toLowerCase();
  const seen = new Set<string>();
  const offerings: Offering[] = [];
  for (const sku of skus) {
    if (sku.resourceType !== 'virtualMachines' || !sku.name) continue;
    const cpu = Number(capability(sku, 'vCPUs'));
    const memoryGiB = Number(capability(sku, 'MemoryGB'));
    if (!Number.isInteger(cpu) || cpu <= 0 || !Number.isFinite(memoryGiB) || memoryGiB <= 0) continue;
    const gpus = Number(capability(sku, 'GPUs') ?? '0') || 0;
    if (unsupportedSizeReason({ vmSize: sku.name, cpu, memoryGiB, gpus }) !== undefined) continue;
    // Gen1-only sizes boot Generation 1 node images; a size listing neither generation boots none.
    const hyperVGenerations = hyperVGenerationsOf(capability(sku, 'HyperVGenerations'));
    if (hyperVGenerations.length === 0) continue;

    const locationInfo = sku.locationInfo?.find((info) => sameLocation(info.location, wanted));
    const listed = locationInfo !== undefined || (sku.locations ?? []).some((l) => sameLocation(l, wanted));
    if (!listed) continue;

    const restrictions = sku.restrictions ?? [];
    const locationRestricted = restrictions.some(
      (r) =>
        r.type === 'Location' &&
        [...(r.restrictionInfo?.locations ?? []), ...(r.values ?? [])].some((l) => sameLocation(l, wanted)),
    );
    if (locationRestricted) continue;
    const restrictedZones = new Set(
      restrictions
        .filter(
          (r) =>
            r.type === 'Zone' &&
            (r.restrictionInfo?.locations === undefined ||
              r.restrictionInfo.locations.some((l) => sameLocation(l, wanted))),
        )
        .flatMap((r) => r.restrictionInfo?.zones ?? []),
    );
    const catalogZones = locationInfo?.zones ?? [];
    const openZones = catalogZones
      .filter((z) => !restrictedZones.has(z))
      .sort((a, b) => Number(a) - Number(b) || a.localeCompare(b));
    // A zonal SKU whose zones are all restricted has no offering at all: the restriction says the
    // subscription cannot get the size in this region.
    if (catalogZones.length > 0 && openZones.length === 0) continue;
    const zoneNumbers: (string | undefined)[] = [...openZones, undefined];

    const capacityTypes: CapacityType[] = isTrue(capability(sku, 'LowPriorityCapable'))
      ? ['spot', 'on-demand']
      : ['on-demand'];
    const arch: Architecture =
      capability(sku, 'CpuArchitectureType')?.toLowerCase() === 'arm64' ? 'arm64' : 'amd64';
    const nvidiaGpus = isNvidiaGpuSize(sku.name) ? gpus : 0;
    for (const zoneNumber of zoneNumbers) {
      for (const capacityType of capacityTypes) {
        const offering: Offering = {
          vmSize: sku.name,
          family: letterFamily(sku.name),
          skuFamily: sku.family ?? '',
          cpu,
          memoryMiB: Math.round(memoryGiB * 1024),
          arch,
          location: wanted,
          zone: zoneNumber === undefined ? REGIONAL_ZONE : `${wanted}-${zoneNumber}`,
          ...(zoneNumber === undefined ? {} : { zoneNumber }),
          hyperVGenerations,
          capacityType,
          premiumIO: isTrue(capability(sku, 'PremiumIO')),
          acceleratedNetworking: isTrue(capability(sku, 'AcceleratedNetworkingEnabled')),
          ...(nvidiaGpus > 0 ? { nvidiaGpus } : {}),
        };
        const key = offeringKey(offering);
        if (seen.has(key)) continue;
        seen.add(key);
        offerings.push(offering);
      }
    }
  }
  return offerings.sort(compareOfferings);
}

/** The labels a node launched from this offering carries; requirements are evaluated against them. */
export function offeringLabels(offering: Offering): Record<string, string> {
  return {
    [WellKnown.instanceTypeLabel]: offering.vmSize,
    ...(offering.zone === '' ? {} : { [WellKnown.zoneLabel]: offering.zone }),
    [PLACEMENT_SCOPE_LABEL]: placementScopeOf(offering),
    [WellKnown.regionLabel]: offering.location,
    [WellKnown.capacityTypeLabel]: offering.capacityType,
    [WellKnown.archLabel]: offering.arch,
    [WellKnown.osLabel]: 'linux',
    [WellKnown.skuFamilyLabel]: offering.family,
    [WellKnown.skuCpuLabel]: String(offering.cpu),
    [WellKnown.skuMemoryLabel]: String(offering.memoryMiB),
    [WellKnown.skuNameLabel]: offering.vmSize,
    [SKU_GPU_COUNT_LABEL]: String(offering.nvidiaGpus ?? 0),
    ...(offering.nvidiaGpus ? { [SKU_GPU_MANUFACTURER_LABEL]: 'nvidia' } : {}),
    ...(offering.reservationId ? { [WellKnown.capacityReservationIdLabel]: offering.reservationId } : {}),
  };
}

/** The Azure provider's labels for where a VM is placed and what GPUs it has. */
export const PLACEMENT_SCOPE_LABEL = 'karpenter.azure.com/placement-scope';
export const SKU_GPU_COUNT_LABEL = 'karpenter.azure.com/sku-gpu-count';
export const SKU_GPU_MANUFACTURER_LABEL = 'karpenter.azure.com/sku-gpu-manufacturer';
/** The extended resource the NVIDIA device plugin advertises. */
export const NVIDIA_GPU_RESOURCE = 'nvidia.com/gpu';

/** Keys whose values an offering determines (offeringLabels may omit the zone in a non-zonal region). */
export const OFFERING_LABEL_KEYS: ReadonlySet<string> = new Set([
  WellKnown.instanceTypeLabel,
  WellKnown.zoneLabel,
  WellKnown.regionLabel,
  WellKnown.capacityTypeLabel,
  WellKnown.archLabel,
  WellKnown.osLabel,
  WellKnown.skuFamilyLabel,
  WellKnown.skuCpuLabel,
  WellKnown.skuMemoryLabel,
  WellKnown.skuNameLabel,
  PLACEMENT_SCOPE_LABEL,
  SKU_GPU_COUNT_LABEL,
  SKU_GPU_MANUFACTURER_LABEL,
  WellKnown.capacityReservationIdLabel,
]);

/** Label domain of provider-defined SKU properties; keys here that offerings do not model count as absent. */
const PROVIDER_DOMAIN = 'karpenter.azure.com/';

/**
 * Whether an offering satisfies the requirements. Keys are treated in three ways:
 * - keys an offering defines (OFFERING_LABEL_KEYS, or their deprecated beta aliases) are evaluated
 *   against offeringLabels;
 * - other karpenter.azure.com/* keys (e.g. sku-gpu-name) are provider properties this project does
 *   not model, evaluated as an absent label: NotIn / DoesNotExist pass, anything else fails, so a
 *   NodePool asking for GPUs never gets a machine without them;
 * - every other key (karpenter.sh/nodepool, team=…) is a label the NodeClaim puts on the node, not a
 *   property of the machine, so it does not constrain the offering.
 */
export function offeringSatisfies(
  offering: Offering,
  requirements: readonly NodeSelectorRequirement[],
): { satisfied: true } | { satisfied: false; key: string; reason: string } {
  const labels = offeringLabels(offering);
  for (const requirement of requirements) {
    const key = normalizedKey(requirement.key);
    const defined = OFFERING_LABEL_KEYS.has(key);
    if (!defined && !key.startsWith(PROVIDER_DOMAIN)) continue;
    const value = defined && Object.hasOwn(labels, key) ? labels[key] : undefined;
    if (!requirementAllows(requirement, value)) {
      const actual = value === undefined ? `${key} is not set` : `${key}=${value}`;
      return {
        satisfied: false,
        key,
        reason: `${actual} does not satisfy ${describeRequirement(requirement)}`,
      };
    }
  }
  return { satisfied: true };
}

export function offeringKey(
  offering: Pick<Offering, 'capacityType' | 'vmSize' | 'zone' | 'reservationId'>,
): string {
  const key = `${offering.capacityType}/${offering.vmSize}/${offering.zone}`;
  return offering.reservationId === undefined ? key : `${key}/${offering.reservationId}`;
}

/** A reserved offering whose reservation has no VM left: nothing may launch into it until one is freed. */
export function isReservationFull(offering: Pick<Offering, 'capacityType' | 'reservedAvailable'>): boolean {
  return offering.capacityType === 'reserved' && (offering.reservedAvailable ?? 0) <= 0;
}

export const DEFAULT_OS_DISK_SIZE_GB = 128;

/** What capacity depends on besides the size: the AKSNodeClass's pod limit and disk, the cluster's settings. */
export interface CapacityOptions extends ClusterNodeSettings {
  /** The AKSNodeClass's maxPods; the network plugin's default when unset. */
  maxPods?: number;
  osDiskSizeGB?: number;
}

/**
 * Capacity and allocatable as kubelet on this node will report them: capacity memory is what the guest
 * sees (the size's memory less the VM overhead); allocatable subtracts AKS's kube-reserved and the hard
 * eviction threshold (nodeReservations), the same figures the bootstrap passes to kubelet.
 */
export function capacityFor(
  offering: Pick<Offering, 'cpu' | 'memoryMiB' | 'nvidiaGpus'>,
  options: CapacityOptions = {},
): { capacity: ResourceList; allocatable: ResourceList } {
  const reservations = nodeReservations(offering, options);
  const diskGiB = options.osDiskSizeGB ?? DEFAULT_OS_DISK_SIZE_GB;
  const memoryKiB = vmVisibleMemoryKiB(offering.memoryMiB, options.vmMemoryOverheadFraction);
  const allocatableMilliCpu = Math.max(0, offering.cpu * 1000 - reservations.kubeReservedMilliCpu);
  const allocatableMemoryKiB = Math.max(
    0,
    memoryKiB - (reservations.kubeReservedMemoryMiB + reservations.evictionHardMemoryMiB) * 1024,
  );
  const pods = String(reservations.maxPods);
  const gpus: ResourceList = offering.nvidiaGpus
    ? { [NVIDIA_GPU_RESOURCE]: String(offering.nvidiaGpus) }
    : {};
  return {
    capacity: {
      cpu: String(offering.cpu),
      memory: `${memoryKiB}Ki`,
      pods,
      'ephemeral-storage': `${diskGiB}Gi`,
      ...gpus,
    },
    allocatable: {
      cpu: formatMilliCpu(allocatableMilliCpu),
      memory: `${allocatableMemoryKiB}Ki`,
      pods,
      'ephemeral-storage': formatMebibytes(Math.floor(diskGiB * 1024 * (1 - EVICTION_HARD_NODEFS_FRACTION))),
      ...gpus,
    },
  };
}

/**
 * Selection order: smallest first (vCPUs, then memory), reserved, then spot, then on-demand for the same shape, zonal
 * before regional, then VM size name, then zone. Spot first mirrors Karpenter, which launches spot whenever the NodeClaim
 * allows it because spot is the cheaper price for the same machine; comparing shape before capacity
 * type keeps a small on-demand machine ahead of a much larger spot one. Names and zones compare by
 * code unit so the order does not depend on the runtime's locale.
 */
export function compareOfferings(a: Offering, b: Offering): number {
  return (
    a.cpu - b.cpu ||
    a.memoryMiB - b.memoryMiB ||
    capacityRank(a.capacityType) - capacityRank(b.capacityType) ||
    placementRank(a) - placementRank(b) ||
    ordinal(a.vmSize, b.vmSize) ||
    ordinal(a.zone, b.zone)
  );
}

// Zonal offerings first: the regional one is the fallback once the size's zones have failed, and a
// zonal VM keeps the zone labels topology spread relies on.
function placementRank(offering: Offering): number {
  return placementScopeOf(offering) === 'zonal' ? 0 : 1;
}

// Reserved first (already paid for), then spot (the cheaper price for the same machine), then on-demand.
function capacityRank(capacityType: CapacityType): number {
  return capacityType === 'reserved' ? 0 : capacityType === 'spot' ? 1 : 2;
}

function ordinal(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export interface SelectOfferingInput extends CapacityOptions {
  requirements: readonly NodeSelectorRequirement[];
  /** The NodeClaim's spec.resources.requests (cpu, memory, pods, ephemeral-storage, …). */
  requests?: ResourceList;
  offerings: readonly Offering[];
  /** What recent launch failures rule out (the unavailable-offerings table's active blocks). */
  unavailable?: readonly OfferingBlock[];
  /**
   * What the vCPU quotas' room rules out before any PUT, each block with the refusal it stands for (the
   * reason names the first).
   */
  quota?: readonly { block: OfferingBlock; message: string }[];
  /**
   * Offerings the cloud says are unlikely to be allocated now (a low placement score): tried only when
   * every other candidate is too, so a dearer size is chosen over a cheaper one only when the cheaper
   * one is unlikely.
   */
  unlikely?: (offering: Offering) => boolean;
  /**
   * The order to try offerings in. Launch passes the price order (prices/offering-order.ts: cheapest
   * first, spot where allowed, then zonal); without one, compareOfferings' shape order.
   */
  order?: (a: Offering, b: Offering) => number;
  /**
   * Extended resources an offering provides beyond NVIDIA GPUs (what NodeOverlays add to its capacity);
   * without it, a request for any other extended resource fits no offering.
   */
  extendedCapacity?: (offering: Offering) => ResourceList;
}

export type OfferingSelection = { offering: Offering } | { offering: undefined; reason: string };

interface ParsedRequests {
  milliCpu: number;
  memoryBytes: number;
  pods: number;
  ephemeralBytes: number;
  nvidiaGpus: number;
  /** Requested extended resources other than NVIDIA GPUs, in milli-units (only overlays provide them). */
  extended: Map<string, number>;
}

function parseRequests(requests: ResourceList): ParsedRequests | string {
  const parsed: ParsedRequests = {
    milliCpu: 0,
    memoryBytes: 0,
    pods: 0,
    ephemeralBytes: 0,
    nvidiaGpus: 0,
    extended: new Map(),
  };
  for (const [name, quantity] of Object.entries(requests)) {
    try {
      if (name === 'cpu') parsed.milliCpu = parseMilliQuantity(quantity);
      else if (name === 'memory') parsed.memoryBytes = parseWholeQuantity(quantity);
      else if (name === 'pods') parsed.pods = parseWholeQuantity(quantity);
      else if (name === 'ephemeral-storage') parsed.ephemeralBytes = parseWholeQuantity(quantity);
      else if (name === NVIDIA_GPU_RESOURCE) parsed.nvidiaGpus = parseWholeQuantity(quantity);
      else if (parseMilliQuantity(quantity) > 0) parsed.extended.set(name, parseMilliQuantity(quantity));
    } catch (error) {
      return `request ${name}: ${(error as Error).message}`;
    }
  }
  return parsed;
}

const MIB = 1024 * 1024;

function fits(
  offering: Offering,
  requests: ParsedRequests,
  options: CapacityOptions,
  extendedCapacity: SelectOfferingInput['extendedCapacity'],
): string | undefined {
  if (requests.extended.size > 0) {
    const provided = extendedCapacity?.(offering) ?? {};
    const missing = [...requests.extended].filter(([name, milli]) => {
      const quantity = provided[name];
      return quantity === undefined || parseMilliQuantity(quantity) < milli;
    });
    if (missing.length > 0) return `no offering provides ${missing.map(([name]) => name).join(', ')}`;
  }
  const { allocatable } = capacityFor(offering, options);
  const milliCpu = parseMilliQuantity(allocatable.cpu ?? '0');
  const memoryBytes = parseWholeQuantity(allocatable.memory ?? '0');
  const pods = parseWholeQuantity(allocatable.pods ?? '0');
  const ephemeralBytes = parseWholeQuantity(allocatable['ephemeral-storage'] ?? '0');
  if (requests.milliCpu > milliCpu) return `cpu ${requests.milliCpu}m > allocatable ${milliCpu}m`;
  if (requests.memoryBytes > memoryBytes) {
    return `memory ${Math.ceil(requests.memoryBytes / MIB)}Mi > allocatable ${Math.floor(memoryBytes / MIB)}Mi`;
  }
  if (requests.pods > pods) return `pods ${requests.pods} > allocatable ${pods}`;
  if (requests.nvidiaGpus > (offering.nvidiaGpus ?? 0)) {
    return `${NVIDIA_GPU_RESOURCE} ${requests.nvidiaGpus} > allocatable ${offering.nvidiaGpus ?? 0}`;
  }
  if (requests.ephemeralBytes > ephemeralBytes) {
    return `ephemeral-storage ${Math.ceil(requests.ephemeralBytes / MIB)}Mi > allocatable ${ephemeralBytes / MIB}Mi`;
  }
  return undefined;
}

/**
 * Like Karpenter, a NodeClaim that says nothing about capacity type gets on-demand: spot capacity can be
 * evicted at any time, so it is only used when the NodePool opts in.
 */
export function withDefaultCapacityType(
  requirements: readonly NodeSelectorRequirement[],
): readonly NodeSelectorRequirement[] {
  if (requirements.some((r) => r.key === WellKnown.capacityTypeLabel)) return requirements;
  return [...requirements, { key: WellKnown.capacityTypeLabel, operator: 'In', values: ['on-demand'] }];
}

/**
 * Chooses the first offering in the given order (compareOfferings when none) that satisfies every
 * requirement, fits the requests within allocatable (see capacityFor), and is not marked unavailable
 * under any of its keys.
 * A requirement with minValues additionally needs that many distinct values for its key among the
 * offerings that qualify, as Karpenter checks before launching. The reason for "nothing fits" counts
 * why offerings were excluded, so the NodeClaim condition says what to change.
 */
export function selectOffering(input: SelectOfferingInput): OfferingSelection {
  const screening = screenOfferings(input);
  if ('reason' in screening) return { offering: undefined, reason: screening.reason };
  const { unlikely } = input;
  const candidates = screening.candidates;
  const chosen = (unlikely && candidates.find((o) => !unlikely(o))) ?? candidates[0];
  return chosen ? { offering: chosen } : { offering: undefined, reason: 'no offering fits' };
}

/**
 * Every offering selectOffering may choose from, in the order it tries them (before the unlikely are put
 * last): what the cloud is asked to score.
 */
export function candidateOfferings(input: SelectOfferingInput): Offering[] {
  const screening = screenOfferings(input);
  return 'reason' in screening ? [] : screening.candidates;
}

/** The offerings that satisfy the requirements, fit and are not ruled out, or why there are none. */
function screenOfferings(input: SelectOfferingInput): { candidates: Offering[] } | { reason: string } {
  const requirements = withDefaultCapacityType(input.requirements);
  const requests = parseRequests(input.requests ?? {});
  if (typeof requests === 'string') return { reason: `invalid resource requests: ${requests}` };
  const {
    requirements: _requirements,
    requests: _requests,
    offerings: _offerings,
    unavailable: _unavailable,
    quota: _quota,
    unlikely: _unlikely,
    order: _order,
    extendedCapacity,
    ...options
  } = input;

  let excludedByRequirements = 0;
  let firstRequirementReason: string | undefined;
  let tooSmall = 0;
  let firstFitReason: string | undefined;
  let markedUnavailable = 0;
  let overQuota = 0;
  let firstQuotaReason: string | undefined;
  let reservationsFull = 0;
  const candidates: Offering[] = [];
  for (const offering of [...input.offerings].sort(input.order ?? compareOfferings)) {
    const check = offeringSatisfies(offering, requirements);
    if (!check.satisfied) {
      excludedByRequirements++;
      firstRequirementReason ??= check.reason;
      continue;
    }
    const tooSmallReason = fits(offering, requests, options, extendedCapacity);
    if (tooSmallReason !== undefined) {
      tooSmall++;
      firstFitReason ??= `${offering.vmSize}: ${tooSmallReason}`;
      continue;
    }
    if (isOfferingBlocked(offering, input.unavailable)) {
      markedUnavailable++;
      continue;
    }
    const quota = input.quota?.find((q) => blocks(q.block, offering));
    if (quota) {
      overQuota++;
      firstQuotaReason ??= `${offering.vmSize}: ${quota.message}`;
      continue;
    }
    if (isReservationFull(offering)) {
      reservationsFull++;
      continue;
    }
    candidates.push(offering);
  }

  for (const requirement of requirements) {
    if (requirement.minValues === undefined) continue;
    const key = normalizedKey(requirement.key);
    if (!OFFERING_LABEL_KEYS.has(key)) continue;
    const distinct = new Set(candidates.map((o) => offeringLabels(o)[key]).filter((v) => v !== undefined));
    if (distinct.size < requirement.minValues) {
      return {
        reason: `requirement ${describeRequirement(requirement)} needs minValues ${requirement.minValues} but only ${distinct.size} qualifying value(s) are available`,
      };
    }
  }

  if (candidates.length > 0) return { candidates };
  const parts = [`none of ${input.offerings.length} offerings fits`];
  if (excludedByRequirements > 0) {
    parts.push(`${excludedByRequirements} excluded by requirements (e.g. ${firstRequirementReason})`);
  }
  if (tooSmall > 0) parts.push(`${tooSmall} too small for the requests (e.g. ${firstFitReason})`);
  if (markedUnavailable > 0)
    parts.push(`${markedUnavailable} marked unavailable after recent launch failures`);
  if (overQuota > 0) parts.push(`${overQuota} beyond their vCPU quota (e.g. ${firstQuotaReason})`);
  if (reservationsFull > 0) parts.push(`${reservationsFull} reserved with their reservation full`);
  return { reason: parts.join('; ') };
}
