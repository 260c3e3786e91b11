// Azure's placement scores, for spot VMs (POST .../locations/{location}/placementScores/spot/generate) and
// for regular, on-demand ones (.../placementScores/regular/generate, the Compute Placement Scores API,
// which Azure enables only for subscriptions Microsoft approved), derived from the same state that decides
// launches: the SKU catalog's restrictions, the allocation fault rules and the vCPU quota the VMs would be
// charged to. Both APIs share one request shape, one scoring and one estimate model, so they differ here
// only in the priority a launch is matched with and the quotas it would use. Azure's scores are estimates
// from capacity data that is not current, so a caller must not treat them as the truth; the emulator
// makes that testable: scores see the fault rules as they stood `lagMs` ago, and a seeded `errorRate`
// flips High and Low.

import { ArmError, invalidParameter } from './errors.js';
import { matchesLaunch, type FaultRegistry, type FaultRule, type LaunchFacts } from './faults.js';
import { chargedQuotas, type QuotaState } from './quotas.js';
import {
  capabilityValue,
  findSku,
  isKnownSize,
  placementRestriction,
  skuVcpus,
  type ResourceSku,
} from './sku-catalog.js';
import { isObject, type VmPriority } from './vm-spec.js';

export type PlacementScoreValue = 'High' | 'Medium' | 'Low' | 'RestrictedSKU' | 'DataNotFoundOrStale';

/** Which API: spot scores (`placementScores/spot`) or regular, on-demand ones (`placementScores/regular`). */
export type ScoredPriority = 'spot' | 'regular';

/** The request both APIs take. */
export interface PlacementScoresInput {
  desiredLocations: string[];
  desiredSizes: Array<{ sku: string }>;
  desiredCount: number;
  availabilityZones: boolean;
}

export type SpotPlacementScoresInput = PlacementScoresInput;

export interface PlacementScore {
  sku: string;
  region: string;
  /** Only when the request asked for zones (and the size has zones there). */
  availabilityZone?: string;
  score: PlacementScoreValue;
  isQuotaAvailable: boolean;
}

/** The regular API's entry also ranks it: 0 to 9, higher is better. */
export interface RegularPlacementScore extends PlacementScore {
  placementPreference: number;
}

export interface SpotPlacementScoresResponse extends PlacementScoresInput {
  placementScores: PlacementScore[];
}

export interface RegularPlacementScoresResponse extends PlacementScoresInput {
  placementScores: RegularPlacementScore[];
}

export interface PlacementScoreOptions {
  /** The scores reflect the fault rules as they stood this long ago. Default 0. */
  lagMs: number;
  /** Probability that a High or Low score is flipped to the other. Default 0. */
  errorRate: number;
  /** Seeds the flips: the same seed and the same requests give the same flips. Default 1. */
  seed: number;
}

export const defaultPlacementScoreOptions: Readonly<PlacementScoreOptions> = {
  lagMs: 0,
  errorRate: 0,
  seed: 1,
};

/** Azure's documented bounds: up to eight regions and five VM sizes per request. */
export const maxDesiredLocations = 8;
export const maxDesiredSizes = 5;

const allocationFaultTypes = new Set<string>([
  'AllocationFailed',
  'ZonalAllocationFailed',
  'OverconstrainedAllocationRequest',
  'OverconstrainedZonalAllocationRequest',
]);

/**
 * Azure documents the 0-9 range (higher better) but not how it follows the score; the emulator's
 * assumption: High 9, Medium 5, Low 1, a restricted or unscored size 0.
 */
const placementPreferences: Readonly<Record<PlacementScoreValue, number>> = {
  High: 9,
  Medium: 5,
  Low: 1,
  RestrictedSKU: 0,
  DataNotFoundOrStale: 0,
};

/** What each API calls its request body, and the priority its launches are matched with. */
const apis: Readonly<Record<ScoredPriority, { input: string; description: string; priority: VmPriority }>> = {
  spot: { input: 'spotPlacementScoresInput', description: 'spot placement scores', priority: 'Spot' },
  regular: {
    input: 'computePlacementScoresInput',
    description: 'compute placement scores',
    priority: 'Regular',
  },
};

