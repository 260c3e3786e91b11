// Quota blocks are forgotten when this project frees cores of their quota: a deleted VM of a family
// gives that family (and the region) its cores back, so sizes that no longer fitted may fit again now,
// not only when the block's TTL ends.
import { quotaScopesFreedBy } from './azure/decisions/failure-memory.js';
import { catalogOfferings } from './catalog-offerings.js';
import type { CloudProviderParts } from './parts.js';
import type { Instance } from './types.js';

export async function forgetQuotaFreedBy(
  deps: Pick<CloudProviderParts, 'skus' | 'settings' | 'unavailable' | 'log'>,
  vm: Instance,
): Promise<void> {
  // Only a VM that was provisioned held cores; one that failed to create frees nothing.
  if (vm.state !== 'Succeeded') return;
  const vmSize = vm.vmSize?.toLowerCase();
  if (!vmSize) return;
  const offering = (await catalogOfferings(deps)).find((o) => o.vmSize.toLowerCase() === vmSize);
  if (!offering?.skuFamily) return;
  // A VM in a capacity reservation group ran on the reservation's cores, not the quota's free ones.
  const capacityType = vm.reservationGroupId ? 'reserved' : vm.spot ? 'spot' : 'on-demand';
  const quotas = quotaScopesFreedBy({ skuFamily: offering.skuFamily, capacityType });
  const forgotten = await deps.unavailable.forgetQuota(quotas);
  if (forgotten > 0) {
    deps.log.info('quota blocks forgotten: a VM of their quota was deleted', {
      vmName: vm.name,
      vmSize: offering.vmSize,
      quotas,
      forgotten,
    });
  }
}
