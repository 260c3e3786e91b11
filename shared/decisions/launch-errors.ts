// Classification of Azure VM-create failures into the stable reasons written on the NodeClaim's
// Launched condition, and how long (and how broadly) the failed offering is avoided afterwards.
//
// Failures arrive in two shapes:
// - synchronous, on the PUT: a RestError with `code` (ARM's error code) and `statusCode`;
// - asynchronous, from the LRO: a plain Error whose message is
//   "The long-running operation has failed. <code>. <message>" with no `code` property.
import type { UnavailableScope } from './offerings.js';

export type LaunchFailureReason =
  | 'SKUNotAvailable'
  | 'AllocationFailure'
  | 'ZonalAllocationFailure'
  | 'OverconstrainedAllocationFailure'
  | 'OverconstrainedZonalAllocationFailure'
  | 'SubscriptionQuotaReached'
  | 'Throttled'
  | 'LaunchTimeout'
  | 'LaunchFailed';

export interface LaunchErrorInput {
  code?: string;
  statusCode?: number;
  message: string;
  /** The response's Retry-After in seconds, when the adapter found one. */
  retryAfterSeconds?: number;
}

export interface LaunchFailure {
  reason: LaunchFailureReason;
  /** Azure's own message (without the LRO prefix), for the condition message and the Warning event. */
  message: string;
  /** ARM's error code when one was found, e.g. "ZonalAllocationFailed". */
  azureCode?: string;
  /**
   * True when the same request may simply be sent again later (throttling, server errors): the launch
   * path retries the PUT honouring retryAfterSeconds instead of failing the NodeClaim.
   */
  retryable: boolean;
  retryAfterSeconds?: number;
  /** Offerings to avoid, relative to the one that failed (see UnavailableScope), and for how long. */
  unavailable?: { scope: UnavailableScope; ttlSeconds: number };
}

// TTLs. Capacity problems are short-lived and Azure recommends retrying soon, so allocation failures
// are avoided for 3 minutes: long enough for the next few launches to go elsewhere, short enough not to
// starve a NodePool whose requirements allow only that size. SKU restrictions and quota change only
// through an operator's action (a support request, a quota increase), so they are avoided for an hour.
export const ALLOCATION_FAILURE_TTL_SECONDS = 3 * 60;
export const SKU_NOT_AVAILABLE_TTL_SECONDS = 60 * 60;
export const QUOTA_TTL_SECONDS = 60 * 60;
/** Used for 429 when Azure sent no Retry-After. */
export const DEFAULT_THROTTLE_RETRY_SECONDS = 15;
/** Used for 5xx when Azure sent no Retry-After. */
export const DEFAULT_SERVER_ERROR_RETRY_SECONDS = 10;

const LRO_PREFIX = /^The long-running operation has failed\.\s*([A-Za-z][A-Za-z0-9_.]*)\.\s*([\s\S]*)$/;

/** Splits an LRO failure message into ARM's code and message; undefined for any other text. */
export function parseLroFailureMessage(message: string): { code: string; message: string } | undefined {
  const match = LRO_PREFIX.exec(message.trim());
  if (!match) return undefined;
  return { code: match[1] as string, message: (match[2] as string).trim() };
}

type QuotaKind = 'family' | 'regional' | 'lowPriority';

// ARM reports core quota as OperationNotAllowed (older API versions) or QuotaExceeded, with the kind of
// quota only in the text: "...exceeding approved standardDSv5Family Cores quota", "...Total Regional
// Cores quota", "...Low Priority Cores quota" (also "LowPriorityCores").
function quotaKind(code: string | undefined, message: string): QuotaKind | undefined {
  const text = message.toLowerCase();
  const looksLikeQuota =
    code === 'QuotaExceeded' || (code === 'OperationNotAllowed' && text.includes('quota'));
  if (!looksLikeQuota && !text.includes('exceeding approved')) return undefined;
  if (text.includes('low priority cores') || text.includes('lowprioritycores')) return 'lowPriority';
  if (text.includes('total regional cores') || text.includes('regional cores quota')) return 'regional';
  if (text.includes('family cores')) return 'family';
  // Quota text without a recognised kind still means this subscription cannot get these cores now; the
  // narrowest quota scope is the honest default.
  return looksLikeQuota ? 'family' : undefined;
}

