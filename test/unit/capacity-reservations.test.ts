// Reserved capacity's pure decisions, as tables: which groups the setting names, the reservation IDs
// nodes are labelled with, reserved offerings with their integer availability, who of several
// concurrent launches takes the last slots, the launch choice (reserved preferred while it has a slot,
// on-demand after, never a full reservation, as upstream's suite expects of reserved offerings), the price
// treatment, and what a refused reservation makes launches avoid. The emulator's group model is tested
// here too, since it is plain data (no server needed).
import { describe, expect, it } from 'vitest';
import { skuCatalog } from '../../local/arm-emulator/sku-catalog.js';
import { CapacityReservationStore } from '../../local/arm-emulator/capacity-reservations.js';
import type { StoredVm } from '../../local/arm-emulator/vm-store.js';
import {
  parseCapacityReservationGroupIds,
  reservationIdOf,
} from '../../shared/cloudprovider/azure/decisions/capacity-reservation-groups.js';
import {
  compareResourceVersions,
  holdsCommittedSeat,
  holdsReservationSeat,
  reservationAvailability,
  reservedOfferings,
  type CapacityReservationRecord,
  type ReservationClaimant,
} from '../../shared/cloudprovider/azure/decisions/capacity-reservations.js';
import {
  quotaScopesFreedBy,
  rememberFailure,
} from '../../shared/cloudprovider/azure/decisions/failure-memory.js';
import { classifyLaunchError } from '../../shared/cloudprovider/azure/decisions/launch-errors.js';
import { isOfferingBlocked } from '../../shared/decisions/offering-blocks.js';
import { offeringLabels, offeringsFromSkus, selectOffering } from '../../shared/decisions/offerings.js';
import { compareOfferingsByPrice } from '../../shared/decisions/prices/offering-order.js';
import { priceOf, RESERVED_PRICE_FACTOR, type PriceBook } from '../../shared/decisions/prices/price-book.js';
import { instanceTypesFromOfferings } from '../../shared/decisions/scheduling/catalog-instance-types.js';
import { WellKnown } from '../../shared/models/karpenter.js';
import type { NodeSelectorRequirement } from '../../shared/models/kube.js';

const SUB = '00000000-0000-0000-0000-000000000001';
const groupId = (rg: string, name: string) =>
  `/subscriptions/${SUB}/resourceGroups/${rg}/providers/Microsoft.Compute/capacityReservationGroups/${name}`;
const catalog = offeringsFromSkus(skuCatalog, 'westus2');

function record(overrides: Partial<CapacityReservationRecord> = {}): CapacityReservationRecord {
  return {
    groupId: groupId('rg', 'crg'),
    groupName: 'crg',
    name: 'd4s-z1',
    vmSize: 'Standard_D4s_v5',
    zoneNumber: '1',
    capacity: 3,
    allocatedVmNames: [],
    provisioningState: 'Succeeded',
    ...overrides,
  };
}

const none = () => new Set<string>();

describe('CAPACITY_RESERVATION_GROUP_IDS', () => {
  it.each([
    ['', 0, []],
    [`${groupId('rg', 'a')}, ${groupId('rg2', 'b')}`, 2, []],
    ['not-an-id', 0, ['expected /subscriptions/']],
    [`${groupId('rg', 'a')},${groupId('other', 'A')}`, 1, ['names capacity reservation group "A" twice']],
  ])('%j → %i groups', (raw, count, problems) => {
    const parsed = parseCapacityReservationGroupIds('CAPACITY_RESERVATION_GROUP_IDS', raw);
    expect(parsed.groups).toHaveLength(count);
    expect(parsed.problems).toHaveLength(problems.length);
    problems.forEach((p, i) => expect(parsed.problems[i]).toContain(p));
  });

  it('keeps the parts of an ID', () => {
    expect(parseCapacityReservationGroupIds('X', groupId('my-rg', 'crg1')).groups[0]).toEqual({
      id: groupId('my-rg', 'crg1'),
      subscriptionId: SUB,
      resourceGroup: 'my-rg',
      name: 'crg1',
    });
  });
});

