// Classification of Azure VM-create failures into the stable reasons written on the NodeClaim's
// Launched condition, and how long (and how broadly) the failed offering is avoided afterwards.
//
// Failures arrive in two shapes:
// - synchronous, on the PUT: a RestError with `code` (ARM's error code) and `statusCode`;
// - asynchronous, from the LRO: a plain Error whose message is
//   "The long-running operation has failed. <code>. <message>" with no `code` property.
import type { CapacityType } from '../../../models/karpenter.js';

export type LaunchFailureReason =
  | 'SKUNotAvailable'
  | 'AllocationFailure'
  | 'ZonalAllocationFailure'
  | 'OverconstrainedAllocationFailure'
  | 'OverconstrainedZonalAllocationFailure'
  | 'SubscriptionQuotaReached'
  | 'Throttled'
  | 'LaunchTimeout'
  | 'AuthorizationFailed'
  | 'CapacityReservationUnavailable'
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
  cloudCode?: string;
  /**
   * True when the same request may simply be sent again later (throttling, server errors): the launch
   * path retries the PUT honouring retryAfterSeconds instead of failing the NodeClaim.
   */
  retryable: boolean;
  retryAfterSeconds?: number;
  /** Offerings to avoid, relative to the one that failed, and for how long (see failure-memory.ts). */
  unavailable?: FailureMemory;
  /**
   * True when any NodeClaim would fail alike, whatever its offering (a missing permission): the failed
   * NodeClaim is kept, its cause named, instead of being deleted for a replacement that would be refused
   * the same way.
   */
  failsEveryLaunch?: boolean;
}

export type QuotaKind = 'family' | 'regional' | 'lowPriority';

/** The figures a quota error states: "Current Limit: 10, Current Usage: 8, Additional Required: 4". */
export interface QuotaFigures {
  limit: number;
  usage: number;
  required?: number;
}

/**
 * What a failure says about other offerings, relative to the one that failed:
 * - capacityTypes: only the failed capacity type, or both (a zone out of capacity is out for both);
 * - where: the failed zone, every offering of the failed placement scope (zonal: every zone; regional:
 *   the regional offering), or everywhere;
 * - sizes: the failed size's quota family from its vCPU count up (as the provider), or — when a quota
 *   error states its figures — exactly the sizes that no longer fit the remaining cores, of the family
 *   or of every family;
 * - ttlSeconds per capacity type;
 * - quota: set for quota blocks, which are forgotten as soon as cores of that quota are freed.
 */
export interface FailureMemory {
  capacityTypes: 'failed' | 'both';
  where: 'zone' | 'placementScope' | 'everywhere';
  sizes:
    | 'familyAtOrAbove'
    | 'failedSize'
    | { family: 'same' | 'any'; remainingCores: number }
    | { family: 'any'; minCpu: 1 };
  ttlSeconds: Record<CapacityType, number>;
  quota?: QuotaKind;
  /** The block names the failed offering's reservation only (a reservation refused, not the capacity). */
  reservationOnly?: boolean;
}

// TTLs, the provider's (each at least as long):
// - allocation failures (zonal, regional, overconstrained): a capacity crunch rarely clears in minutes;
// - SkuNotAvailable: for spot it may be a spot capacity shortage (1 h); for on-demand the size is not
//   offered to the subscription there (23 h);
// - family quota: 10 minutes while the limit is above 0 (long enough to walk down the family's sizes
//   to one that fits), 1 hour when the limit is 0 (no quota for the family at all); forgotten earlier
//   when this project frees cores of the family;
// - regional and low-priority quota: the same, for every family.
export const ALLOCATION_FAILURE_TTL_SECONDS = 60 * 60;
export const SKU_NOT_AVAILABLE_SPOT_TTL_SECONDS = 60 * 60;
export const SKU_NOT_AVAILABLE_ON_DEMAND_TTL_SECONDS = 23 * 60 * 60;
export const LOW_QUOTA_TTL_SECONDS = 10 * 60;
export const ZERO_QUOTA_TTL_SECONDS = 60 * 60;
export const LOW_PRIORITY_QUOTA_TTL_SECONDS = 60 * 60;
/**
 * A reservation Azure refused (its group gone, or no longer holding the size in the zone): avoided until
 * the group has been read again a few times, since someone changed it and may change it back.
 */
export const RESERVATION_REFUSED_TTL_SECONDS = 5 * 60;
/** How long Azure keeps a deleted VM's network interface reserved, when its message does not say. */
export const NIC_RESERVATION_SECONDS = 180;
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

