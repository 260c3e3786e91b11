// NodePools compiled into NodeClaim templates (Karpenter's NodeClaimTemplate): requirements from the
// NodePool's requirements, labels and its own name; the taints that repel pods; instance types with
// their DaemonSet overhead; what is left of the NodePool's limits. Per pod variant, the template keeps
// its answers (tolerated?, compatible instance types) so identical pods ask once.
import { WellKnown } from '../../models/karpenter.js';
import type { Taint } from '../../models/kube.js';
import { daemonOverheadByInstanceType, type CompiledDaemonSet, type DaemonOverhead } from './daemonsets.js';
import type { ExclusionCause } from '../explain/decision-record.js';
import {
  cheapestOffering,
  compileInstanceType,
  instanceTypeMismatch,
  instanceTypeValues,
  offeredIgnoringAvailability,
  type CompiledInstanceType,
} from './instance-types.js';
import type { PodVariant } from './pods.js';
import {
  incompatibility,
  labelRequirements,
  mergeRequirements,
  requirementMapOf,
  type RequirementMap,
} from './requirement-map.js';
import { formatAmount, parseResources, type Resources } from './resources.js';
import { untoleratedTaint } from './taints.js';
import type { SchedulingNodePool } from './types.js';
import { exactly, toRequirements } from './value-set.js';

/** Why a NodePool turns a pod down: the cause as a stable name, and the one line a user reads. */
export interface Rejection {
  readonly cause: ExclusionCause;
  readonly reason: string;
}

export type TemplateFit = { requirements: RequirementMap; instanceTypes: CompiledInstanceType[] } | Rejection;

export class Template {
  readonly weight: number;
  readonly labels: Readonly<Record<string, string>>;
  /** spec.taints only: startupTaints are removed before pods run, so they do not repel (as Karpenter). */
  readonly taints: readonly Taint[];
  readonly requirements: RequirementMap;
  readonly instanceTypes: readonly CompiledInstanceType[];
  /**
   * Instance types the NodePool's requirements allow whose offerings there are all unavailable (failure
   * memory, quota): they take no part, but a pod they alone would fit is told NoOffering.
   */
  private readonly unavailable: readonly CompiledInstanceType[];
  readonly daemonOverhead: ReadonlyMap<CompiledInstanceType, DaemonOverhead>;
  /** Per instance type, allocatable minus its DaemonSet overhead: what pods may use. */
  readonly room: ReadonlyMap<CompiledInstanceType, Resources>;
  /** Limits minus usage per limited resource; undefined when the NodePool has no limits. */
  readonly remaining: Resources | undefined;
  /** Why this NodePool can take no pod at all (an unreadable spec); reported for every pod. */
  readonly error: string | undefined;
  private readonly repelling = new Map<number, Taint | null>();
  private readonly fits = new Map<number, TemplateFit>();
  private readonly fitting = new Map<number, CompiledInstanceType[]>();
  private readonly priceOrders = new Map<string, Map<CompiledInstanceType, number>>();

  constructor(
    readonly name: string,
    parts: {
      weight: number;
      labels: Record<string, string>;
      taints: readonly Taint[];
      requirements: RequirementMap;
      instanceTypes: readonly CompiledInstanceType[];
      daemonSets: readonly CompiledDaemonSet[];
      remaining: Resources | undefined;
      error: string | undefined;
    },
  ) {
    this.weight = parts.weight;
    this.labels = parts.labels;
    this.taints = parts.taints;
    this.requirements = parts.requirements;
    this.remaining = parts.remaining;
    this.error = parts.error;
    // Instance types the NodePool's own requirements rule out never take part.
    const allowed = parts.instanceTypes.filter(
      (it) => instanceTypeMismatch(it, parts.requirements) === undefined,
    );
    this.instanceTypes = allowed.filter((it) => cheapestOffering(it, parts.requirements) !== undefined);
    this.unavailable = allowed.filter(
      (it) =>
        cheapestOffering(it, parts.requirements) === undefined &&
        offeredIgnoringAvailability(it, parts.requirements),
    );
    this.daemonOverhead = daemonOverheadByInstanceType(parts.daemonSets, this);
    const room = new Map<CompiledInstanceType, Resources>();
    for (const it of this.instanceTypes) {
      const left = new Map(it.allocatable);
      for (const [name, amount] of this.daemonOverhead.get(it)?.requests ?? []) {
        left.set(name, (left.get(name) ?? 0) - amount);
      }
      room.set(it, left);
    }
    this.room = room;
  }