/** Checks the request body as the API does, answering 400 InvalidParameter naming the field. */
export function parsePlacementScoresInput(body: unknown, kind: ScoredPriority): PlacementScoresInput {
  if (!isObject(body)) {
    throw invalidParameter(
      `The request body must be a ${apis[kind].description} input object.`,
      apis[kind].input,
    );
  }
  const locations = body.desiredLocations;
  if (
    !Array.isArray(locations) ||
    locations.length < 1 ||
    locations.length > maxDesiredLocations ||
    !locations.every((l) => typeof l === 'string' && l.trim() !== '')
  ) {
    throw invalidParameter(
      `The value of parameter 'desiredLocations' is invalid: between 1 and ${maxDesiredLocations} location names are required.`,
      'desiredLocations',
    );
  }
  const sizes = body.desiredSizes;
  if (!Array.isArray(sizes) || sizes.length < 1 || sizes.length > maxDesiredSizes) {
    throw invalidParameter(
      `The value of parameter 'desiredSizes' is invalid: between 1 and ${maxDesiredSizes} sizes are required.`,
      'desiredSizes',
    );
  }
  const desiredSizes = (sizes as unknown[]).map((size, index) => {
    if (!isObject(size) || typeof size.sku !== 'string' || size.sku.trim() === '') {
      throw invalidParameter(
        `The value of parameter 'desiredSizes[${index}].sku' is invalid: a VM size name is required.`,
        `desiredSizes[${index}].sku`,
      );
    }
    return { sku: size.sku };
  });
  const count = body.desiredCount;
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1) {
    throw invalidParameter(
      "The value of parameter 'desiredCount' is invalid: a whole number of VMs, 1 or more, is required.",
      'desiredCount',
    );
  }
  const zones = body.availabilityZones ?? false;
  if (typeof zones !== 'boolean') {
    throw invalidParameter(
      "The value of parameter 'availabilityZones' is invalid: true or false is required.",
      'availabilityZones',
    );
  }
  return {
    desiredLocations: locations as string[],
    desiredSizes,
    desiredCount: count,
    availabilityZones: zones,
  };
}

/** Validates a change of options (controls and admin API); throws with the problem. */
export function mergePlacementScoreOptions(
  current: PlacementScoreOptions,
  change: Partial<PlacementScoreOptions>,
): PlacementScoreOptions {
  const merged = { ...current, ...change };
  if (typeof merged.lagMs !== 'number' || !(merged.lagMs >= 0)) throw new Error('lagMs must be 0 or more');
  if (typeof merged.errorRate !== 'number' || !(merged.errorRate >= 0 && merged.errorRate <= 1)) {
    throw new Error('errorRate must be between 0 and 1');
  }
  if (!Number.isInteger(merged.seed)) throw new Error('seed must be an integer');
  return merged;
}

/** mulberry32: small, fast and deterministic; the flips need reproducibility, not quality. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface PlacementScoresDeps {
  catalog: () => readonly ResourceSku[];
  faults: FaultRegistry;
  quotas: QuotaState;
  now?: () => number;
}

/**
 * The regular API for a subscription Microsoft has not enabled it for. Azure documents that access must be
 * requested but not the refusal; this code and message are the emulator's, not observed.
 */
export function regularPlacementScoresNotEnabled(subscriptionId: string): ArmError {
  return new ArmError(
    403,
    'FeatureNotEnabledForSubscription',
    `The Compute Placement Scores API (placementScores/regular) is not enabled for subscription '${subscriptionId}'. ` +
      'Access is granted to approved subscriptions only; contact your Microsoft account representative.',
  );
}

export class PlacementScores {
  private settings: PlacementScoreOptions = { ...defaultPlacementScoreOptions };
  private random = seededRandom(defaultPlacementScoreOptions.seed);
  private regularEnabled = true;
  private readonly now: () => number;