function figure(message: string, label: string): number | undefined {
  const match = new RegExp(`${label}:\\s*(-?\\d+)`, 'i').exec(message);
  return match ? Number(match[1]) : undefined;
}

/** The limit, usage and required cores a quota error states; undefined without limit and usage. */
export function quotaFigures(message: string): QuotaFigures | undefined {
  const limit = figure(message, 'Current Limit');
  const usage = figure(message, 'Current Usage');
  if (limit === undefined || usage === undefined) return undefined;
  const required = figure(message, 'Additional Required');
  return { limit, usage, ...(required !== undefined ? { required } : {}) };
}

const ALLOCATION_TTL = {
  spot: ALLOCATION_FAILURE_TTL_SECONDS,
  'on-demand': ALLOCATION_FAILURE_TTL_SECONDS,
  reserved: ALLOCATION_FAILURE_TTL_SECONDS,
};

/**
 * Quota memory. The provider blocks the failed family from the failed size up (every family's spot for
 * low-priority quota, nothing for regional quota). Deliberate difference: when the message states the
 * limit and usage, exactly the sizes above the remaining cores are blocked — at least the provider's
 * sizes, since the failed size did not fit — and for every family on regional and low-priority quota;
 * and the block is forgotten as soon as this project frees cores of that quota, not only at its TTL.
 */
function quotaMemory(kind: QuotaKind, message: string): FailureMemory {
  const figures = quotaFigures(message);
  // The limit alone (without the usage, so without figures) still tells a missing quota from a low one.
  const zeroLimit = figure(message, 'Current Limit') === 0;
  const ttl =
    kind === 'lowPriority'
      ? LOW_PRIORITY_QUOTA_TTL_SECONDS
      : zeroLimit
        ? ZERO_QUOTA_TTL_SECONDS
        : LOW_QUOTA_TTL_SECONDS;
  const family = kind === 'family' ? 'same' : 'any';
  const sizes: FailureMemory['sizes'] = figures
    ? { family, remainingCores: figures.limit - figures.usage }
    : kind === 'family'
      ? 'familyAtOrAbove'
      : { family: 'any', minCpu: 1 };
  return {
    capacityTypes: 'failed',
    where: 'everywhere',
    sizes,
    ttlSeconds: { spot: ttl, 'on-demand': ttl, reserved: ttl },
    quota: kind,
  };
}

/** The wait a message states ("… for 180 seconds"), if it states one. */
function secondsStated(message: string): number | undefined {
  const match = /\bfor (\d+) seconds\b/i.exec(message);
  return match ? Number(match[1]) : undefined;
}

function withCode(failure: Omit<LaunchFailure, 'cloudCode'>, code: string | undefined): LaunchFailure {
  return code === undefined ? failure : { ...failure, cloudCode: code };
}

// ARM's codes for a failure on its side, in the LRO as on the PUT: the same request may succeed later.
const SERVER_ERROR_CODES: ReadonlySet<string> = new Set([
  'InternalServerError',
  'InternalExecutionError',
  'InternalOperationError',
  'ServiceUnavailable',
  'GatewayTimeout',
  'RetryableError',
  'OperationPreempted',
]);