describe('reservation IDs are label values', () => {
  it.each([
    ['crg', 'd4s-z1', 'crg.d4s-z1'],
    ['CRG_Prod', 'D4s', 'crg_prod.d4s'],
  ])('%s / %s → %s', (group, reservation, id) => expect(reservationIdOf(group, reservation)).toBe(id));

  it('a long pair is shortened with a hash, stays unique and a valid label value', () => {
    const a = reservationIdOf('g'.repeat(60), 'reservation-one');
    const b = reservationIdOf('g'.repeat(60), 'reservation-two');
    for (const id of [a, b]) {
      expect(id.length).toBeLessThanOrEqual(63);
      expect(id).toMatch(/^[a-z0-9]([-a-z0-9_.]*[a-z0-9])?$/);
    }
    expect(a).not.toBe(b);
  });
});

describe('availability: reserved count less the VMs in the reservation', () => {
  it.each([
    ['nothing allocated', [], [], 3],
    ['two allocated', ['vm-a', 'vm-b'], [], 1],
    ['one allocated, two launching', ['vm-a'], ['vm-b', 'vm-c'], 0],
    ['a launching VM Azure lists already counts once', ['vm-a'], ['VM-A'], 2],
    ['overallocated by someone else: never below 0', ['a', 'b', 'c', 'd'], [], 0],
  ])('%s', (_, allocated: string[], launching: string[], available) => {
    expect(reservationAvailability(record({ allocatedVmNames: allocated }), new Set(launching))).toBe(
      available,
    );
  });
});

describe('reserved offerings', () => {
  it("copy the size's on-demand offering in the reservation's zone", () => {
    const [offering, ...rest] = reservedOfferings([record()], catalog, none);
    expect(rest).toEqual([]);
    expect(offering).toMatchObject({
      vmSize: 'Standard_D4s_v5',
      zone: 'westus2-1',
      capacityType: 'reserved',
      reservationId: 'crg.d4s-z1',
      reservationGroupId: groupId('rg', 'crg'),
      reservedAvailable: 3,
    });
    expect(offeringLabels(offering!)).toMatchObject({
      [WellKnown.capacityTypeLabel]: 'reserved',
      [WellKnown.capacityReservationIdLabel]: 'crg.d4s-z1',
    });
  });

  it.each([
    ['a size the catalog lacks', { vmSize: 'Standard_X1' }],
    ['a zone the size is not offered in', { zoneNumber: '9' }],
    ['a reservation still being created', { provisioningState: 'Creating' }],
  ])('none for %s', (_, overrides) => {
    expect(reservedOfferings([record(overrides)], catalog, none)).toEqual([]);
  });

  it('a regional reservation gives the regional offering', () => {
    const { zoneNumber: _zone, ...regional } = record();
    const [offering] = reservedOfferings([regional], catalog, none);
    expect(offering?.zone).toBe('0');
    expect(offering?.zoneNumber).toBeUndefined();
  });
});

describe('concurrent launches agree on who takes the free slots', () => {
  const claimant = (name: string, createdAt: string, launched = false): ReservationClaimant => ({
    nodeClaimName: name,
    vmName: `aks-${name}`,
    creationTimestamp: createdAt,
    launched,
  });
  const four = [
    claimant('a', '2026-12-02T00:00:01Z'),
    claimant('b', '2026-12-02T00:00:02Z'),
    claimant('c', '2026-12-02T00:00:02Z'),
    claimant('d', '2026-12-02T00:00:00Z', true),
  ];
  it.each([
    // capacity 3, nothing allocated: the launched one, then the oldest, then by name.
    ['d', 3, [], true],
    ['a', 3, [], true],
    ['b', 3, [], true],
    ['c', 3, [], false],
    // one slot taken by a VM Azure lists that is not ours: only two seats.
    ['b', 3, ['other-vm'], false],
    // a claimant whose VM Azure already lists holds its slot.
    ['c', 3, ['aks-c', 'x', 'y'], true],
    ['z', 3, [], false],
  ])('%s with capacity %i and %j allocated → %s', (self, capacity, allocated: string[], seat) => {
    expect(holdsReservationSeat({ capacity, allocatedVmNames: allocated }, four, self)).toBe(seat);
  });
});

