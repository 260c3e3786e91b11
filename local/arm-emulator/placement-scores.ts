// Azure's Spot Placement Scores (POST .../locations/{location}/placementScores/spot/generate), derived
// from the same state that decides launches: the SKU catalog's restrictions, the allocation fault rules and
// the low-priority vCPU quota. Azure's scores are estimates from capacity data that is not current, so a
// caller must not treat them as the truth; the emulator makes that testable: scores see the fault rules
// as they stood `lagMs` ago, and a seeded `errorRate` flips High and Low.

import { invalidParameter } from './errors.js';
import { matchesLaunch, type FaultRegistry, type FaultRule, type LaunchFacts } from './faults.js';
import type { QuotaState } from './quotas.js';
import {
  capabilityValue,
  findSku,
  isKnownSize,
  placementRestriction,
  skuVcpus,
  type ResourceSku,
} from './sku-catalog.js';
import { isObject } from './vm-spec.js';

export type PlacementScoreValue = 'High' | 'Medium' | 'Low' | 'RestrictedSKU' | 'DataNotFoundOrStale';

export interface SpotPlacementScoresInput {
  desiredLocations: string[];
  desiredSizes: Array<{ sku: string }>;
  desiredCount: number;
  availabilityZones: boolean;
}

export interface PlacementScore {
  sku: string;
  region: string;
  /** Only when the request asked for zones (and the size has zones there). */
  availabilityZone?: string;
  score: PlacementScoreValue;
  isQuotaAvailable: boolean;
}

export interface SpotPlacementScoresResponse extends SpotPlacementScoresInput {
  placementScores: PlacementScore[];
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

/** Checks the request body as the API does, answering 400 InvalidParameter naming the field. */
export function parseSpotPlacementScoresInput(body: unknown): SpotPlacementScoresInput {
  if (!isObject(body)) {
    throw invalidParameter(
      'The request body must be a spot placement scores input object.',
      'spotPlacementScoresInput',
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

export interface SpotPlacementScoresDeps {
  catalog: () => readonly ResourceSku[];
  faults: FaultRegistry;
  quotas: QuotaState;
  now?: () => number;
}

export class SpotPlacementScores {
  private settings: PlacementScoreOptions = { ...defaultPlacementScoreOptions };
  private random = seededRandom(defaultPlacementScoreOptions.seed);
  private readonly now: () => number;

  constructor(private readonly deps: SpotPlacementScoresDeps) {
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

  reset(): void {
    this.settings = { ...defaultPlacementScoreOptions };
    this.random = seededRandom(this.settings.seed);
  }

  generate(subscriptionId: string, input: SpotPlacementScoresInput): SpotPlacementScoresResponse {
    const rules = this.deps.faults
      .activeAt(this.now() - this.settings.lagMs)
      .filter(
        (rule) =>
          allocationFaultTypes.has(rule.effect.type) &&
          (rule.match?.vmName === undefined || rule.match.vmName === '*'),
      );
    const placementScores: PlacementScore[] = [];
    for (const region of input.desiredLocations) {
      const freeLowPriority = this.deps.quotas.isKnownLocation(region)
        ? this.deps.quotas.freeLowPriorityCores(subscriptionId, region)
        : 0;
      for (const { sku: size } of input.desiredSizes) {
        const sku = isKnownSize(this.deps.catalog(), size)
          ? findSku(this.deps.catalog(), size, region)
          : undefined;
        const isQuotaAvailable = sku !== undefined && freeLowPriority >= input.desiredCount * skuVcpus(sku);
        const zones = sku ? zonesOf(sku, region) : [];
        const entry = (zone: string | undefined, score: PlacementScoreValue): PlacementScore => ({
          sku: size,
          region,
          ...(zone !== undefined ? { availabilityZone: zone } : {}),
          score: this.estimate(score),
          isQuotaAvailable,
        });
        if (input.availabilityZones && zones.length > 0) {
          for (const zone of zones)
            placementScores.push(entry(zone, this.zonalScore(sku, region, zone, rules)));
        } else {
          placementScores.push(entry(undefined, this.regionalScore(sku, region, zones, rules)));
        }
      }
    }
    return { ...input, placementScores };
  }

  /** The truth as of `lagMs` ago, then, with probability errorRate, High and Low swapped. */
  private estimate(score: PlacementScoreValue): PlacementScoreValue {
    if (score !== 'High' && score !== 'Low') return score;
    const flip = this.random() < this.settings.errorRate;
    if (!flip) return score;
    return score === 'High' ? 'Low' : 'High';
  }

  private zonalScore(
    sku: ResourceSku | undefined,
    region: string,
    zone: string,
    rules: readonly FaultRule[],
  ): PlacementScoreValue {
    if (!sku) return 'DataNotFoundOrStale';
    if (!isSpotCapable(sku) || placementRestriction(sku, zone)) return 'RestrictedSKU';
    return spotLaunchFails(rules, sku, region, zone) ? 'Low' : 'High';
  }

  /**
   * A regional score: Low when a zone-less spot launch would fail, or when it would in every zone the size
   * may use; Medium when it would in some of them; otherwise High.
   */
  private regionalScore(
    sku: ResourceSku | undefined,
    region: string,
    zones: readonly string[],
    rules: readonly FaultRule[],
  ): PlacementScoreValue {
    if (!sku) return 'DataNotFoundOrStale';
    if (!isSpotCapable(sku) || placementRestriction(sku, undefined)) return 'RestrictedSKU';
    const open = zones.filter((zone) => !placementRestriction(sku, zone));
    if (zones.length > 0 && open.length === 0) return 'RestrictedSKU';
    if (spotLaunchFails(rules, sku, region, undefined)) return 'Low';
    const failing = open.filter((zone) => spotLaunchFails(rules, sku, region, zone)).length;
    if (failing === 0) return 'High';
    return failing === open.length ? 'Low' : 'Medium';
  }
}

function zonesOf(sku: ResourceSku, region: string): string[] {
  const info = sku.locationInfo.find((l) => l.location.toLowerCase() === region.toLowerCase());
  return info ? [...info.zones] : [];
}

function isSpotCapable(sku: ResourceSku): boolean {
  return capabilityValue(sku, 'LowPriorityCapable') !== 'False';
}

/** Whether a spot launch of `sku` in (region, zone) would meet one of the allocation fault rules. */
function spotLaunchFails(
  rules: readonly FaultRule[],
  sku: ResourceSku,
  region: string,
  zone: string | undefined,
): boolean {
  const facts: LaunchFacts = { vmName: '', vmSize: sku.name, zone, priority: 'Spot', location: region };
  return rules.some((rule) => {
    const { vmName: _ignored, ...match } = rule.match ?? {};
    return matchesLaunch(match, facts);
  });
}
