// How a durable workflow rides out an outage of the Kubernetes API server or ARM. An activity that fails
// with a transient error (connection refused or reset, a request timed out, 429, 5xx) would otherwise end
// its orchestration Failed, and the sweep would then abandon the work in flight: untaint, delete a
// replacement whose VM is already up, and create it again. Instead the activity answers "transient" and
// the orchestration waits on a durable timer, with a doubling backoff, and calls it again; anything else
// (a bug, a 4xx) still fails at once, as before. Only after OUTAGE_GIVE_UP_MS of transient failures does
// the workflow fail, and the sweep's repair takes over.
//
// The activity's answer is tagged, so a history recorded before activities were wrapped (a bare result)
// replays unchanged, and a workflow that never meets an outage yields exactly the tasks it yielded before.
import type * as df from 'durable-functions';
import { isTransientCloudError } from '../../cloudprovider/types.js';
import { statusCodeOf } from '../../kube/errors.js';
import { activity, type ActivityFunctionDefinition, type HandlerContext } from '../../runtime/definitions.js';

/** The first wait after a transient failure; it doubles up to OUTAGE_MAX_WAIT_MS. */
export const OUTAGE_FIRST_WAIT_MS = 1_000;
export const OUTAGE_MAX_WAIT_MS = 30_000;
/** How long transient failures of one call are waited out before the workflow fails. */
export const OUTAGE_GIVE_UP_MS = 10 * 60_000;

const TRANSIENT_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
]);

function errorCodeOf(error: object): string | undefined {
  return 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}

/**
 * A Kubernetes or cloud request that got no usable answer now but may get one later: the cloud
 * provider's TransientCloudError (it maps throttling, server errors and unanswered requests to it), a
 * Kubernetes 429 or 5xx, timed out, or no connection at all (looked for along the error's causes, where
 * fetch puts the socket's error).
 */
export function isTransientRequestError(error: unknown): boolean {
  if (isTransientCloudError(error)) return true;
  const status = statusCodeOf(error);
  if (status !== undefined && (status === 429 || status >= 500)) return true;
  for (let cause: unknown = error, depth = 0; cause && typeof cause === 'object' && depth < 5; depth++) {
    const code = errorCodeOf(cause);
    if (code && TRANSIENT_CODES.has(code)) return true;
    if (cause instanceof Error && (cause.name === 'AbortError' || cause.name === 'TimeoutError')) return true;
    cause = (cause as { cause?: unknown }).cause;
  }
  return false;
}

const TAG = 'outage-retry/v1';

export type ActivityAttempt = { tag: typeof TAG; value: unknown } | { tag: typeof TAG; transient: string };

function isAttempt(result: unknown): result is ActivityAttempt {
  return typeof result === 'object' && result !== null && (result as { tag?: unknown }).tag === TAG;
}

/** What the activity itself answered, for readers of raw activity results (the local scenarios' relay). */
export function activityAnswerOf(result: unknown): unknown {
  if (!isAttempt(result)) return result;
  return 'transient' in result ? undefined : (result as { value?: unknown }).value;
}

/** Wraps an activity's handler: a transient error becomes an answer the orchestration waits out. */
export function answeringTransientErrors<Input>(
  handler: (input: Input, context: HandlerContext) => Promise<unknown>,
): (input: Input, context: HandlerContext) => Promise<ActivityAttempt> {
  return async (input, context) => {
    try {
      return { tag: TAG, value: await handler(input, context) };
    } catch (error) {
      if (!isTransientRequestError(error)) throw error;
      const message = error instanceof Error ? error.message : String(error);
      context.log.warn('activity met a transient error; its workflow waits and calls it again', {
        activity: context.functionName,
        error: message,
      });
      return { tag: TAG, transient: message.slice(0, 500) };
    }
  };
}

/** An activity (definitions.ts) whose transient errors its orchestration waits out. */
export function outageTolerantActivity<Input>(
  name: string,
  handler: (input: Input, context: HandlerContext) => Promise<unknown>,
): ActivityFunctionDefinition {
  return activity(name, answeringTransientErrors(handler));
}

/** The wait before the attempt-th call again (attempt counts from 1). */
export function outageWaitMs(attempt: number): number {
  return Math.min(OUTAGE_MAX_WAIT_MS, OUTAGE_FIRST_WAIT_MS * 2 ** Math.max(0, attempt - 1));
}

/**
 * callActivity for an activity wrapped by answeringTransientErrors: its result, after waiting out
 * transient failures on durable timers; throws (failing the orchestration) once they last too long.
 */
export function* callActivityThroughOutages<T>(
  context: df.OrchestrationContext,
  name: string,
  input: unknown,
): Generator<df.Task, T, unknown> {
  const started = context.df.currentUtcDateTime.getTime();
  for (let attempt = 1; ; attempt++) {
    const result = yield context.df.callActivity(name, input);
    if (!isAttempt(result)) return result as T;
    // An activity that returned nothing has no `value` once its answer went through JSON.
    if (!('transient' in result)) return activityAnswerOf(result) as T;
    const now = context.df.currentUtcDateTime.getTime();
    if (now - started >= OUTAGE_GIVE_UP_MS) {
      throw new Error(
        `${name} kept failing transiently for ${Math.round((now - started) / 1000)} s: ${result.transient}`,
      );
    }
    yield context.df.createTimer(new Date(now + outageWaitMs(attempt)));
  }
}
