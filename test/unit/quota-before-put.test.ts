// Quota and capacity known before the PUT, decided without Azure: the room the usages API states becomes
// blocks in Azure's own words; launches in flight count against it until a read counts them or their
// PUT made nothing; a launch never counts itself; and Azure's spot placement scores order equally priced
// offerings and put the unlikely last without ever passing over a cheaper likely one.
import { describe, expect, test } from 'vitest';
import type { UsagesRead } from '../../shared/azure/compute-usages.js';
import { scoreKey, type PlacementScore } from '../../shared/azure/placement-scores.js';
import {
  isUnlikely,
  likelihoodRank,
  scoreOf,
} from '../../shared/cloudprovider/azure/decisions/placement-likelihood.js';
import { quotaShortfalls } from '../../shared/cloudprovider/azure/decisions/quota-headroom.js';
import { QuotaRoom } from '../../shared/cloudprovider/quota-room.js';
import { isOfferingBlocked } from '../../shared/decisions/offering-blocks.js';
import { candidateOfferings, selectOffering, type Offering } from '../../shared/decisions/offerings.js';
import { compareOfferingsByPrice } from '../../shared/decisions/prices/offering-order.js';
import { d2sV5Offering } from '../support/offering.js';

const d4 = (overrides: Partial<Offering> = {}): Offering =>
  d2sV5Offering({ vmSize: 'Standard_D4s_v5', cpu: 4, memoryMiB: 16384, ...overrides });
const d4as = (overrides: Partial<Offering> = {}): Offering =>
  d2sV5Offering({
    vmSize: 'Standard_D4as_v5',
    skuFamily: 'standardDASv5Family',
    cpu: 4,
    memoryMiB: 16384,
    ...overrides,
  });

describe('quota shortfalls from the usages API', () => {
  test('a family with 4 of 10 vCPUs free blocks its sizes above 4, and says so as Azure would', () => {
    const [family] = quotaShortfalls([{ name: 'standardDSv5Family', currentValue: 6, limit: 10 }], []);
    expect(family?.free).toBe(4);
    expect(family?.quota).toBe('family:standardDSv5Family');
    expect(family?.message).toContain('exceeding approved standardDSv5Family Cores quota');
    expect(family?.message).toContain('Current Limit: 10, Current Usage: 6');
    expect(isOfferingBlocked(d4(), [family!.block])).toBe(false);
    expect(isOfferingBlocked(d4({ vmSize: 'Standard_D8s_v5', cpu: 8 }), [family!.block])).toBe(true);
    // Another family and spot are not this quota's.
    expect(isOfferingBlocked(d4as({ cpu: 8 }), [family!.block])).toBe(false);
    expect(isOfferingBlocked(d4({ cpu: 8, capacityType: 'spot' }), [family!.block])).toBe(false);
  });

  test('in-flight cores of the family, the region and spot count against their own quota only', () => {
    const usages = [
      { name: 'standardDSv5Family', currentValue: 0, limit: 10 },
      { name: 'cores', currentValue: 0, limit: 100 },
      { name: 'lowPriorityCores', currentValue: 0, limit: 8 },
    ];
    const shortfalls = quotaShortfalls(usages, [
      { skuFamily: 'standardDSv5Family', cpu: 8, capacityType: 'on-demand' },
      { skuFamily: 'standardDASv5Family', cpu: 4, capacityType: 'on-demand' },
      { skuFamily: 'standardDSv5Family', cpu: 4, capacityType: 'spot' },
    ]);
    const free = Object.fromEntries(shortfalls.map((s) => [s.quota, s.free]));
    expect(free).toEqual({ 'family:standardDSv5Family': 2, regional: 88, lowPriority: 4 });
    expect(shortfalls.find((s) => s.quota === 'lowPriority')?.message).toContain('In Flight: 4');
  });

  test('an exhausted quota leaves no room, and a quota without a stated limit blocks nothing', () => {
    const shortfalls = quotaShortfalls(
      [
        { name: 'standardDSv5Family', currentValue: 12, limit: 10 },
        { name: 'standardDASv5Family', currentValue: 0, limit: -1 },
        { name: 'virtualMachines', currentValue: 3, limit: 25000 },
      ],
      [],
    );
    expect(shortfalls.map((s) => [s.quota, s.free])).toEqual([['family:standardDSv5Family', 0]]);
  });
});