describe('concurrent launches yield to earlier claims', () => {
  // Four NodeClaims created in the same second; three claimed first (c, then b, then a), d last. d lists
  // after its claim and sees all four; it must not take a seat by its name, since c, b and a may already
  // be sending their PUTs on what they saw.
  const claimed = (name: string, at: string): ReservationClaimant => ({
    nodeClaimName: name,
    vmName: `aks-${name}`,
    creationTimestamp: '2026-12-02T00:00:00Z',
    claimedAt: at,
    launched: false,
  });
  const all = [
    claimed('a', '2026-12-02T00:00:00.300Z'),
    claimed('b', '2026-12-02T00:00:00.200Z'),
    claimed('c', '2026-12-02T00:00:00.100Z'),
    claimed('0d', '2026-12-02T00:00:00.400Z'),
  ];
  it.each([
    ['c', true],
    ['b', true],
    ['a', true],
    ['0d', false],
  ])('%s → %s', (self, seat) => {
    expect(holdsReservationSeat({ capacity: 3, allocatedVmNames: [] }, all, self)).toBe(seat);
  });

  it('each decides alike on what it saw when it listed: never more seats than the capacity', () => {
    // c listed when only c had claimed, b when c and b had, a when three had, 0d when all four had.
    const seen = (upTo: number) => all.slice(0, 4).filter((_, i) => [2, 1, 0, 3].indexOf(i) < upTo);
    const decisions = [
      holdsReservationSeat({ capacity: 3, allocatedVmNames: [] }, seen(1), 'c'),
      holdsReservationSeat({ capacity: 3, allocatedVmNames: [] }, seen(2), 'b'),
      holdsReservationSeat({ capacity: 3, allocatedVmNames: [] }, seen(3), 'a'),
      holdsReservationSeat({ capacity: 3, allocatedVmNames: [] }, seen(4), '0d'),
    ];
    expect(decisions).toEqual([true, true, true, false]);
  });
});

describe('commitments ordered by the API server keep concurrent launches within the capacity', () => {
  const record = { capacity: 3, allocatedVmNames: [] as string[] };
  const claimant = (name: string, extra: Partial<ReservationClaimant> = {}): ReservationClaimant => ({
    nodeClaimName: name,
    vmName: `aks-${name}`,
    creationTimestamp: '2026-12-02T00:00:00Z',
    launched: false,
    ...extra,
  });

  it('compares resource versions as integers, and refuses what is not one', () => {
    expect(compareResourceVersions('9', '10')).toBeLessThan(0);
    expect(compareResourceVersions('1200', '1199')).toBeGreaterThan(0);
    expect(compareResourceVersions('42', '42')).toBe(0);
    expect(compareResourceVersions('042', '42')).toBeUndefined();
    expect(compareResourceVersions('', '1')).toBeUndefined();
    expect(compareResourceVersions('abc', '1')).toBeUndefined();
  });

  it('the interleaving that overallocated: all four held a seat by their claims, only the first three commitments keep it', () => {
    // d listed before a's claim landed (a stamped its claim earlier but wrote it later), so by the claims
    // alone all four went in. Their commitments landed in the order b (101), c (102), d (103), a (104);
    // each lists after its own commitment and sees at least those written before it.
    const version = { b: '101', c: '102', d: '103', a: '104' } as const;
    const committed = (name: keyof typeof version) =>
      claimant(name, { committed: true, resourceVersion: version[name] });
    const views: Record<keyof typeof version, ReservationClaimant[]> = {
      b: [committed('b'), claimant('c', { resourceVersion: '90' })],
      c: [committed('b'), committed('c'), claimant('d', { resourceVersion: '95' })],
      d: [committed('b'), committed('c'), committed('d')],
      a: [committed('b'), committed('c'), committed('d'), committed('a')],
    };
    const keeps = (Object.keys(version) as (keyof typeof version)[]).filter((name) =>
      holdsCommittedSeat(record, views[name], name, version[name]),
    );
    expect(keeps).toEqual(['b', 'c', 'd']);
  });

  it('an earlier commitment seen later never makes an earlier launch yield (no slot lost to two yields)', () => {
    // b committed first (101) and lists late, after c, d and a committed: it still counts none of them.
    const seen = [
      claimant('b', { committed: true, resourceVersion: '101' }),
      claimant('c', { committed: true, resourceVersion: '102' }),
      claimant('d', { committed: true, resourceVersion: '103' }),
      claimant('a', { committed: true, resourceVersion: '104' }),
    ];
    expect(holdsCommittedSeat(record, seen, 'b', '101')).toBe(true);
    expect(holdsCommittedSeat(record, seen, 'a', '104')).toBe(false);
  });

  it('launched and allocated claimants count whatever their version; an uncomparable version counts', () => {
    const launched = [claimant('x', { launched: true, resourceVersion: '500' })];
    expect(holdsCommittedSeat({ capacity: 1, allocatedVmNames: [] }, launched, 'me', '100')).toBe(false);
    expect(holdsCommittedSeat({ capacity: 2, allocatedVmNames: ['aks-y'] }, launched, 'me', '100')).toBe(
      false,
    );
    expect(
      holdsCommittedSeat(
        { capacity: 1, allocatedVmNames: ['aks-me'] },
        [...launched, claimant('me')],
        'me',
        '100',
      ),
    ).toBe(true);
    const opaque = [claimant('x', { committed: true, resourceVersion: 'opaque' })];
    expect(holdsCommittedSeat({ capacity: 1, allocatedVmNames: [] }, opaque, 'me', '100')).toBe(false);
    // Uncommitted claimants (they have not passed their own first check yet) take nothing.
    const waiting = [claimant('x', { resourceVersion: '50' })];
    expect(holdsCommittedSeat({ capacity: 1, allocatedVmNames: [] }, waiting, 'me', '100')).toBe(true);
  });
});

