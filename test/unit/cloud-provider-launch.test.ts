// The Azure cloud provider owns what a launch's outcome means: a poll that fails comes back classified
// (the lifecycle never parses ARM's long-running-operation text), a failure's note of offerings to avoid
// is remembered by the provider, and the node's capacity and allocatable come from the provider, also
// for a launch monitor whose input an earlier version wrote with the sizing fields instead.
import { describe, expect, test } from 'vitest';
import type { UnavailableOffering } from '../../shared/azure/unavailable-offerings.js';
import type { VirtualMachines } from '../../shared/azure/virtual-machines.js';
import { azureCloudProvider } from '../../shared/cloudprovider/azure.js';
import type { CloudProviderParts } from '../../shared/cloudprovider/parts.js';
import type { CloudFailureInfo } from '../../shared/cloudprovider/types.js';
import { selectOffering } from '../../shared/decisions/offerings.js';
import { d2sV5Offering } from '../support/offering.js';
import { fakeLifecycle } from '../support/fake-lifecycle.js';
import { nodeClass } from '../support/fixtures.js';

const lro = (code: string, message: string): CloudFailureInfo => ({
  message: `The long-running operation has failed. ${code}. ${message}`,
});

/** The provider over a VM adapter whose creation polls answer `failure`, and an in-memory memory. */
function provider(failure: CloudFailureInfo) {
  const { deps } = fakeLifecycle();
  const marked: UnavailableOffering[] = [];
  let invalidated = 0;
  // Only the calls under test are provided; the casts stand in for the adapter classes.
  const parts = {
    ...deps,
    vms: {
      pollCreation: async () => ({ status: 'Failed', error: failure }),
    } as unknown as VirtualMachines,
    unavailable: {
      mark: async (record: UnavailableOffering) => void marked.push(record),
      listActive: async (at: Date) => marked.filter((m) => m.expiresAt > at),
    },
    reservations: { invalidate: () => void invalidated++ },
  } as unknown as CloudProviderParts;
  return { cloud: azureCloudProvider(parts), marked, invalidated: () => invalidated };
}

describe('a launch failure, classified by the provider', () => {
  test('the long-running operation failure text is classified, not handed on', async () => {
    const { cloud } = provider(lro('ZonalAllocationFailed', 'no capacity in this zone'));
    const poll = await cloud.pollLaunch('aks-a', 'poller');
    expect(poll).toMatchObject({
      status: 'Failed',
      failure: {
        reason: 'ZonalAllocationFailure',
        cloudCode: 'ZonalAllocationFailed',
        message: 'no capacity in this zone',
        retryable: false,
      },
    });
  });

  test('an earlier version’s unclassified report is classified alike', () => {
    const { cloud } = provider(lro('InternalExecutionError', 'x'));
    expect(cloud.launchFailureOf(lro('InternalExecutionError', 'x'))).toMatchObject({
      reason: 'LaunchFailed',
      retryable: true,
    });
  });

  test('SkuNotAvailable remembers the offering as unavailable, so the next cheapest is chosen', async () => {
    const failed = d2sV5Offering();
    const next = d2sV5Offering({ capacityType: 'spot' });
    const { cloud, marked } = provider(lro('SkuNotAvailable', 'Standard_D2s_v5 is not available in zone 1'));
    const poll = await cloud.pollLaunch('aks-a', 'poller');
    if (poll.status !== 'Failed' || !('failure' in poll)) throw new Error(`unexpected poll ${poll.status}`);
    expect(poll.failure.reason).toBe('SKUNotAvailable');

    const remembered = await cloud.rememberLaunchFailure(failed, poll.failure);
    expect(remembered?.blocks.length).toBeGreaterThan(0);
    expect(marked.every((m) => m.reason === 'SKUNotAvailable')).toBe(true);

    // The failed offering first by the order, as the cheaper; with what was remembered, the next one.
    const rank = [failed, next];
    const order = (a: typeof failed, b: typeof failed) => rank.indexOf(a) - rank.indexOf(b);
    const requirements = [
      { key: 'karpenter.sh/capacity-type', operator: 'In' as const, values: ['on-demand', 'spot'] },
    ];
    const offerings = [failed, next];
    const before = selectOffering({ requirements, offerings, unavailable: [], order });
    const unavailable = await cloud.unavailableOfferings();
    const after = selectOffering({ requirements, offerings, unavailable, order });
    expect(before.offering).toBe(failed);
    expect(after.offering).toBe(next);
  });

  test('a failure in a reservation has the reservations read afresh', async () => {
    const { cloud, invalidated } = provider(lro('LaunchFailed', 'x'));
    const failure = cloud.launchFailureOf({ message: 'refused' });
    await cloud.rememberLaunchFailure(d2sV5Offering({ reservationId: 'crg/a' }), failure);
    expect(invalidated()).toBe(1);
  });
});

describe('the node resources, from the provider', () => {
  test('sized with the NodeClass, and alike from the sizing an earlier monitor input recorded', () => {
    const { cloud } = provider({ message: 'unused' });
    const offering = d2sV5Offering();
    const sized = { ...nodeClass('default', 'Ubuntu2204'), spec: { maxPods: 42, osDiskSizeGB: 64 } };
    const resources = cloud.resourcesOf(offering, sized);
    expect(resources.capacity).toMatchObject({ pods: '42', 'ephemeral-storage': '64Gi' });
    const legacyInput = { vmName: 'aks-a', offering, maxPods: 42, osDiskSizeGB: 64, startedAt: 'x' };
    expect(cloud.recordedResourcesOf(offering, legacyInput)).toEqual(resources);
    expect(cloud.recordedResourcesOf(offering, { vmName: 'aks-a' })).toEqual(
      cloud.resourcesOf(offering, undefined),
    );
  });
});