/** Classifies a VM-create failure (synchronous RestError-like or asynchronous LRO Error). */
export function classifyLaunchError(error: LaunchErrorInput): LaunchFailure {
  const lro = error.code === undefined ? parseLroFailureMessage(error.message) : undefined;
  const code = error.code ?? lro?.code;
  const message = (lro?.message ?? error.message).trim() || code || 'unknown error';
  const status = error.statusCode;
  const failure = (reason: LaunchFailureReason, unavailable: FailureMemory): LaunchFailure =>
    withCode({ reason, message, retryable: false, unavailable }, code);

  switch (code) {
    case 'SkuNotAvailable':
      return failure('SKUNotAvailable', {
        capacityTypes: 'failed',
        where: 'placementScope',
        sizes: 'familyAtOrAbove',
        ttlSeconds: {
          spot: SKU_NOT_AVAILABLE_SPOT_TTL_SECONDS,
          'on-demand': SKU_NOT_AVAILABLE_ON_DEMAND_TTL_SECONDS,
          reserved: SKU_NOT_AVAILABLE_ON_DEMAND_TTL_SECONDS,
        },
      });
    case 'AllocationFailed':
      return failure('AllocationFailure', {
        capacityTypes: 'both',
        where: 'placementScope',
        sizes: 'familyAtOrAbove',
        ttlSeconds: ALLOCATION_TTL,
      });
    case 'ZonalAllocationFailed':
      return failure('ZonalAllocationFailure', {
        capacityTypes: 'both',
        where: 'zone',
        sizes: 'familyAtOrAbove',
        ttlSeconds: ALLOCATION_TTL,
      });
    case 'OverconstrainedAllocationRequest':
      return failure('OverconstrainedAllocationFailure', {
        capacityTypes: 'failed',
        where: 'placementScope',
        sizes: 'familyAtOrAbove',
        ttlSeconds: ALLOCATION_TTL,
      });
    case 'OverconstrainedZonalAllocationRequest':
      return failure('OverconstrainedZonalAllocationFailure', {
        capacityTypes: 'failed',
        where: 'zone',
        sizes: 'familyAtOrAbove',
        ttlSeconds: ALLOCATION_TTL,
      });
    case 'AuthorizationFailed':
    case 'LinkedAuthorizationFailed':
      // The identity lacks a role: no offering, zone or retry changes that, only a role assignment does.
      return withCode(
        {
          reason: 'AuthorizationFailed',
          message: authorizationMessage(message),
          retryable: false,
          failsEveryLaunch: true,
        },
        code,
      );
    case 'NicReservedForAnotherVm':
      // A network interface of a deleted VM stays reserved for it for a while (Azure's message says how
      // long, 180 s today), so a relaunch reusing its name is refused until then: the same PUT succeeds
      // once the reservation lapses, and the offering has nothing to do with it.
      return withCode(
        {
          reason: 'LaunchFailed',
          message,
          retryable: true,
          retryAfterSeconds: secondsStated(message) ?? NIC_RESERVATION_SECONDS,
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
  if (quota !== undefined) return failure('SubscriptionQuotaReached', quotaMemory(quota, message));

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
  // A server error is the same failure whether the PUT answered it (a 5xx status) or the LRO reported
  // it (a server error code in the failure text, which carries no status): both are retried.
  if ((status !== undefined && status >= 500) || (code !== undefined && SERVER_ERROR_CODES.has(code))) {
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
  // A refusal that names the capacity reservation group says nothing about the capacity outside it: only
  // that reservation is avoided. Azure's codes for it are not documented; its messages name the group.
  if (/capacity ?reservation/i.test(message)) {
    return failure('CapacityReservationUnavailable', {
      capacityTypes: 'failed',
      where: 'zone',
      sizes: 'failedSize',
      reservationOnly: true,
      ttlSeconds: {
        spot: RESERVATION_REFUSED_TTL_SECONDS,
        'on-demand': RESERVATION_REFUSED_TTL_SECONDS,
        reserved: RESERVATION_REFUSED_TTL_SECONDS,
      },
    });
  }
  return withCode({ reason: 'LaunchFailed', message, retryable: false }, code);
}

/**
 * The permission ARM's 403 says is missing, and where, before ARM's own text: "…does not have
 * authorization to perform action 'A' over scope 'S'…" or, for what a request links, "…does not have
 * permission to perform action(s) 'A1,A2' on the linked scope(s) 'S1,S2' (respectively)…".
 */
export function missingPermissions(message: string): { action: string; scope: string }[] {
  const direct = /perform action '([^']+)' over scope '([^']+)'/.exec(message);
  if (direct) return [{ action: direct[1] as string, scope: direct[2] as string }];
  const linked = /perform action\(s\) '([^']+)' on the linked scope\(s\) '([^']+)'/.exec(message);
  if (!linked) return [];
  const actions = (linked[1] as string).split(',');
  const scopes = (linked[2] as string).split(',');
  return actions.map((action, index) => ({ action, scope: scopes[index] ?? scopes[0] ?? '' }));
}

function authorizationMessage(message: string): string {
  const missing = missingPermissions(message);
  if (missing.length === 0) return message;
  const named = missing.map((m) => `${m.action} on ${m.scope}`).join('; ');
  return `the Function App identity lacks ${named} (role assignments can take minutes to replicate): ${message}`;
}

/** A failure's note of offerings to avoid, as classifyLaunchError wrote it (it crossed durable activities). */
export function isFailureMemory(value: unknown): value is FailureMemory {
  if (typeof value !== 'object' || value === null) return false;
  const memory = value as Partial<Record<keyof FailureMemory, unknown>>;
  return (
    (memory.capacityTypes === 'failed' || memory.capacityTypes === 'both') &&
    typeof memory.where === 'string' &&
    memory.sizes !== undefined &&
    typeof memory.ttlSeconds === 'object' &&
    memory.ttlSeconds !== null
  );
}
