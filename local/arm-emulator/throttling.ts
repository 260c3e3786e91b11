// Compute's request throttling: token buckets per subscription, per region and per policy, with
// the published Virtual Machines limits. A scale factor shrinks every bucket so tests can run into
// the limits with a handful of requests.

export type RequestKind =
  | 'putVm'
  | 'deleteVm'
  | 'restartVm'
  | 'getVm'
  | 'listVms'
  | 'getOperation'
  | 'listSkus'
  | 'listGalleryImageVersions'
  | 'getCapacityReservationGroup'
  | 'listCapacityReservations'
  | 'listUsages'
  | 'spotPlacementScores'
  | 'regularPlacementScores';

export const requestKinds: readonly RequestKind[] = [
  'putVm',
  'deleteVm',
  'restartVm',
  'getVm',
  'listVms',
  'getOperation',
  'listSkus',
  'listGalleryImageVersions',
  'getCapacityReservationGroup',
  'listCapacityReservations',
  'listUsages',
  'spotPlacementScores',
  'regularPlacementScores',
];

export interface ThrottlePolicy {
  /** Policy name as it appears in x-ms-ratelimit-remaining-resource and in 429 details. */
  name: string;
  refillPerMinute: number;
  capacity: number;
}

/**
 * Subscription-level limits per region. The resource SKU list is throttled by ARM, not by these
 * Compute buckets, so it has none. Delete VM shares Put VM's figures (the emulator's assumption).
 *
 * Azure publishes no limit for the location-level requests below, so these are assumptions:
 * - usages: ARM's subscription read limit (a bucket of 250 refilled at 25 a second), per region;
 * - spot and regular placement scores: 10 a minute per subscription each (bucket 10), deliberately
 *   small, since the APIs are recommendation services meant to be called now and then, not per launch.
 */
export const computePolicies: Readonly<Partial<Record<RequestKind, ThrottlePolicy>>> = {
  putVm: { name: 'PutVM', refillPerMinute: 500, capacity: 1500 },
  deleteVm: { name: 'DeleteVM', refillPerMinute: 500, capacity: 1500 },
  getVm: { name: 'GetVM', refillPerMinute: 8000, capacity: 8000 },
  getOperation: { name: 'GetOperation', refillPerMinute: 5000, capacity: 5000 },
  listVms: { name: 'ListVMs', refillPerMinute: 300, capacity: 300 },
  listUsages: { name: 'ListUsages', refillPerMinute: 1500, capacity: 250 },
  spotPlacementScores: { name: 'SpotPlacementScores', refillPerMinute: 10, capacity: 10 },
  regularPlacementScores: { name: 'RegularPlacementScores', refillPerMinute: 10, capacity: 10 },
};

export interface ThrottlingOptions {
  /** Multiplies every refill rate and capacity (0.01 turns Put VM into 5/min, burst 15). Default 1. */
  scale?: number;
  /** Replaces individual policies. */
  policies?: Partial<Record<RequestKind, ThrottlePolicy>>;
  /** false turns bucket throttling off (injected throttle faults still apply). Default true. */
  enabled?: boolean;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
  /** Requests rejected since the bucket was last full, for the 429 details. */
  measured: number;
}

export type ThrottleDecision =
  | { allowed: true; remainingHeader: string | undefined }
  | {
      allowed: false;
      remainingHeader: string | undefined;
      policy: string;
      retryAfterSeconds: number;
      allowedCount: number;
      measuredCount: number;
    };

/** Effective policy after scaling; capacity never below one request. */
export function scalePolicy(policy: ThrottlePolicy, scale: number): ThrottlePolicy {
  return {
    name: policy.name,
    refillPerMinute: Math.max(policy.refillPerMinute * scale, 1e-6),
    capacity: Math.max(Math.floor(policy.capacity * scale), 1),
  };
}

/**
 * The header value: `<policy>3Min` is the whole tokens in the bucket now (what may be spent at
 * once), `<policy>30Min` what could be spent over the next 30 minutes (tokens plus 30 minutes of
 * refill). Token buckets have no fixed windows; this keeps the familiar shape of Compute's header.
 */
export function remainingHeader(policy: ThrottlePolicy, tokens: number): string {
  const now = Math.max(Math.floor(tokens), 0);
  const thirty = Math.floor(tokens + policy.refillPerMinute * 30);
  return `Microsoft.Compute/${policy.name}3Min;${now},Microsoft.Compute/${policy.name}30Min;${thirty}`;
}

export class Throttler {
  private readonly buckets = new Map<string, Bucket>();
  private options: Required<ThrottlingOptions>;

  constructor(
    options: ThrottlingOptions = {},
    private readonly now: () => number = Date.now,
  ) {
    this.options = {
      scale: options.scale ?? 1,
      policies: options.policies ?? {},
      enabled: options.enabled ?? true,
    };
  }

  configure(options: ThrottlingOptions): void {
    this.options = {
      scale: options.scale ?? this.options.scale,
      policies: options.policies ?? this.options.policies,
      enabled: options.enabled ?? this.options.enabled,
    };
    this.buckets.clear();
  }

  reset(): void {
    this.buckets.clear();
  }

  policyFor(kind: RequestKind): ThrottlePolicy | undefined {
    const base = this.options.policies[kind] ?? computePolicies[kind];
    return base ? scalePolicy(base, this.options.scale) : undefined;
  }

  /** Spends one token for a request of `kind` in (subscription, region). */
  take(kind: RequestKind, subscriptionId: string, region: string): ThrottleDecision {
    const policy = this.policyFor(kind);
    if (!policy) return { allowed: true, remainingHeader: undefined };
    const key = `${subscriptionId.toLowerCase()}|${region.toLowerCase()}|${policy.name}`;
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: policy.capacity, updatedAt: now, measured: 0 };
    const perMs = policy.refillPerMinute / 60_000;
    bucket.tokens = Math.min(policy.capacity, bucket.tokens + (now - bucket.updatedAt) * perMs);
    bucket.updatedAt = now;
    this.buckets.set(key, bucket);
    if (bucket.tokens >= policy.capacity) bucket.measured = 0;

    if (!this.options.enabled || bucket.tokens >= 1) {
      if (this.options.enabled) bucket.tokens -= 1;
      return { allowed: true, remainingHeader: remainingHeader(policy, bucket.tokens) };
    }
    bucket.measured += 1;
    const waitMs = (1 - bucket.tokens) / perMs;
    return {
      allowed: false,
      remainingHeader: remainingHeader(policy, bucket.tokens),
      policy: `${policy.name}3Min`,
      retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)),
      allowedCount: policy.capacity,
      measuredCount: policy.capacity + bucket.measured,
    };
  }
}
