// NodeOverlays (karpenter.sh/v1alpha1) evaluated as upstream's nodeoverlay controller and instance-type
// store do: overlays are taken by weight (highest first, equal weights by name, later in the alphabet
// first); for each NodePool × instance type × offering the first overlay that matches sets the price;
// capacity is merged per NodePool × instance type, a resource going to the heaviest overlay that names it.
// An overlay that names the same offering price, or the same capacity resource, as an earlier overlay of
// equal weight conflicts and is applied nowhere (never partially), as is one that fails validation.
//
// An overlay matches an offering when the labels a node of it would carry (the offering's labels, the
// NodePool's template labels and karpenter.sh/nodepool) satisfy every requirement: upstream checks the
// instance type's requirements for compatibility and then filters its offerings, which for the
// single-valued labels of one offering is the same test. Capacity applies to the whole instance type when
// any of its offerings matches, as upstream's does.
import type { NodeSelectorRequirement, ResourceList } from '../models/kube.js';
import { WellKnown } from '../models/karpenter.js';
import type { NodeOverlay } from '../models/node-overlay.js';
import { offeringLabels, type Offering } from './offerings.js';
import { labelsSatisfy, validateRequirements } from './requirements.js';
import { tryParseQuantity } from './quantity.js';
import type { InstanceType } from './scheduling/types.js';

/** ValidationSucceeded's reasons, upstream's words. */
export const NodeOverlayReasons = {
  runtimeValidation: 'RuntimeValidation',
  conflict: 'Conflict',
} as const;

export type NodeOverlayOutcome =
  | { valid: true }
  | { valid: false; reason: (typeof NodeOverlayReasons)[keyof typeof NodeOverlayReasons]; message: string };

/** A NodePool as overlays see it: its name and its template's labels. */
export interface OverlayNodePool {
  name: string;
  labels: Readonly<Record<string, string>>;
}

interface PriceUpdate {
  change: string;
  /** The weight of the last overlay that matched this offering (upstream's lowestWeight). */
  lowestWeight: number;
}

interface CapacityUpdate {
  resources: ResourceList;
  lowestWeight: number;
  lowestWeightResources: readonly string[];
}

interface InstanceTypeUpdate {
  prices: Map<string, PriceUpdate>;
  capacity?: CapacityUpdate;
}

/** What the valid, non-conflicting overlays change, per NodePool and instance type. */
export interface OverlayEvaluation {
  outcomes: Map<string, NodeOverlayOutcome>;
  updates: Map<string, Map<string, InstanceTypeUpdate>>;
}

const RESTRICTED_CAPACITY: ReadonlySet<string> = new Set(['cpu', 'memory', 'ephemeral-storage', 'pods']);
const PRICE_PATTERN = /^\d+(\.\d+)?$/;
const PRICE_ADJUSTMENT_PATTERN = /^(([+-]{1}(\d*\.?\d+))|(\+{1}\d*\.?\d+%)|(^(-\d{1,2}(\.\d+)?%)$)|(-100%))$/;

const weightOf = (overlay: NodeOverlay): number => overlay.spec.weight ?? 0;

/** Highest weight first; equal weights with the name later in the alphabet first (upstream's OrderByWeight). */
export function orderByWeight(overlays: readonly NodeOverlay[]): NodeOverlay[] {
  return [...overlays].sort((a, b) => {
    const byWeight = weightOf(b) - weightOf(a);
    if (byWeight !== 0) return byWeight;
    const [nameA, nameB] = [a.metadata.name, b.metadata.name];
    return nameA === nameB ? 0 : nameA > nameB ? -1 : 1;
  });
}

/**
 * What the CRD's schema and upstream's RuntimeValidate refuse, each naming its field; empty when valid.
 * The schema rules are checked again because an overlay may have been stored under an older schema.
 */
