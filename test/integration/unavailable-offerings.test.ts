// The unavailable-offerings record against a real Azurite table service.
import { describe, expect, inject, test } from 'vitest';
import { tableClientFromConnectionString } from '../../shared/azure/table-client.js';
import { UnavailableOfferingsStore } from '../../shared/azure/unavailable-offerings.js';
import { blockKey, type OfferingBlock } from '../../shared/decisions/offering-blocks.js';

const connectionString = inject('azuriteConnectionString');
const storeAt = (table: string): UnavailableOfferingsStore =>
  new UnavailableOfferingsStore(tableClientFromConnectionString(connectionString, table));

const zonal: OfferingBlock = {
  capacityType: 'on-demand',
  where: { zone: 'westus2-1' },
  sizes: { skuFamily: 'standardDSv5Family', minCpu: 2 },
};
const familyQuota: OfferingBlock = {
  capacityType: 'on-demand',
  where: 'everywhere',
  sizes: { skuFamily: 'standardDSv5Family', minCpu: 3 },
};

describe('UnavailableOfferingsStore', () => {
  test('records blocks, hides expired ones, and is shared between store instances', async () => {
    const table = `offerings${Date.now()}`;
    const writer = storeAt(table);
    const reader = storeAt(table);
    const now = new Date('2026-11-30T12:00:00Z');

    await writer.mark({
      block: zonal,
      reason: 'ZonalAllocationFailure',
      message: 'ZonalAllocationFailed: no capacity',
      expiresAt: new Date(now.getTime() + 3_600_000),
    });
    await writer.mark({
      block: { ...zonal, capacityType: 'spot' },
      reason: 'ZonalAllocationFailure',
      message: 'expired',
      expiresAt: new Date(now.getTime() - 1_000),
    });

    const active = await reader.listActive(now);
    expect(active.map((o) => o.block)).toEqual([zonal]);
    expect(active[0]?.reason).toBe('ZonalAllocationFailure');

    // The expired row was removed while reading.
    const rows = tableClientFromConnectionString(connectionString, table);
    const stored: string[] = [];
    for await (const row of rows.listEntities<{ block: string }>()) stored.push(row.block);
    expect(stored.map((b) => blockKey(JSON.parse(b) as OfferingBlock))).toEqual([blockKey(zonal)]);

    // A later failure with the same block extends its TTL instead of adding a row.
    await writer.mark({
      block: zonal,
      reason: 'AllocationFailure',
      message: 'again',
      expiresAt: new Date(now.getTime() + 7_200_000),
    });
    const extended = await reader.listActive(new Date(now.getTime() + 5_400_000));
    expect(extended.map((o) => [blockKey(o.block), o.reason])).toEqual([
      [blockKey(zonal), 'AllocationFailure'],
    ]);
  });

  test('forgets quota blocks when cores of their quota are freed, and only those', async () => {
    const table = `quota${Date.now()}`;
    const store = storeAt(table);
    const now = new Date('2026-11-30T12:00:00Z');
    const expiresAt = new Date(now.getTime() + 600_000);
    await store.mark({ block: zonal, reason: 'ZonalAllocationFailure', message: 'zone', expiresAt });
    await store.mark({
      block: familyQuota,
      reason: 'SubscriptionQuotaReached',
      message: 'family quota',
      expiresAt,
      quota: 'family:standarddsv5family',
    });
    await store.mark({
      block: { capacityType: 'spot', where: 'everywhere', sizes: { minCpu: 5 } },
      reason: 'SubscriptionQuotaReached',
      message: 'low priority quota',
      expiresAt,
      quota: 'lowPriority',
    });

    expect(await store.forgetQuota(['family:standardesv5family', 'regional'])).toBe(0);
    expect(await store.forgetQuota(['family:standarddsv5family', 'regional'])).toBe(1);
    const left = await store.listActive(now);
    expect(left.map((o) => o.quota ?? 'capacity')).toEqual(
      expect.arrayContaining(['capacity', 'lowPriority']),
    );
    expect(left).toHaveLength(2);
  });
});
