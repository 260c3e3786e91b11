// Exponential backoff with jitter, as a pure function of the attempt number, so restarts of watches and
// retries of queue sends spread out instead of hammering a recovering API server or storage account.

export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
  /** Growth per attempt, e.g. 2. */
  factor: number;
  /** Fraction of the delay that is randomised, 0..1: 0.2 means the delay lies in [0.8·d, d]. */
  jitter: number;
}

export const defaultBackoff: BackoffPolicy = { initialMs: 500, maxMs: 30_000, factor: 2, jitter: 0.2 };

/**
 * Delay before retry number `attempt` (1 for the first retry). `random` returns a number in [0, 1);
 * pass a constant in tests.
 */
export function backoffDelay(
  attempt: number,
  policy: BackoffPolicy,
  random: () => number = Math.random,
): number {
  const exponent = Math.max(0, attempt - 1);
  const ceiling = Math.min(policy.maxMs, policy.initialMs * policy.factor ** exponent);
  const jitter = Math.min(1, Math.max(0, policy.jitter));
  return Math.round(ceiling * (1 - jitter * random()));
}

export function validateBackoff(policy: BackoffPolicy): BackoffPolicy {
  if (!(policy.initialMs > 0)) throw new RangeError('backoff initialMs must be positive');
  if (!(policy.maxMs >= policy.initialMs)) throw new RangeError('backoff maxMs must be at least initialMs');
  if (!(policy.factor >= 1)) throw new RangeError('backoff factor must be at least 1');
  if (!(policy.jitter >= 0 && policy.jitter <= 1)) throw new RangeError('backoff jitter must lie in [0, 1]');
  return policy;
}
