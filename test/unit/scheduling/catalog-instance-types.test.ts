import { describe, expect, it } from 'vitest';
import { capacityFor, offeringsFromSkus } from '../../../shared/decisions/offerings.js';
import { instanceTypesFromOfferings } from '../../../shared/decisions/scheduling/catalog-instance-types.js';
import { skuCatalog } from '../../../local/arm-emulator/sku-catalog.js';

describe('instanceTypesFromOfferings', () => {
  const offerings = offeringsFromSkus(skuCatalog, 'westus2');

  it('groups offerings per VM size with labels, allocatable and one offering per zone and capacity type', () => {
    const types = instanceTypesFromOfferings(offerings, {
      priceOf: (size, ct) => (ct === 'spot' ? 0.02 : 0.1),
    });
    const d2 = types.find((t) => t.name === 'Standard_D2s_v5');
    expect(d2?.labels).toMatchObject({
      'node.kubernetes.io/instance-type': 'Standard_D2s_v5',
      'kubernetes.io/arch': 'amd64',
      'karpenter.azure.com/sku-cpu': '2',
    });
    expect(d2?.labels['topology.kubernetes.io/zone']).toBeUndefined();
    const offering = offerings.find((o) => o.vmSize === 'Standard_D2s_v5');
    expect(offering && d2?.allocatable).toEqual(offering && capacityFor(offering).allocatable);
    const zones = new Set(d2?.offerings.map((o) => o.zone));
    expect(zones.size).toBeGreaterThan(0);
    expect(d2?.offerings.filter((o) => o.capacityType === 'spot').every((o) => o.price === 0.02)).toBe(true);
    expect(new Set(types.map((t) => t.name)).size).toBe(types.length);
  });

  it('marks offerings ruled out by launch failures unavailable and unknown prices as Infinity', () => {
    const d2 = offerings.find((o) => o.vmSize === 'Standard_D2s_v5' && o.capacityType === 'on-demand');
    if (!d2) throw new Error('catalog lacks Standard_D2s_v5');
    const types = instanceTypesFromOfferings(offerings, {
      unavailable: ['on-demand', 'spot'].map((capacityType) => ({
        capacityType: capacityType as 'on-demand' | 'spot',
        where: { zone: d2.zone },
        sizes: { vmSize: d2.vmSize },
      })),
    });
    const offered = types.find((t) => t.name === 'Standard_D2s_v5')?.offerings ?? [];
    expect(offered.filter((o) => o.zone === d2.zone).every((o) => !o.available)).toBe(true);
    expect(offered.filter((o) => o.zone !== d2.zone).every((o) => o.available)).toBe(true);
    expect(offered.every((o) => o.price === Infinity)).toBe(true);
  });
});