  constructor(private readonly deps: PlacementScoresDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** Merges a change; a `seed` in it restarts the flip sequence. */
  configure(change: Partial<PlacementScoreOptions>): PlacementScoreOptions {
    this.settings = mergePlacementScoreOptions(this.settings, change);
    if (change.seed !== undefined) this.random = seededRandom(this.settings.seed);
    return { ...this.settings };
  }

  options(): PlacementScoreOptions {
    return { ...this.settings };
  }

  /** Whether the regular API answers (Azure enables it per subscription; the emulator for all of them). */
  setRegularEnabled(enabled: boolean): void {
    this.regularEnabled = enabled;
  }

  isRegularEnabled(): boolean {
    return this.regularEnabled;
  }

  reset(): void {
    this.settings = { ...defaultPlacementScoreOptions };
    this.random = seededRandom(this.settings.seed);
    this.regularEnabled = true;
  }

  /** Answers a POST to the `kind` API: refused when it is not enabled, then the body checked, then scored. */
  generate(
    kind: ScoredPriority,
    subscriptionId: string,
    body: unknown,
  ): SpotPlacementScoresResponse | RegularPlacementScoresResponse {
    if (kind === 'regular' && !this.regularEnabled) throw regularPlacementScoresNotEnabled(subscriptionId);
    const input = parsePlacementScoresInput(body, kind);
    const priority = apis[kind].priority;
    const rules = this.deps.faults
      .activeAt(this.now() - this.settings.lagMs)
      .filter(
        (rule) =>
          allocationFaultTypes.has(rule.effect.type) &&
          (rule.match?.vmName === undefined || rule.match.vmName === '*'),
      );
    const placementScores: PlacementScore[] = [];
    for (const region of input.desiredLocations) {
      const free = this.freeQuota(subscriptionId, region);
      const scorer = new LaunchScorer(rules, priority, region);
      for (const { sku: size } of input.desiredSizes) {
        const sku = isKnownSize(this.deps.catalog(), size)
          ? findSku(this.deps.catalog(), size, region)
          : undefined;
        const isQuotaAvailable =
          sku !== undefined &&
          chargedQuotas(priority, sku.family).every(
            (quota) => free(quota) >= input.desiredCount * skuVcpus(sku),
          );
        const zones = sku ? zonesOf(sku, region) : [];
        const entry = (zone: string | undefined, truth: PlacementScoreValue): PlacementScore => {
          const score = this.estimate(truth);
          return {
            sku: size,
            region,
            ...(zone !== undefined ? { availabilityZone: zone } : {}),
            score,
            isQuotaAvailable,
            ...(kind === 'regular' ? { placementPreference: placementPreferences[score] } : {}),
          };
        };
        if (input.availabilityZones && zones.length > 0) {
          for (const zone of zones) placementScores.push(entry(zone, scorer.zonal(sku, zone)));
        } else {
          placementScores.push(entry(undefined, scorer.regional(sku, zones)));
        }
      }
    }
    return { ...input, placementScores };
  }

  /** Free vCPUs by quota name in `region`, as the usages API shows them (fault rules included). */
  private freeQuota(subscriptionId: string, region: string): (quota: string) => number {
    if (!this.deps.quotas.isKnownLocation(region)) return () => 0;
    const usages = this.deps.quotas.usages(region, subscriptionId);
    return (quota) => {
      const usage = usages.find((u) => u.name.value.toLowerCase() === quota.toLowerCase());
      return usage ? Math.max(usage.limit - usage.currentValue, 0) : 0;
    };
  }

  /** The truth as of `lagMs` ago, then, with probability errorRate, High and Low swapped. */
  private estimate(score: PlacementScoreValue): PlacementScoreValue {
    if (score !== 'High' && score !== 'Low') return score;
    const flip = this.random() < this.settings.errorRate;
    if (!flip) return score;
    return score === 'High' ? 'Low' : 'High';
  }
}

/** Scores a size in one region for launches of one priority, against the allocation fault rules. */
class LaunchScorer {
  constructor(
    private readonly rules: readonly FaultRule[],
    private readonly priority: VmPriority,
    private readonly region: string,
  ) {}

  zonal(sku: ResourceSku | undefined, zone: string): PlacementScoreValue {
    if (!sku) return 'DataNotFoundOrStale';
    if (!this.capable(sku) || placementRestriction(sku, zone)) return 'RestrictedSKU';
    return this.fails(sku, zone) ? 'Low' : 'High';
  }

  /**
   * A regional score: Low when a zone-less launch would fail, or when it would in every zone the size may
   * use; Medium when it would in some of them; otherwise High.
   */
  regional(sku: ResourceSku | undefined, zones: readonly string[]): PlacementScoreValue {
    if (!sku) return 'DataNotFoundOrStale';
    if (!this.capable(sku) || placementRestriction(sku, undefined)) return 'RestrictedSKU';
    const open = zones.filter((zone) => !placementRestriction(sku, zone));
    if (zones.length > 0 && open.length === 0) return 'RestrictedSKU';
    if (this.fails(sku, undefined)) return 'Low';
    const failing = open.filter((zone) => this.fails(sku, zone)).length;
    if (failing === 0) return 'High';
    return failing === open.length ? 'Low' : 'Medium';
  }

  /** Every size may run on demand; spot only where the catalog says it is LowPriorityCapable. */
  private capable(sku: ResourceSku): boolean {
    return this.priority === 'Regular' || capabilityValue(sku, 'LowPriorityCapable') !== 'False';
  }

  /**
   * Whether a launch of `sku` at this priority in (region, zone) would meet one of the rules: a rule without
   * a priority matches every launch, one with a priority only launches of it.
   */
  private fails(sku: ResourceSku, zone: string | undefined): boolean {
    const facts: LaunchFacts = {
      vmName: '',
      vmSize: sku.name,
      zone,
      priority: this.priority,
      location: this.region,
    };
    return this.rules.some((rule) => {
      const { vmName: _ignored, ...match } = rule.match ?? {};
      return matchesLaunch(match, facts);
    });
  }
}

function zonesOf(sku: ResourceSku, region: string): string[] {
  const info = sku.locationInfo.find((l) => l.location.toLowerCase() === region.toLowerCase());
  return info ? [...info.zones] : [];
}
