// Builds the @azure/arm-compute client. A small pipeline policy records the Retry-After header of each
// response in the caller's async context, because the SDK's poller honours it only inside pollUntilDone,
// while the launch monitor polls once per durable timer and must schedule its next timer from it.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { TokenCredential } from '@azure/identity';
import { ComputeManagementClient } from '@azure/arm-compute';
import type { PipelinePolicy } from '@azure/core-rest-pipeline';

interface ResponseObservation {
  retryAfterSeconds?: number;
  /** The smallest count ARM reported left in a short (3-minute) throttling window. */
  rateLimitRemaining?: number;
  requests: number;
}

const observations = new AsyncLocalStorage<ResponseObservation>();

const retryAfterPolicy: PipelinePolicy = {
  name: 'nodeclaimRetryAfterObserver',
  async sendRequest(request, next) {
    const response = await next(request);
    const observation = observations.getStore();
    if (observation) {
      observation.requests += 1;
      const seconds = parseRetryAfter(response.headers.get('retry-after'));
      if (seconds !== undefined) observation.retryAfterSeconds = seconds;
      const remaining = shortWindowRemaining(response.headers.get('x-ms-ratelimit-remaining-resource'));
      if (remaining !== undefined) {
        observation.rateLimitRemaining = Math.min(observation.rateLimitRemaining ?? remaining, remaining);
      }
    }
    return response;
  },
};

/** Runs `work` and returns its result with the last Retry-After (seconds) any of its responses carried. */
export async function observeResponses<T>(
  work: () => Promise<T>,
): Promise<{ value: T } & ResponseObservation> {
  const observation: ResponseObservation = { requests: 0 };
  const value = await observations.run(observation, work);
  return { value, ...observation };
}

/**
 * Compute reports its throttling buckets as `Microsoft.Compute/<Policy>3Min;<n>,Microsoft.Compute/<Policy>30Min;<m>`;
 * the 3-minute windows are the ones a burst of polls exhausts.
 */
export function shortWindowRemaining(header: string | undefined | null): number | undefined {
  if (!header) return undefined;
  let fewest: number | undefined;
  for (const entry of header.split(',')) {
    const match = /3Min;(\d+)\s*$/.exec(entry.trim());
    if (match?.[1] !== undefined) fewest = Math.min(fewest ?? Infinity, Number(match[1]));
  }
  return fewest;
}

export function parseRetryAfter(header: string | undefined | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

/**
 * How long one ARM request may take before it is abandoned. A request that ARM never answers then fails
 * like a dropped connection (the handler throws and its message or activity is retried) instead of
 * holding the invocation until the Functions host kills it.
 */
export const DEFAULT_ARM_REQUEST_TIMEOUT_MS = 30_000;

function requestTimeoutPolicy(timeoutMs: number): PipelinePolicy {
  return {
    name: 'nodeclaimRequestTimeout',
    sendRequest(request, next) {
      if (!request.timeout || request.timeout > timeoutMs) request.timeout = timeoutMs;
      return next(request);
    },
  };
}

export function createComputeClient(options: {
  credential: TokenCredential;
  subscriptionId: string;
  endpoint: string;
  /** A private CA to trust for the endpoint (the local ARM emulator's). */
  caCertPem?: string;
  /** Per request (each retry gets its own); DEFAULT_ARM_REQUEST_TIMEOUT_MS when omitted. */
  requestTimeoutMs?: number;
  /**
   * How often a throttled or failed request is sent again; the SDK's default (3) when omitted. A read
   * that is only a hint (placement scores) passes 0, so no launch waits for its retries.
   */
  maxRetries?: number;
}): ComputeManagementClient {
  return new ComputeManagementClient(options.credential, options.subscriptionId, {
    endpoint: options.endpoint,
    ...(options.maxRetries !== undefined ? { retryOptions: { maxRetries: options.maxRetries } } : {}),
    ...(options.caCertPem ? { tlsOptions: { ca: options.caCertPem } } : {}),
    additionalPolicies: [
      { policy: retryAfterPolicy, position: 'perRetry' },
      {
        policy: requestTimeoutPolicy(options.requestTimeoutMs ?? DEFAULT_ARM_REQUEST_TIMEOUT_MS),
        position: 'perRetry',
      },
    ],
  });
}