describe('launch prefers a reservation while it has a slot (upstream: reserved before on-demand)', () => {
  const book: PriceBook = {
    region: 'westus2',
    asOf: '2026-12-01',
    source: 'static',
    onDemand: new Map([
      ['Standard_D4s_v5', 0.192],
      ['Standard_D2s_v5', 0.096],
    ]),
    spot: new Map([['Standard_D4s_v5', 0.04]]),
  };
  const order = compareOfferingsByPrice((o) => priceOf(book, o.vmSize, o.capacityType));
  const reservedOrNot = [
    { key: WellKnown.capacityTypeLabel, operator: 'In' as const, values: ['reserved', 'on-demand'] },
  ];
  const d4 = [{ key: WellKnown.instanceTypeLabel, operator: 'In' as const, values: ['Standard_D4s_v5'] }];
  const choose = (available: number, requirements: NodeSelectorRequirement[] = [...reservedOrNot, ...d4]) =>
    selectOffering({
      requirements,
      offerings: [...catalog, ...reservedOfferings([record({ capacity: available })], catalog, none)],
      order,
    }).offering;

  it('reserved while the reservation has a slot', () => {
    expect(choose(1)).toMatchObject({ capacityType: 'reserved', reservationId: 'crg.d4s-z1' });
  });
  it('on-demand once it is full', () => {
    expect(choose(0)).toMatchObject({ capacityType: 'on-demand', vmSize: 'Standard_D4s_v5' });
  });
  it('a reserved D4s is preferred over a cheaper on-demand D2s', () => {
    const both = [{ ...d4[0]!, values: ['Standard_D4s_v5', 'Standard_D2s_v5'] }];
    expect(choose(1, [...reservedOrNot, ...both])?.capacityType).toBe('reserved');
  });
  it('never when the requirements say on-demand only, or name another reservation', () => {
    const onDemandOnly = [
      { key: WellKnown.capacityTypeLabel, operator: 'In' as const, values: ['on-demand'] },
    ];
    expect(choose(1, [...onDemandOnly, ...d4])?.capacityType).toBe('on-demand');
    const other = { key: WellKnown.capacityReservationIdLabel, operator: 'In' as const, values: ['x.y'] };
    expect(choose(1, [...reservedOrNot, ...d4, other])).toBeUndefined();
  });
  it('a NodeClaim that says nothing about capacity type gets on-demand, as before', () => {
    expect(choose(1, d4)?.capacityType).toBe('on-demand');
  });
  it('prices reserved as free while keeping the on-demand order between sizes', () => {
    const d4Reserved = priceOf(book, 'Standard_D4s_v5', 'reserved') ?? NaN;
    const d2Reserved = priceOf(book, 'Standard_D2s_v5', 'reserved') ?? NaN;
    expect(d4Reserved).toBeCloseTo(0.192 * RESERVED_PRICE_FACTOR, 12);
    expect(d2Reserved).toBeLessThan(d4Reserved);
    expect(d4Reserved).toBeLessThan(priceOf(book, 'Standard_D4s_v5', 'spot') ?? 0);
  });
  it('the simulation lists a full reservation as unavailable', () => {
    const types = instanceTypesFromOfferings(reservedOfferings([record({ capacity: 0 })], catalog, none));
    expect(types[0]?.offerings).toEqual([
      expect.objectContaining({ capacityType: 'reserved', available: false }),
    ]);
  });
});

