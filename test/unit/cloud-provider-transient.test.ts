// The Azure cloud provider answers every transient ARM or storage error (throttled, a server error, no
// answer at all) with the seam's one TransientCloudError, so the lifecycle's retries (outage-retry.ts)
// recognise it by type and never by ARM's codes; any other error passes through as it was thrown.
import { RestError } from '@azure/core-rest-pipeline';
import { describe, expect, test } from 'vitest';
import type { UnavailableOfferingsStore } from '../../shared/azure/unavailable-offerings.js';
import type { VirtualMachines } from '../../shared/azure/virtual-machines.js';
import { azureCloudProvider } from '../../shared/cloudprovider/azure.js';
import type { CloudProviderParts } from '../../shared/cloudprovider/parts.js';
import { isTransientCloudError, TransientCloudError } from '../../shared/cloudprovider/types.js';
import { isTransientRequestError } from '../../shared/lifecycle/durable/outage-retry.js';
import { fakeLifecycle } from '../support/fake-lifecycle.js';

/** The provider over adapters whose every call throws `error`. */
function providerFailingWith(error: unknown) {
  const fail = async (): Promise<never> => {
    throw error;
  };
  const { deps } = fakeLifecycle();
  // Only the calls under test are provided; the casts stand in for the adapter classes.
  const parts = {
    ...deps,
    vms: { get: fail, list: fail, beginDelete: fail, beginRestart: fail } as unknown as VirtualMachines,
    unavailable: { listActive: fail, mark: fail } as unknown as UnavailableOfferingsStore,
  } as unknown as CloudProviderParts;
  return azureCloudProvider(parts);
}

const throttled = () => new RestError('Too many requests', { statusCode: 429, code: 'TooManyRequests' });

describe('transient cloud errors', () => {
  test.each([
    ['a 429', throttled()],
    ['a 503', new RestError('unavailable', { statusCode: 503 })],
    ['no answer', new RestError('socket hang up', { code: 'ECONNRESET' })],
    ['a timeout', Object.assign(new Error('The operation was aborted'), { name: 'AbortError' })],
  ])('%s from ARM becomes TransientCloudError, with the error as its cause', async (_name, error) => {
    const cloud = providerFailingWith(error);
    const thrown = await cloud.get('aks-vm').catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(TransientCloudError);
    expect((thrown as Error).cause).toBe(error);
    expect(isTransientRequestError(thrown)).toBe(true);
  });

  test('the storage behind the unavailable offerings is mapped alike', async () => {
    const cloud = providerFailingWith(new RestError('busy', { statusCode: 500 }));
    await expect(cloud.unavailableOfferings()).rejects.toSatisfy(isTransientCloudError);
    await expect(
      cloud.markUnavailable([], { reason: 'r', message: 'm', expiresAt: new Date() }),
    ).resolves.toBe(undefined);
    await expect(
      cloud.markUnavailable(
        [{ capacityType: 'spot', where: 'everywhere', sizes: { vmSize: 'Standard_D2s_v5' } }],
        {
          reason: 'r',
          message: 'm',
          expiresAt: new Date(),
        },
      ),
    ).rejects.toSatisfy(isTransientCloudError);
  });

  test('an error that is not transient passes through unchanged', async () => {
    const refused = new RestError('bad request', { statusCode: 400, code: 'InvalidParameter' });
    const cloud = providerFailingWith(refused);
    await expect(cloud.list()).rejects.toBe(refused);
    expect(isTransientRequestError(refused)).toBe(false);
  });
});
