// The one offering tests launch when the VM size itself is not what they test: on-demand Standard_D2s_v5
// in westus2 zone 1, as offeringsFromSkus builds it from the emulator's catalog, and the Resource SKU it
// is built from, for tests that give a fake catalog.
import type { Offering, SkuRecord } from '../../shared/decisions/offerings.js';

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

/** The Resource SKU record of Standard_D2s_v5 in westus2, zones 1 to 3. */
export const d2sV5Sku: SkuRecord = {
  resourceType: 'virtualMachines',
  name: 'Standard_D2s_v5',
  family: 'standardDSv5Family',
  locations: ['westus2'],
  locationInfo: [{ location: 'westus2', zones: ['1', '2', '3'] }],
  capabilities: [
    { name: 'vCPUs', value: '2' },
    { name: 'MemoryGB', value: '8' },
    { name: 'LowPriorityCapable', value: 'True' },
    { name: 'CpuArchitectureType', value: 'x64' },
    { name: 'PremiumIO', value: 'True' },
    { name: 'HyperVGenerations', value: 'V1,V2' },
  ],
  restrictions: [],
};