function withCode(failure: Omit<LaunchFailure, 'azureCode'>, code: string | undefined): LaunchFailure {
  return code === undefined ? failure : { ...failure, azureCode: code };
}

/** Classifies a VM-create failure (synchronous RestError-like or asynchronous LRO Error). */
export function classifyLaunchError(error: LaunchErrorInput): LaunchFailure {
  const lro = error.code === undefined ? parseLroFailureMessage(error.message) : undefined;
  const code = error.code ?? lro?.code;
  const message = (lro?.message ?? error.message).trim() || code || 'unknown error';
  const status = error.statusCode;

  switch (code) {
    case 'SkuNotAvailable':
      return withCode(
        {
          reason: 'SKUNotAvailable',
          message,
          retryable: false,
          unavailable: { scope: 'offering', ttlSeconds: SKU_NOT_AVAILABLE_TTL_SECONDS },
        },
        code,
      );
    case 'AllocationFailed':
      return withCode(
        {
          reason: 'AllocationFailure',
          message,
          retryable: false,
          unavailable: { scope: 'vmSize', ttlSeconds: ALLOCATION_FAILURE_TTL_SECONDS },
        },
        code,
      );
    case 'ZonalAllocationFailed':
      return withCode(
        {
          reason: 'ZonalAllocationFailure',
          message,
          retryable: false,
          unavailable: { scope: 'vmSizeInZone', ttlSeconds: ALLOCATION_FAILURE_TTL_SECONDS },
        },
        code,
      );
    case 'OverconstrainedAllocationRequest':
      return withCode(
        {
          reason: 'OverconstrainedAllocationFailure',
          message,
          retryable: false,
          unavailable: { scope: 'vmSize', ttlSeconds: ALLOCATION_FAILURE_TTL_SECONDS },
        },
        code,
      );
    case 'OverconstrainedZonalAllocationRequest':
      return withCode(
        {
          reason: 'OverconstrainedZonalAllocationFailure',
          message,
          retryable: false,
          unavailable: { scope: 'vmSizeInZone', ttlSeconds: ALLOCATION_FAILURE_TTL_SECONDS },
        },
        code,
      );
    case 'OSProvisioningTimedOut':
      // Azure gave up waiting for the guest to report ready: the same outcome as our own deadline.
      return withCode({ reason: 'LaunchTimeout', message, retryable: false }, code);
    default:
      break;
  }

  const quota = quotaKind(code, message);
  if (quota !== undefined) {
    return withCode(
      {
        reason: 'SubscriptionQuotaReached',
        message,
        retryable: false,
        // Family quota binds on-demand cores of one family; regional and low-priority quota bind every
        // offering of the failed capacity type (on-demand and spot respectively).
        unavailable: { scope: quota === 'family' ? 'family' : 'capacityType', ttlSeconds: QUOTA_TTL_SECONDS },
      },
      code,
    );
  }

  if (status === 429 || code === 'TooManyRequests') {
    return withCode(
      {
        reason: 'Throttled',
        message,
        retryable: true,
        retryAfterSeconds: error.retryAfterSeconds ?? DEFAULT_THROTTLE_RETRY_SECONDS,
      },
      code,
    );
  }
  if (status !== undefined && status >= 500) {
    return withCode(
      {
        reason: 'LaunchFailed',
        message,
        retryable: true,
        retryAfterSeconds: error.retryAfterSeconds ?? DEFAULT_SERVER_ERROR_RETRY_SECONDS,
      },
      code,
    );
  }
  return withCode({ reason: 'LaunchFailed', message, retryable: false }, code);
}

/** The failure recorded when the LRO has not finished by the launch deadline. */
export function launchTimeoutFailure(elapsedSeconds: number): LaunchFailure {
  return {
    reason: 'LaunchTimeout',
    message: `the VM was not provisioned within ${Math.round(elapsedSeconds)}s`,
    retryable: false,
  };
}
