// The one conflict-retry loop (client-go's retry.RetryOnConflict). Every Kubernetes write here carries the
// resourceVersion it was computed from; a 409 means the object changed since, so the write is computed
// again from a fresh read instead of overwriting what someone else wrote.
import { isConflict } from './errors.js';

/** Writes per call, the first included; a conflict after the last is thrown to the caller's retry. */
export const CONFLICT_ATTEMPTS = 5;

/**
 * Runs `attempt` on `initial`; on a 409 reads the object again with `reread` and runs `attempt` on that.
 * `attempt` decides from the object it is given (including that nothing needs writing). Undefined when
 * `reread` finds the object gone.
 */
export async function retryOnConflict<T, R>(
  initial: T,
  attempt: (current: T) => Promise<R>,
  reread: (stale: T) => Promise<T | undefined>,
): Promise<R | undefined> {
  let current: T | undefined = initial;
  for (let tries = 1; current !== undefined; tries++) {
    try {
      return await attempt(current);
    } catch (error) {
      if (!isConflict(error) || tries >= CONFLICT_ATTEMPTS) throw error;
      current = await reread(current);
    }
  }
  return undefined;
}