function usagesOf(read: () => UsagesRead | undefined) {
  let invalidated = 0;
  return {
    source: {
      read: async () => read(),
      invalidate: () => void invalidated++,
    },
    invalidated: () => invalidated,
  };
}

/** What a launch sees: the usages refreshed, then the shortfalls. */
async function checked(room: QuotaRoom, offerings: readonly Offering[], exceptVmName?: string) {
  await room.refresh();
  return room.shortfalls(offerings, exceptVmName);
}

describe('the quota room between two reads', () => {
  test('a burst holds what it plans: the third 4-vCPU launch finds the family full', async () => {
    const now = 1_000;
    const { source } = usagesOf(() => ({
      usages: [{ name: 'standardDSv5Family', currentValue: 2, limit: 10 }],
      sentAt: 500,
    }));
    const room = new QuotaRoom(source, () => now);
    const offerings = [d4()];
    expect(await checked(room, offerings, 'vm-a')).toEqual([]);
    room.hold('vm-a', d4());
    expect(await checked(room, offerings, 'vm-b')).toEqual([]);
    room.hold('vm-b', d4());
    const third = await checked(room, offerings, 'vm-c');
    expect(third.map((s) => s.free)).toEqual([0]);
    // A launch planned again does not count its own hold.
    expect((await checked(room, offerings, 'vm-b')).map((s) => s.free)).toEqual([]);
  });

  test('a hold ends when a read sent after its PUT counts it, or at once when the PUT made nothing', async () => {
    let now = 1_000;
    let read: UsagesRead = {
      usages: [{ name: 'standardDSv5Family', currentValue: 0, limit: 4 }],
      sentAt: 900,
    };
    const { source } = usagesOf(() => read);
    const room = new QuotaRoom(source, () => now);
    room.hold('vm-a', d4());
    room.created('vm-a');
    expect((await checked(room, [d4()], 'vm-b')).map((s) => s.free)).toEqual([0]);
    // A read sent after the PUT counts the VM itself: the hold goes, and the usage carries it.
    now = 2_000;
    read = { usages: [{ name: 'standardDSv5Family', currentValue: 4, limit: 4 }], sentAt: 1_500 };
    expect((await checked(room, [d4()], 'vm-b')).map((s) => s.free)).toEqual([0]);
    read = { usages: [{ name: 'standardDSv5Family', currentValue: 0, limit: 4 }], sentAt: 1_600 };
    expect(await checked(room, [d4()], 'vm-b')).toEqual([]);
    // Released: the refused PUT held nothing.
    room.hold('vm-c', d4());
    expect((await checked(room, [d4()], 'vm-b')).map((s) => s.free)).toEqual([0]);
    room.release('vm-c');
    expect(await checked(room, [d4()], 'vm-b')).toEqual([]);
  });

  test('a reserved offering holds nothing, and no read means no blocks (quota learned from the PUT)', async () => {
    const { source } = usagesOf(() => undefined);
    const room = new QuotaRoom(source, () => 0);
    room.hold('vm-a', d4({ capacityType: 'reserved', reservationId: 'r' }));
    expect(await checked(room, [d4()])).toEqual([]);
  });

  test('a quota refusal makes the next launch read again', () => {
    const { source, invalidated } = usagesOf(() => undefined);
    new QuotaRoom(source, () => 0).refused();
    expect(invalidated()).toBe(1);
  });
});

const requirements = [
  { key: 'karpenter.sh/capacity-type', operator: 'In' as const, values: ['spot', 'on-demand'] },
];

