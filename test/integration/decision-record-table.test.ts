// The decision records' table against a real Azurite table service: newest first, one row per record
// however often it is written, a record too big for one entity cut (and counted) rather than lost, and
// rows past the retention pruned by the writer.
import { randomBytes } from 'node:crypto';
import { describe, expect, inject, test } from 'vitest';
import { DecisionRecordTable, PRUNE_EVERY } from '../../shared/azure/decision-record-table.js';
import { tableClientFromConnectionString } from '../../shared/azure/table-client.js';
import type { ProvisioningRecord } from '../../shared/decisions/explain/decision-record.js';

const connectionString = inject('azuriteConnectionString');
const HOUR = 3_600_000;

function tableAt(now: () => Date): { store: DecisionRecordTable; name: string } {
  const name = `records${Date.now()}${randomBytes(3).toString('hex')}`;
  return {
    name,
    store: new DecisionRecordTable(tableClientFromConnectionString(connectionString, name), 24 * HOUR, now),
  };
}

const window = (id: string, at: Date, pods = 1): ProvisioningRecord => ({
  kind: 'provisioning',
  id,
  at: at.toISOString(),
  pods: Array.from({ length: pods }, (_, index) => ({
    pod: `default/pod-${index}`,
    uid: `uid-${index}`,
    excluded: [{ nodePool: 'default', cause: 'Limit', message: `limit ${index}` }],
  })),
  launches: [],
});

describe('DecisionRecordTable', () => {
  test('reads the newest first, keeps one row per record, and reports its size', async () => {
    const now = new Date('2026-12-06T12:00:00Z');
    const { store } = tableAt(() => now);
    await store.write(window('w1', new Date(now.getTime() - 3_000)));
    await store.write(window('w3', now));
    await store.write(window('w2', new Date(now.getTime() - 1_000)));
    await store.write(window('w3', now));
    expect((await store.recent('provisioning', 10)).map((r) => r.id)).toEqual(['w3', 'w2', 'w1']);
    expect((await store.recent('provisioning', 2)).map((r) => r.id)).toEqual(['w3', 'w2']);
    expect(await store.recent('disruption', 10)).toEqual([]);
    const size = await store.size();
    expect(size.provisioning.rows).toBe(3);
    expect(size.provisioning.storedBytes).toBeGreaterThan(0);
    expect(store.written.get('provisioning')?.records).toBe(4);
  });

  test('a record too big for one entity keeps as many pods as fit and counts the rest', async () => {
    const now = new Date('2026-12-06T12:00:00Z');
    const { store } = tableAt(() => now);
    const big = window('big', now, 500);
    // Incompressible messages: 500 × 4 KiB of random text is far over the 1 MiB an entity holds.
    for (const pod of big.pods)
      for (const exclusion of pod.excluded ?? []) exclusion.message = randomBytes(3072).toString('base64');
    await store.write(big);
    const [read] = await store.recent('provisioning', 1);
    expect(read?.kind).toBe('provisioning');
    const kept = read?.kind === 'provisioning' ? read.pods.length : 0;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(500);
    expect(read?.kind === 'provisioning' ? read.omittedPods : 0).toBe(500 - kept);
  });

  test('rows older than the retention are deleted by later writes', async () => {
    let now = new Date('2026-12-06T00:00:00Z');
    const { store } = tableAt(() => now);
    await store.write(window('old-1', now));
    await store.write(window('old-2', new Date(now.getTime() + 1_000)));
    now = new Date(now.getTime() + 25 * HOUR);
    // The writer prunes on its first write and every PRUNE_EVERY writes after.
    for (let index = 0; index < PRUNE_EVERY + 1; index++)
      await store.write(window(`new-${index}`, new Date(now.getTime() + index)));
    const ids = (await store.recent('provisioning', 100)).map((r) => r.id);
    expect(ids).not.toContain('old-1');
    expect(ids).not.toContain('old-2');
    expect(ids).toHaveLength(PRUNE_EVERY + 1);
  });
});