export function nodeOverlayProblems(overlay: NodeOverlay): string[] {
  const spec = overlay.spec;
  const problems = validateRequirements(spec.requirements, 'spec.requirements');
  (spec.requirements ?? []).forEach((requirement, index) => {
    if (requirement.operator === 'NotIn' && (requirement.values ?? []).length === 0) {
      problems.push(`spec.requirements[${index}].values: operator NotIn needs at least one value`);
    }
  });
  for (const [name, quantity] of Object.entries(spec.capacity ?? {})) {
    if (RESTRICTED_CAPACITY.has(name)) {
      problems.push(`spec.capacity.${name}: only extended resources may be added, ${name} is restricted`);
    } else if (tryParseQuantity(quantity) === undefined) {
      problems.push(`spec.capacity.${name}: ${JSON.stringify(quantity)} is not a quantity`);
    }
  }
  if (spec.price !== undefined && spec.priceAdjustment !== undefined) {
    problems.push(`spec: cannot set both 'price' and 'priceAdjustment'`);
  }
  if (spec.price !== undefined && !PRICE_PATTERN.test(spec.price)) {
    problems.push(`spec.price: ${JSON.stringify(spec.price)} is not a non-negative decimal`);
  }
  if (spec.priceAdjustment !== undefined && !PRICE_ADJUSTMENT_PATTERN.test(spec.priceAdjustment)) {
    problems.push(
      `spec.priceAdjustment: ${JSON.stringify(spec.priceAdjustment)} is neither a signed amount ("+0.1", "-0.1") nor a percentage ("+10%", "-15%")`,
    );
  }
  const weight = spec.weight;
  if (weight !== undefined && (!Number.isInteger(weight) || weight < 1 || weight > 10_000)) {
    problems.push(`spec.weight: must be an integer from 1 to 10000, got ${JSON.stringify(weight)}`);
  }
  return problems;
}

/**
 * A price after an overlay's change, as upstream's AdjustedPrice: an unsigned value replaces the price,
 * a signed one is added, a signed percentage scales it; the result is never below 0.
 */
export function adjustedPrice(price: number, change: string): number {
  if (change === '') return price;
  if (!change.startsWith('+') && !change.startsWith('-')) return Number(change);
  const adjusted = change.endsWith('%')
    ? price * (1 + Number(change.slice(0, -1)) / 100)
    : price + Number(change);
  return adjusted >= 0 ? adjusted : 0;
}

const offeringKey = (zone: string, capacityType: string): string => `${zone}/${capacityType}`;

interface LabelledOffering {
  offering: Offering;
  labels: Record<string, string>;
}

interface OverlayTarget {
  nodePool: string;
  vmSize: string;
  /** The offering keys of this instance type the overlay matches (never empty). */
  offerings: string[];
}

/** Every NodePool × instance type the overlay matches, with the offerings it matches. */
function targetsOf(
  requirements: readonly NodeSelectorRequirement[],
  nodePools: readonly OverlayNodePool[],
  offerings: readonly LabelledOffering[],
): OverlayTarget[] {
  const targets: OverlayTarget[] = [];
  for (const nodePool of nodePools) {
    const byVmSize = new Map<string, OverlayTarget>();
    for (const { offering, labels: own } of offerings) {
      const labels = { ...own, ...nodePool.labels, [WellKnown.nodePoolLabel]: nodePool.name };
      if (!labelsSatisfy(labels, requirements).satisfied) continue;
      let target = byVmSize.get(offering.vmSize);
      if (!target) {
        target = { nodePool: nodePool.name, vmSize: offering.vmSize, offerings: [] };
        byVmSize.set(offering.vmSize, target);
        targets.push(target);
      }
      target.offerings.push(offeringKey(offering.zone, offering.capacityType));
    }
  }
  return targets;
}

function updateOf(evaluation: OverlayEvaluation, nodePool: string, vmSize: string): InstanceTypeUpdate {
  let byVmSize = evaluation.updates.get(nodePool);
  if (!byVmSize) {
    byVmSize = new Map();
    evaluation.updates.set(nodePool, byVmSize);
  }
  let update = byVmSize.get(vmSize);
  if (!update) {
    update = { prices: new Map() };
    byVmSize.set(vmSize, update);
  }
  return update;
}

function findUpdate(
  evaluation: OverlayEvaluation,
  nodePool: string,
  vmSize: string,
): InstanceTypeUpdate | undefined {
  return evaluation.updates.get(nodePool)?.get(vmSize);
}

function conflicts(evaluation: OverlayEvaluation, overlay: NodeOverlay, targets: OverlayTarget[]): boolean {
  const weight = weightOf(overlay);
  const change = overlay.spec.price ?? overlay.spec.priceAdjustment;
  const capacity = Object.keys(overlay.spec.capacity ?? {});
  return targets.some((target) => {
    const update = findUpdate(evaluation, target.nodePool, target.vmSize);
    if (!update) return false;
    if (change !== undefined) {
      if (target.offerings.some((key) => update.prices.get(key)?.lowestWeight === weight)) return true;
    }
    if (capacity.length > 0 && update.capacity?.lowestWeight === weight) {
      if (capacity.some((name) => update.capacity?.lowestWeightResources.includes(name))) return true;
    }
    return false;
  });
}