  /** The taint the pod does not tolerate, or undefined. */
  repels(variant: PodVariant): Taint | undefined {
    let taint = this.repelling.get(variant.id);
    if (taint === undefined) {
      taint = untoleratedTaint(this.taints, variant.tolerations) ?? null;
      this.repelling.set(variant.id, taint);
    }
    return taint ?? undefined;
  }

  /** The template's requirements narrowed by the pod's, and the instance types that allow them. */
  compatibleWith(variant: PodVariant): TemplateFit {
    let fit = this.fits.get(variant.id);
    if (fit) return fit;
    fit = this.computeFit(variant);
    this.fits.set(variant.id, fit);
    return fit;
  }

  private computeFit(variant: PodVariant): TemplateFit {
    const fit = this.fitFor(variant.requirements);
    if (!('reason' in fit) || variant.podRequirements === undefined) return fit;
    // The pod's own requirements are asked first: only a NodePool they allow and its volumes rule out
    // is the volumes' doing.
    const own = this.fitFor(variant.podRequirements);
    if ('reason' in own) return own;
    const volumes = describeRequirements(variant.volumeRequirements ?? new Map());
    return { cause: 'VolumeZone', reason: `the pod's volumes require ${volumes}: ${fit.reason}` };
  }

  private fitFor(podRequirements: RequirementMap): TemplateFit {
    const incompatible = incompatibility(this.requirements, podRequirements);
    if (incompatible) return { cause: 'Requirement', reason: `incompatible requirements, ${incompatible}` };
    const requirements = mergeRequirements(this.requirements, podRequirements);
    const compatible = this.instanceTypes.filter(
      (it) => instanceTypeMismatch(it, requirements) === undefined,
    );
    if (compatible.length === 0) {
      if (this.onlyUnavailable(compatible, requirements)) return this.noOffering(requirements);
      return { cause: 'Requirement', reason: `no instance type satisfies ${this.mismatch(requirements)}` };
    }
    const offered = compatible.filter((it) => cheapestOffering(it, requirements) !== undefined);
    if (offered.length === 0) {
      if (this.onlyUnavailable(compatible, requirements)) return this.noOffering(requirements);
      return {
        cause: 'Requirement',
        reason: `no instance type is offered in ${describeZonesAndCapacityTypes(requirements)}`,
      };
    }
    return { requirements, instanceTypes: offered };
  }

  /** Whether some option would take the requirements but for offerings marked unavailable. */
  private onlyUnavailable(
    compatible: readonly CompiledInstanceType[],
    requirements: RequirementMap,
  ): boolean {
    const offered = (it: CompiledInstanceType) =>
      instanceTypeMismatch(it, requirements) === undefined && offeredIgnoringAvailability(it, requirements);
    return compatible.some(offered) || this.unavailable.some(offered);
  }

  private noOffering(requirements: RequirementMap): Rejection {
    return {
      cause: 'NoOffering',
      reason: `instance types fit, but none has an available offering in ${describeZonesAndCapacityTypes(requirements)} (recent launch failures, quota or reservations)`,
    };
  }

