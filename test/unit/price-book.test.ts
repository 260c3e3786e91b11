import { describe, expect, it } from 'vitest';
import {
  priceOf,
  pricesFromRetailItems,
  refreshedPriceBook,
  staticPriceBook,
  type RetailPriceItem,
} from '../../shared/decisions/prices/price-book.js';
import { compareOfferingsByPrice } from '../../shared/decisions/prices/offering-order.js';
import type { Offering } from '../../shared/decisions/offerings.js';

const item = (overrides: Partial<RetailPriceItem>): RetailPriceItem => ({
  armSkuName: 'Standard_D2s_v5',
  retailPrice: 0.1,
  meterName: 'D2s v5',
  skuName: 'D2s v5',
  productName: 'Virtual Machines DSv5 Series',
  type: 'Consumption',
  serviceName: 'Virtual Machines',
  unitOfMeasure: '1 Hour',
  ...overrides,
});

describe('pricesFromRetailItems', () => {
  it.each<[string, RetailPriceItem, 'onDemand' | 'spot' | 'skipped']>([
    ['a Linux on-demand meter', item({}), 'onDemand'],
    ['a spot meter', item({ meterName: 'D2s v5 Spot', skuName: 'D2s v5 Spot' }), 'spot'],
    [
      'a Low Priority meter',
      item({ meterName: 'D2s v5 Low Priority', skuName: 'D2s v5 Low Priority' }),
      'skipped',
    ],
    ['a Windows product', item({ productName: 'Virtual Machines DSv5 Series Windows' }), 'skipped'],
    ['a reservation', item({ type: 'Reservation' }), 'skipped'],
    ['a zero price', item({ retailPrice: 0 }), 'skipped'],
    ['an item without armSkuName', item({ armSkuName: '' }), 'skipped'],
  ])('%s', (_name, input, expected) => {
    const { onDemand, spot } = pricesFromRetailItems([input]);
    expect(onDemand.size + spot.size).toBe(expected === 'skipped' ? 0 : 1);
    if (expected !== 'skipped')
      expect((expected === 'spot' ? spot : onDemand).get('Standard_D2s_v5')).toBe(0.1);
  });

  it('keeps the lowest price of several meters for one size', () => {
    const { onDemand } = pricesFromRetailItems([item({ retailPrice: 0.12 }), item({ retailPrice: 0.1 })]);
    expect(onDemand.get('Standard_D2s_v5')).toBe(0.1);
  });
});

describe('price books', () => {
  it('falls back to eastus for an unknown region and prices spot like on-demand without a spot price', () => {
    const book = staticPriceBook('mars-north');
    expect(priceOf(book, 'Standard_D4s_v5', 'on-demand')).toBe(0.192);
    expect(priceOf(book, 'Standard_D4s_v5', 'spot')).toBe(0.192);
    expect(priceOf(book, 'Standard_Unknown', 'on-demand')).toBeUndefined();
  });

  it('fills sizes a refresh did not return from the static table; an empty answer is no refresh', () => {
    const book = refreshedPriceBook(
      'westus2',
      [item({ retailPrice: 0.09 }), item({ meterName: 'D2s v5 Spot', retailPrice: 0.02 })],
      '2026-11-30T00:00:00Z',
    );
    expect(book && priceOf(book, 'Standard_D2s_v5', 'on-demand')).toBe(0.09);
    expect(book && priceOf(book, 'Standard_D2s_v5', 'spot')).toBe(0.02);
    expect(book && priceOf(book, 'Standard_E2s_v5', 'on-demand')).toBe(0.126);
    expect(refreshedPriceBook('westus2', [item({ productName: 'x Windows' })], 'now')).toBeUndefined();
  });
});

describe('compareOfferingsByPrice', () => {
  const offering = (vmSize: string, capacityType: 'spot' | 'on-demand', zone: string): Offering => ({
    vmSize,
    family: 'D',
    skuFamily: 'f',
    cpu: 2,
    memoryMiB: 8192,
    arch: 'amd64',
    location: 'westus2',
    zone,
    ...(zone ? { zoneNumber: zone.slice(-1) } : {}),
    capacityType,
    premiumIO: true,
    acceleratedNetworking: true,
  });
  const prices: Record<string, number> = {
    'a/spot': 0.02,
    'a/on-demand': 0.1,
    'b/on-demand': 0.08,
    'b/spot': 0.1,
  };
  const order = compareOfferingsByPrice((o) => prices[`${o.vmSize}/${o.capacityType}`]);

  it('puts the cheapest first, then spot, then zonal, unknown prices last', () => {
    const offerings = [
      offering('a', 'on-demand', 'westus2-1'),
      offering('b', 'spot', 'westus2-1'),
      offering('b', 'on-demand', ''),
      offering('b', 'on-demand', 'westus2-2'),
      offering('a', 'spot', 'westus2-1'),
      offering('c', 'on-demand', 'westus2-1'),
    ];
    expect(offerings.sort(order).map((o) => `${o.vmSize}/${o.capacityType}/${o.zone || 'regional'}`)).toEqual(
      [
        'a/spot/westus2-1',
        'b/on-demand/westus2-2',
        'b/on-demand/regional',
        'b/spot/westus2-1',
        'a/on-demand/westus2-1',
        'c/on-demand/westus2-1',
      ],
    );
  });
});