function record(evaluation: OverlayEvaluation, overlay: NodeOverlay, targets: OverlayTarget[]): void {
  const weight = weightOf(overlay);
  const change = overlay.spec.price ?? overlay.spec.priceAdjustment;
  const capacity = overlay.spec.capacity ?? {};
  const hasCapacity = Object.keys(capacity).length > 0;
  for (const target of targets) {
    if (change === undefined && !hasCapacity) continue;
    const update = updateOf(evaluation, target.nodePool, target.vmSize);
    if (change !== undefined) {
      for (const key of target.offerings) {
        const earlier = update.prices.get(key);
        if (earlier) earlier.lowestWeight = weight;
        else update.prices.set(key, { change, lowestWeight: weight });
      }
    }
    if (hasCapacity) {
      const resources = { ...capacity, ...update.capacity?.resources };
      update.capacity = { resources, lowestWeight: weight, lowestWeightResources: Object.keys(capacity) };
    }
  }
}

/**
 * Evaluates every overlay against every NodePool's offerings: each overlay's outcome (the
 * ValidationSucceeded condition's content) and what the applied ones change.
 */
export function evaluateNodeOverlays(
  overlays: readonly NodeOverlay[],
  nodePools: readonly OverlayNodePool[],
  offerings: readonly Offering[],
): OverlayEvaluation {
  const evaluation: OverlayEvaluation = { outcomes: new Map(), updates: new Map() };
  const labelled = offerings.map((offering) => ({ offering, labels: offeringLabels(offering) }));
  for (const overlay of orderByWeight(overlays)) {
    const problems = nodeOverlayProblems(overlay);
    if (problems.length > 0) {
      evaluation.outcomes.set(overlay.metadata.name, {
        valid: false,
        reason: NodeOverlayReasons.runtimeValidation,
        message: problems.join('; '),
      });
      continue;
    }
    const targets = targetsOf(overlay.spec.requirements, nodePools, labelled);
    if (conflicts(evaluation, overlay, targets)) {
      evaluation.outcomes.set(overlay.metadata.name, {
        valid: false,
        reason: NodeOverlayReasons.conflict,
        message: 'conflict with another overlay',
      });
      continue;
    }
    record(evaluation, overlay, targets);
    evaluation.outcomes.set(overlay.metadata.name, { valid: true });
  }
  return evaluation;
}

/** An offering's price for a NodePool with the overlays applied; undefined stays undefined unless replaced. */
export function overlaidOfferingPrice(
  evaluation: OverlayEvaluation,
  nodePool: string,
  offering: Pick<Offering, 'vmSize' | 'zone' | 'capacityType'>,
  price: number | undefined,
): number | undefined {
  const change = findUpdate(evaluation, nodePool, offering.vmSize)?.prices.get(
    offeringKey(offering.zone, offering.capacityType),
  )?.change;
  return change === undefined ? price : priceAfter(change, price);
}

/** A known price adjusted; an unknown one (undefined or Infinity) only replaced by an absolute price. */
function priceAfter(change: string, price: number | undefined): number | undefined {
  if (price === undefined || !Number.isFinite(price))
    return PRICE_PATTERN.test(change) ? Number(change) : price;
  return adjustedPrice(price, change);
}

/** The extended resources overlays add to an instance type of a NodePool (empty when none). */
export function overlaidCapacity(
  evaluation: OverlayEvaluation,
  nodePool: string,
  vmSize: string,
): ResourceList {
  return { ...findUpdate(evaluation, nodePool, vmSize)?.capacity?.resources };
}

/**
 * A NodePool's instance types with the overlays applied: offering prices changed, extended resources
 * added to capacity and allocatable (no overhead is reserved from an extended resource). Types no overlay
 * touches are returned as they are.
 */
export function overlaidInstanceTypes(
  evaluation: OverlayEvaluation,
  nodePool: string,
  instanceTypes: readonly InstanceType[],
): InstanceType[] {
  const byVmSize = evaluation.updates.get(nodePool);
  if (!byVmSize) return [...instanceTypes];
  return instanceTypes.map((instanceType) => {
    const update = byVmSize.get(instanceType.name);
    if (!update) return instanceType;
    const added = update.capacity?.resources ?? {};
    return {
      ...instanceType,
      capacity: { ...instanceType.capacity, ...added },
      allocatable: { ...instanceType.allocatable, ...added },
      offerings: instanceType.offerings.map((offering) => {
        const change = update.prices.get(offeringKey(offering.zone, offering.capacityType))?.change;
        if (change === undefined) return offering;
        return { ...offering, price: priceAfter(change, offering.price) ?? Infinity };
      }),
    };
  });
}