  /** The requirement most instance types fail, for the message. */
  private mismatch(requirements: RequirementMap): string {
    const counts = new Map<string, number>();
    for (const it of this.instanceTypes) {
      const key = instanceTypeMismatch(it, requirements);
      if (key) counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    const [key] = [...counts].sort((a, b) => b[1] - a[1])[0] ?? [];
    const set = key === undefined ? undefined : requirements.get(key);
    if (key === undefined || set === undefined)
      return `the requirements (${this.instanceTypes.length} instance types)`;
    const wanted = toRequirements(key, set)
      .map((r) => `${r.key} ${r.operator} [${(r.values ?? []).join(', ')}]`)
      .join(' and ');
    return `${wanted} (none of ${this.instanceTypes.length} instance types)`;
  }

  /** The options a variant's pod alone fits, computed once per variant. */
  fittingFor(variant: PodVariant, compute: () => CompiledInstanceType[]): CompiledInstanceType[] {
    let fitting = this.fitting.get(variant.id);
    if (!fitting) {
      fitting = compute();
      this.fitting.set(variant.id, fitting);
    }
    return fitting;
  }

  /**
   * Each option's cheapest available offering price under the zone and capacity-type requirements,
   * computed once per distinct pair of those requirements (NodeClaims mostly share a few).
   */
  pricesUnder(requirements: RequirementMap): Map<CompiledInstanceType, number> {
    const zones = requirements.get(WellKnown.zoneLabel);
    const capacityTypes = requirements.get(WellKnown.capacityTypeLabel);
    const key = JSON.stringify([
      zones ? toRequirements(WellKnown.zoneLabel, zones) : null,
      capacityTypes ? toRequirements(WellKnown.capacityTypeLabel, capacityTypes) : null,
    ]);
    let prices = this.priceOrders.get(key);
    if (!prices) {
      prices = new Map();
      for (const it of this.instanceTypes)
        prices.set(it, cheapestOffering(it, requirements)?.price ?? Infinity);
      this.priceOrders.set(key, prices);
    }
    return prices;
  }

  /** Why no instance type has room for the requests, naming the resource. */
  shortfall(instanceTypes: readonly CompiledInstanceType[], requests: Resources): string {
    for (const [name, amount] of requests) {
      let largest = 0;
      for (const it of instanceTypes) largest = Math.max(largest, this.room.get(it)?.get(name) ?? 0);
      if (amount > largest) {
        return `${name} request ${formatAmount(name, amount)} exceeds the largest allocatable ${formatAmount(name, Math.max(0, largest))} after DaemonSets`;
      }
    }
    return 'no single instance type fits every request together, or host ports conflict with DaemonSets';
  }

  /** Label values the template's instance types can take, for topology domains. */
  *domainValues(): Iterable<[string, string]> {
    for (const it of this.instanceTypes) {
      for (const key of [...Object.keys(it.labels), WellKnown.zoneLabel, WellKnown.capacityTypeLabel]) {
        for (const value of instanceTypeValues(it, key, this.requirements)) yield [key, value];
      }
    }
  }
}

function describeRequirements(requirements: RequirementMap): string {
  return [...requirements]
    .flatMap(([key, set]) => toRequirements(key, set))
    .map((r) => `${r.key} ${r.operator} [${(r.values ?? []).join(', ')}]`)
    .join(' and ');
}

/** The zone and capacity-type requirements, for a message (or "any zone" when there are none). */
export function describeZonesAndCapacityTypes(requirements: RequirementMap): string {
  const keys: string[] = [WellKnown.zoneLabel, WellKnown.capacityTypeLabel];
  const text = describeRequirements(new Map([...requirements].filter(([key]) => keys.includes(key))));
  return text === '' ? 'any zone and capacity type' : text;
}

/** Karpenter's OrderByWeight: higher weight first, ties by name descending. */
export function compareTemplates(a: Template, b: Template): number {
  if (a.weight !== b.weight) return b.weight - a.weight;
  return a.name < b.name ? 1 : a.name > b.name ? -1 : 0;
}

export function compileTemplate(
  nodePool: SchedulingNodePool,
  instanceTypeCache: Map<object, CompiledInstanceType | string>,
  daemonSets: readonly CompiledDaemonSet[],
): Template {
  const base = {
    weight: nodePool.weight ?? 0,
    labels: { ...nodePool.labels, [WellKnown.nodePoolLabel]: nodePool.name },
    taints: nodePool.taints ?? [],
    daemonSets,
  };
  const fail = (error: string) =>
    new Template(nodePool.name, {
      ...base,
      requirements: new Map(),
      instanceTypes: [],
      remaining: undefined,
      error,
    });
  if (nodePool.notReady !== undefined) return fail(nodePool.notReady);
  const requirements = requirementMapOf(nodePool.requirements, labelRequirements(nodePool.labels));
  if ('error' in requirements) return fail(`spec.template.spec.requirements: ${requirements.error}`);
  requirements.requirements.set(WellKnown.nodePoolLabel, exactly(nodePool.name));

  let remaining: Resources | undefined;
  if (nodePool.limits !== undefined) {
    const limits = parseResources(nodePool.limits, 'spec.limits');
    if ('error' in limits) return fail(limits.error);
    const usage = parseResources(nodePool.usage, 'usage');
    if ('error' in usage) return fail(usage.error);
    remaining = new Map();
    // Only limited resources are tracked; a limit of 0 is kept so nothing fits it.
    for (const name of Object.keys(nodePool.limits)) {
      remaining.set(name, (limits.resources.get(name) ?? 0) - (usage.resources.get(name) ?? 0));
    }
  }

  const instanceTypes: CompiledInstanceType[] = [];
  for (const instanceType of nodePool.instanceTypes) {
    let compiled = instanceTypeCache.get(instanceType);
    if (compiled === undefined) {
      const result = compileInstanceType(instanceType);
      compiled = 'error' in result ? result.error : result.instanceType;
      instanceTypeCache.set(instanceType, compiled);
    }
    // An instance type with an unreadable allocatable is left out rather than failing the NodePool.
    if (typeof compiled !== 'string') instanceTypes.push(compiled);
  }
  return new Template(nodePool.name, {
    ...base,
    requirements: mergeRequirements(requirements.requirements, new Map()),
    instanceTypes,
    remaining,
    error: undefined,
  });
}