describe('the choice with quota known', () => {
  test('the family out of quota is skipped for the next cheapest family, and named when none is left', () => {
    const [family] = quotaShortfalls([{ name: 'standardDSv5Family', currentValue: 10, limit: 10 }], []);
    const quota = [{ block: family!.block, message: family!.message }];
    const price = (o: Offering) => (o.skuFamily === 'standardDSv5Family' ? 0.19 : 0.21);
    const order = compareOfferingsByPrice(price);
    expect(selectOffering({ requirements, offerings: [d4(), d4as()], quota, order }).offering?.vmSize).toBe(
      'Standard_D4as_v5',
    );
    const none = selectOffering({ requirements, offerings: [d4()], quota, order });
    expect(none.offering).toBeUndefined();
    expect(none.offering === undefined && none.reason).toContain(
      '1 beyond their vCPU quota (e.g. Standard_D4s_v5: exceeding approved standardDSv5Family Cores quota',
    );
  });
});

describe('spot placement scores', () => {
  const spot = (zoneNumber: string, overrides: Partial<Offering> = {}) =>
    d2sV5Offering({ capacityType: 'spot', zone: `westus2-${zoneNumber}`, zoneNumber, ...overrides });
  const scores = (entries: [string, string, PlacementScore][]) =>
    new Map(entries.map(([size, zone, score]) => [scoreKey('spot', size, zone), score]));

  test('equally priced zones are tried most likely first; a Low zone only when nothing else is left', () => {
    const scored = scores([
      ['Standard_D2s_v5', '1', 'Low'],
      ['Standard_D2s_v5', '2', 'Medium'],
      ['Standard_D2s_v5', '3', 'High'],
    ]);
    const offerings = [spot('1'), spot('2'), spot('3')];
    const input = {
      requirements,
      offerings,
      order: compareOfferingsByPrice(
        () => 0.05,
        (o) => likelihoodRank(scoreOf(scored, o)),
      ),
      unlikely: (o: Offering) => isUnlikely(scoreOf(scored, o)),
    };
    expect(candidateOfferings(input).map((o) => o.zoneNumber)).toEqual(['3', '2', '1']);
    expect(selectOffering(input).offering?.zoneNumber).toBe('3');
    expect(selectOffering({ ...input, offerings: [spot('1')] }).offering?.zoneNumber).toBe('1');
  });

  test('a cheaper size is never passed over for a dearer one unless Azure scores it unlikely', () => {
    const dearer = spot('1', { vmSize: 'Standard_D4s_v5', cpu: 4, memoryMiB: 16384 });
    const price = (o: Offering) => (o.cpu === 2 ? 0.05 : 0.1);
    for (const [cheapScore, chosen] of [
      ['High', 'Standard_D2s_v5'],
      ['Medium', 'Standard_D2s_v5'],
      ['DataNotFoundOrStale', 'Standard_D2s_v5'],
      ['Low', 'Standard_D4s_v5'],
      ['RestrictedSKU', 'Standard_D4s_v5'],
    ] as const) {
      const scored = scores([
        ['Standard_D2s_v5', '1', cheapScore],
        ['Standard_D4s_v5', '1', 'High'],
      ]);
      const selection = selectOffering({
        requirements,
        offerings: [spot('1'), dearer],
        order: compareOfferingsByPrice(price, (o) => likelihoodRank(scoreOf(scored, o))),
        unlikely: (o) => isUnlikely(scoreOf(scored, o)),
      });
      expect(selection.offering?.vmSize, cheapScore).toBe(chosen);
    }
  });

  test('on-demand offerings take the regular scores; regional and reserved ones carry none', () => {
    const scored = scores([['Standard_D2s_v5', '1', 'Low']]);
    expect(scoreOf(scored, d2sV5Offering())).toBeUndefined();
    const regular = new Map([[scoreKey('regular', 'Standard_D2s_v5', '1'), 'High' as const]]);
    expect(scoreOf(regular, d2sV5Offering())).toBe('High');
    expect(scoreOf(regular, d2sV5Offering({ capacityType: 'reserved' }))).toBeUndefined();
    expect(scoreOf(scored, spot('1', { zoneNumber: undefined, zone: '0' }))).toBeUndefined();
    expect(scoreOf(scored, spot('1'))).toBe('Low');
  });
});