describe('a refused reservation is avoided for that reservation only', () => {
  const [reserved] = reservedOfferings([record()], catalog, none);
  const [otherReservation] = reservedOfferings([record({ groupName: 'crg2' })], catalog, none);
  const onDemand = catalog.find(
    (o) => o.capacityType === 'on-demand' && o.vmSize === 'Standard_D4s_v5' && o.zone === 'westus2-1',
  );
  it.each([
    [
      'the emulator: no reservation of the size and zone',
      'InvalidParameter',
      "The capacity reservation group '/subscriptions/x' has no capacity reservation for VM size 'Standard_D4s_v5' in zone 1.",
    ],
    [
      'the group is gone',
      'ResourceNotFound',
      "The Resource 'Microsoft.Compute/capacityReservationGroups/crg' under resource group 'rg' was not found.",
    ],
  ])('%s', (_, code, message) => {
    const failure = classifyLaunchError({ code, statusCode: 400, message });
    expect(failure.reason).toBe('CapacityReservationUnavailable');
    expect(failure.retryable).toBe(false);
    const remembered = rememberFailure(failure.unavailable!, reserved!);
    expect(isOfferingBlocked(reserved!, remembered.blocks)).toBe(true);
    expect(isOfferingBlocked(otherReservation!, remembered.blocks)).toBe(false);
    expect(isOfferingBlocked(onDemand!, remembered.blocks)).toBe(false);
    expect(remembered.ttlSeconds).toBe(300);
  });

  it("a deleted reserved VM frees no quota (its cores were the reservation's)", () => {
    expect(quotaScopesFreedBy({ skuFamily: 'standardDSv5Family', capacityType: 'reserved' })).toEqual([]);
  });
});

describe('the emulated group (local/arm-emulator/capacity-reservations.ts)', () => {
  const store = new CapacityReservationStore();
  store.define({
    subscriptionId: SUB,
    resourceGroup: 'rg',
    name: 'crg',
    location: 'westus2',
    reservations: [{ name: 'd4s-z1', vmSize: 'Standard_D4s_v5', zone: '1', capacity: 1 }],
  });
  const vm = (name: string, zones: string[], group = groupId('rg', 'crg')): StoredVm =>
    ({
      id: `/subscriptions/${SUB}/resourceGroups/nodes/providers/Microsoft.Compute/virtualMachines/${name}`,
      name,
      timeCreated: `2026-12-02T00:00:0${name.length}Z`,
      spec: {
        vmSize: 'Standard_D4s_v5',
        zones,
        properties: { capacityReservation: { capacityReservationGroup: { id: group } } },
      },
    }) as unknown as StoredVm;

  it('refuses a VM whose size and zone it holds no reservation for, or a group that does not exist', () => {
    expect(() =>
      store.checkVmPut(groupId('rg', 'crg'), {
        location: 'westus2',
        vmSize: 'Standard_D4s_v5',
        zones: ['2'],
      }),
    ).toThrow(/no capacity reservation for VM size 'Standard_D4s_v5' in zone 2/);
    expect(() =>
      store.checkVmPut(groupId('rg', 'nope'), {
        location: 'westus2',
        vmSize: 'Standard_D4s_v5',
        zones: ['1'],
      }),
    ).toThrow(/was not found/);
    expect(() =>
      store.checkVmPut(groupId('rg', 'crg'), {
        location: 'westus2',
        vmSize: 'Standard_D4s_v5',
        zones: ['1'],
      }),
    ).not.toThrow();
  });

  it('the instance view lists every VM in the reservation, beyond its count too (overallocation)', () => {
    const view = store.renderGroup(
      { subscriptionId: SUB, resourceGroup: 'rg', name: 'crg' },
      [vm('a', ['1']), vm('bb', ['1']), vm('c', ['2'], groupId('rg', 'other'))],
      true,
    ) as {
      properties: {
        instanceView: {
          capacityReservations: {
            utilizationInfo: { currentCapacity: number; virtualMachinesAllocated: { id: string }[] };
          }[];
        };
        virtualMachinesAssociated: unknown[];
      };
    };
    const [reservation] = view.properties.instanceView.capacityReservations;
    expect(reservation?.utilizationInfo.currentCapacity).toBe(1);
    expect(reservation?.utilizationInfo.virtualMachinesAllocated.map((v) => v.id.split('/').pop())).toEqual([
      'a',
      'bb',
    ]);
    expect(view.properties.virtualMachinesAssociated).toHaveLength(2);
  });
});
