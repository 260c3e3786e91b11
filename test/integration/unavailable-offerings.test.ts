// The unavailable-offerings record against a real Azurite table service.
import { TableClient } from '@azure/data-tables';
import { describe, expect, inject, test } from 'vitest';
import { UnavailableOfferingsStore } from '../../shared/azure/unavailable-offerings.js';

const connectionString = inject('azuriteConnectionString');

describe('UnavailableOfferingsStore', () => {
  test('records offerings, hides expired ones, and is shared between store instances', async () => {
    const table = `offerings${Date.now()}`;
    const writer = UnavailableOfferingsStore.fromConnectionString(connectionString, table);
    const reader = UnavailableOfferingsStore.fromConnectionString(connectionString, table);
    const now = new Date('2026-11-30T12:00:00Z');

    await writer.mark({
      key: 'on-demand/Standard_D2s_v5/westus2-1',
      reason: 'ZonalAllocationFailure',
      message: 'ZonalAllocationFailed: no capacity',
      expiresAt: new Date(now.getTime() + 180_000),
    });
    await writer.mark({
      key: 'family/spot/standardDSv5Family',
      reason: 'SubscriptionQuotaReached',
      message: 'quota',
      expiresAt: new Date(now.getTime() - 1_000),
    });

    const active = await reader.listActive(now);
    expect(active.map((o) => o.key)).toEqual(['on-demand/Standard_D2s_v5/westus2-1']);
    expect(active[0]?.reason).toBe('ZonalAllocationFailure');

    // The expired row was removed while reading.
    const rows = TableClient.fromConnectionString(connectionString, table, { allowInsecureConnection: true });
    const keys: string[] = [];
    for await (const row of rows.listEntities<{ offeringKey: string }>()) keys.push(row.offeringKey);
    expect(keys).toEqual(['on-demand/Standard_D2s_v5/westus2-1']);

    // A later failure of the same offering extends its TTL instead of adding a row.
    await writer.mark({
      key: 'on-demand/Standard_D2s_v5/westus2-1',
      reason: 'AllocationFailure',
      message: 'again',
      expiresAt: new Date(now.getTime() + 600_000),
    });
    const extended = await reader.listActive(new Date(now.getTime() + 300_000));
    expect(extended.map((o) => [o.key, o.reason])).toEqual([
      ['on-demand/Standard_D2s_v5/westus2-1', 'AllocationFailure'],
    ]);
  });
});
