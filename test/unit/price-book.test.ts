import { describe, expect, it } from 'vitest';
import {
  priceOf,
  pricesFromRetailItems,
  refreshedPriceBook,
  staticPriceBook,
  type RetailPriceItem,
} from '../../shared/decisions/prices/price-book.js';
import { compareOfferingsByPrice } from '../../shared/decisions/prices/offering-order.js';
import { placementScopeOf, REGIONAL_ZONE, type Offering } from '../../shared/decisions/offerings.js';

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
  // A regional offering carries the zone label REGIONAL_ZONE and no zone number, as offeringsFromSkus
  // builds it.
  const offering = (
    vmSize: string,
    capacityType: 'spot' | 'on-demand',
    zoneNumber: string | undefined,
    cpu = 2,
  ): Offering => ({
    vmSize,
    family: 'D',
    skuFamily: 'f',
    cpu,
    memoryMiB: cpu * 4096,
    arch: 'amd64',
    location: 'westus2',
    zone: zoneNumber === undefined ? REGIONAL_ZONE : `westus2-${zoneNumber}`,
    ...(zoneNumber === undefined ? {} : { zoneNumber }),
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
  const label = (o: Offering): string =>
    `${o.vmSize}/${o.capacityType}/${placementScopeOf(o) === 'zonal' ? o.zone : 'regional'}`;

  it('puts the cheapest first, then spot, then zonal, unknown prices last', () => {
    const offerings = [
      offering('a', 'on-demand', '1'),
      offering('b', 'spot', '1'),
      offering('b', 'on-demand', undefined),
      offering('b', 'on-demand', '2'),
      offering('a', 'spot', '1'),
      offering('c', 'on-demand', '1'),
    ];
    expect(offerings.sort(order).map(label)).toEqual([
      'a/spot/westus2-1',
      'b/on-demand/westus2-2',
      'b/on-demand/regional',
      'b/spot/westus2-1',
      'a/on-demand/westus2-1',
      'c/on-demand/westus2-1',
    ]);
  });

  it('puts a regional offering after the zonal ones of the same price (its zone label is "0")', () => {
    const offerings = [offering('b', 'on-demand', undefined), offering('b', 'on-demand', '3')];
    expect(offerings.sort(order).map(label)).toEqual(['b/on-demand/westus2-3', 'b/on-demand/regional']);
  });

  it('orders unknown prices smallest machine first, then by name', () => {
    const offerings = [
      offering('x-large', 'on-demand', '1', 16),
      offering('z-small', 'on-demand', '1', 2),
      offering('y-small', 'on-demand', '1', 2),
    ];
    expect(offerings.sort(order).map((o) => o.vmSize)).toEqual(['y-small', 'z-small', 'x-large']);
  });
});
