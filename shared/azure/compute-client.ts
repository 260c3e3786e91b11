// Builds the @azure/arm-compute client. A small pipeline policy records the Retry-After header of each
// response in the caller's async context, because the SDK's poller honours it only inside pollUntilDone,
// while the launch monitor polls once per durable timer and must schedule its next timer from it.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { TokenCredential } from '@azure/identity';
import { ComputeManagementClient } from '@azure/arm-compute';
import type { PipelinePolicy } from '@azure/core-rest-pipeline';

interface ResponseObservation {
  retryAfterSeconds?: number;
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

export function parseRetryAfter(header: string | undefined | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

export function createComputeClient(options: {
  credential: TokenCredential;
  subscriptionId: string;
  endpoint: string;
  /** A private CA to trust for the endpoint (the local ARM emulator's). */
  caCertPem?: string;
}): ComputeManagementClient {
  return new ComputeManagementClient(options.credential, options.subscriptionId, {
    endpoint: options.endpoint,
    ...(options.caCertPem ? { tlsOptions: { ca: options.caCertPem } } : {}),
    additionalPolicies: [{ policy: retryAfterPolicy, position: 'perRetry' }],
  });
}
