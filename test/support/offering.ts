// The one offering tests launch when the VM size itself is not what they test: on-demand Standard_D2s_v5
// in westus2 zone 1, as offeringsFromSkus builds it from the emulator's catalog.
import type { Offering } from '../../shared/decisions/offerings.js';

export function d2sV5Offering(overrides: Partial<Offering> = {}): Offering {
  return {
    vmSize: 'Standard_D2s_v5',
    family: 'D',
    skuFamily: 'standardDSv5Family',
    cpu: 2,
    memoryMiB: 8192,
    arch: 'amd64',
    location: 'westus2',
    zone: 'westus2-1',
    zoneNumber: '1',
    capacityType: 'on-demand',
    premiumIO: true,
    acceleratedNetworking: true,
    ...overrides,
  };
}
