// How often a launch monitor polls its VM's long-running operation. Compute allows each subscription
// and region 5,000 operation-status GETs a minute; every launch in flight polls, so the interval that
// keeps all of them inside that budget grows with their number, not with the age of one LRO. One
// launch in flight polls as often as ARM allows (its Retry-After) or the configured minimum, so a
// failure Azure reports is on the NodeClaim within seconds; a thousand share the budget evenly.
//
// The count of launches in flight is the cluster's (NodeClaims whose VM is still being created), the
// same for every Function App instance, so the pacing holds however many instances poll.

/** Compute's operation-status GETs per subscription, region and minute. */
export const OPERATION_GETS_PER_MINUTE = 5_000;
/** The share of that budget the monitors plan to use, leaving room for other callers and bursts. */
export const PLANNED_BUDGET_SHARE = 0.7;
/**
 * Below this many requests left in ARM's short throttling window (x-ms-ratelimit-remaining-resource),
 * the next poll waits the maximum interval: someone else is spending the budget.
 */
export const RATE_LIMIT_LOW_WATERMARK = 1_500;
/** Polls of many launches are spread over the interval plus up to this fraction. */
export const SPREAD_FRACTION = 0.25;

export interface PollPacingInput {
  /** Launches in flight in the cluster, this one included. */
  inFlightLaunches: number;
  /** ARM's Retry-After on the last poll, if any: never poll sooner. */
  retryAfterSeconds?: number;
  /** The fewest requests ARM said were left in its throttling window on the last poll. */
  rateLimitRemaining?: number;
}

export interface PollPacingSettings {
  /** The shortest wait between polls of one launch. */
  minSeconds: number;
  /** The wait while ARM reports its budget running low. */
  maxSeconds: number;
}

export interface PollPacing {
  seconds: number;
  /**
   * True when the shared budget sets the interval: polls of many launches are then spread (jittered)
   * so they do not arrive in lockstep. With few launches the wait is exact, so a failure is seen at the
   * first moment ARM allows.
   */
  spread: boolean;
}

/** Seconds between polls of each launch that keep `inFlight` launches at the planned share of the budget. */
export function budgetIntervalSeconds(inFlight: number): number {
  return (Math.max(inFlight, 1) * 60) / (OPERATION_GETS_PER_MINUTE * PLANNED_BUDGET_SHARE);
}

export function nextPollPacing(input: PollPacingInput, settings: PollPacingSettings): PollPacing {
  const floor = Math.max(settings.minSeconds, input.retryAfterSeconds ?? 0);
  const budget = budgetIntervalSeconds(input.inFlightLaunches);
  const underPressure =
    input.rateLimitRemaining !== undefined && input.rateLimitRemaining < RATE_LIMIT_LOW_WATERMARK;
  if (underPressure) return { seconds: Math.max(floor, budget, settings.maxSeconds), spread: true };
  return budget > floor ? { seconds: budget, spread: true } : { seconds: floor, spread: false };
}

/**
 * Spreads a budget-bound wait over the interval plus up to SPREAD_FRACTION, from a hash of the launch and
 * the attempt, so a replay computes the same value; never shorter than asked.
 */
export function spreadMs(intervalMs: number, key: string, attempt: number): number {
  let hash = 2166136261;
  for (const char of `${key}#${attempt}`) {
    hash ^= char.charCodeAt(0);
    hash = Math.imul(hash, 16777619);
  }
  const unit = (hash >>> 0) / 0xffffffff;
  return Math.round(intervalMs * (1 + SPREAD_FRACTION * unit));
}
