// NodeOverlay evaluation against upstream's worked cases (kubernetes-sigs/karpenter
// pkg/controllers/nodeoverlay/suite_test.go and designs/node-overlay.md): ordering by weight and name,
// runtime validation, price and capacity conflicts at equal weight, no partial application, merged
// capacity, and AdjustedPrice's arithmetic; then how the evaluation changes instance types and prices.
import { describe, expect, it } from 'vitest';
import type { Offering } from '../../shared/decisions/offerings.js';
import {
  adjustedPrice,
  evaluateNodeOverlays,
  orderByWeight,
  overlaidCapacity,
  overlaidInstanceTypes,
  overlaidOfferingPrice,
  type OverlayNodePool,
} from '../../shared/decisions/node-overlays.js';
import { nodeOverlayConditions } from '../../shared/decisions/node-overlay-status.js';
import type { InstanceType } from '../../shared/decisions/scheduling/types.js';
import type { NodeOverlay, NodeOverlaySpec } from '../../shared/models/node-overlay.js';

function offering(
  vmSize: string,
  zone: string,
  capacityType: Offering['capacityType'],
  arch = 'amd64',
): Offering {
  return {
    vmSize,
    family: 'D',
    skuFamily: 'standardDSv5Family',
    cpu: 4,
    memoryMiB: 16384,
    arch: arch as Offering['arch'],
    location: 'westus2',
    zone,
    capacityType,
    premiumIO: true,
    acceleratedNetworking: true,
  };
}

function overlay(name: string, spec: Partial<NodeOverlaySpec>): NodeOverlay {
  return { metadata: { name }, spec: { requirements: [], ...spec } };
}

const pool: OverlayNodePool = { name: 'default', labels: {} };
const catalog = [
  offering('Standard_D4s_v5', 'westus2-1', 'spot'),
  offering('Standard_D4s_v5', 'westus2-1', 'on-demand'),
  offering('Standard_D4s_v5', 'westus2-2', 'on-demand'),
  offering('Standard_D4ps_v5', 'westus2-1', 'on-demand', 'arm64'),
];
const instanceType = (name: string) => ({
  key: 'node.kubernetes.io/instance-type',
  operator: 'In' as const,
  values: [name],
});
const outcomes = (...overlays: NodeOverlay[]) =>
  Object.fromEntries(
    [...evaluateNodeOverlays(overlays, [pool], catalog).outcomes].map(([name, o]) => [
      name,
      o.valid ? 'valid' : o.reason,
    ]),
  );

describe('orderByWeight', () => {
  it('puts higher weights first and, at equal weight, the name later in the alphabet first', () => {
    const ordered = orderByWeight([
      overlay('a', { weight: 10 }),
      overlay('b', { weight: 10 }),
      overlay('c', {}),
      overlay('d', { weight: 20 }),
    ]);
    expect(ordered.map((o) => o.metadata.name)).toEqual(['d', 'b', 'a', 'c']);
  });
});

describe('validation (upstream: Runtime Validation)', () => {
  it('passes a single overlay', () => {
    expect(outcomes(overlay('one', { requirements: [instanceType('Standard_D4s_v5')], weight: 10 }))).toEqual(
      {
        one: 'valid',
      },
    );
  });

  it('fails a requirement key longer than a label key may be, naming the field', () => {
    const bad = overlay('long', {
      requirements: [{ key: `test.com.test/test-${'x'.repeat(250)}`, operator: 'Exists' }],
    });
    const evaluation = evaluateNodeOverlays([bad], [pool], catalog);
    expect(evaluation.outcomes.get('long')).toMatchObject({
      valid: false,
      reason: 'RuntimeValidation',
      message: expect.stringContaining('spec.requirements[0].key'),
    });
  });

  it.each(['cpu', 'memory', 'pods', 'ephemeral-storage'])('fails capacity naming %s', (resource) => {
    expect(outcomes(overlay('cap', { capacity: { [resource]: '5' } }))).toEqual({ cap: 'RuntimeValidation' });
  });

  it('fails price and priceAdjustment together, a malformed adjustment and NotIn without values', () => {
    expect(
      outcomes(
        overlay('both', { price: '1', priceAdjustment: '+1' }),
        overlay('pattern', { priceAdjustment: '10%' }),
        overlay('notin', { requirements: [{ key: 'example.com/team', operator: 'NotIn', values: [] }] }),
      ),
    ).toEqual({ both: 'RuntimeValidation', pattern: 'RuntimeValidation', notin: 'RuntimeValidation' });
  });
});

describe('price conflicts (upstream: Requirements Validations)', () => {
  it('fails the earlier name when overlays of equal weight set the price of the same offerings', () => {
    const a = overlay('overlay-a', {
      requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }],
      weight: 10,
      price: '1.03',
    });
    const b = overlay('overlay-b', {
      requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'Exists' }],
      weight: 10,
      price: '23',
    });
    expect(outcomes(a, b)).toEqual({ 'overlay-a': 'Conflict', 'overlay-b': 'valid' });
  });

  it('passes overlays of equal weight on instance types that do not overlap', () => {
    const arm = overlay('arm', {
      requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }],
      weight: 10,
      price: '1',
    });
    const amd = overlay('amd', {
      requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }],
      weight: 10,
      price: '2',
    });
    expect(outcomes(arm, amd)).toEqual({ arm: 'valid', amd: 'valid' });
  });

  it('fails overlays of equal weight that overlap on a zone, passes them on different zones', () => {
    const zone = (name: string, zones: string[]) =>
      overlay(name, {
        requirements: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: zones }],
        weight: 10,
        priceAdjustment: '-10%',
      });
    expect(outcomes(zone('z-a', ['westus2-1']), zone('z-b', ['westus2-1', 'westus2-3']))).toEqual({
      'z-a': 'Conflict',
      'z-b': 'valid',
    });
    expect(outcomes(zone('z-a', ['westus2-1']), zone('z-b', ['westus2-2']))).toEqual({
      'z-a': 'valid',
      'z-b': 'valid',
    });
  });

  it('fails the overlay taken second (earlier name) when equal weights overlap on capacity type', () => {
    const ct = (name: string, types: string[]) =>
      overlay(name, {
        requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: types }],
        weight: 10,
        price: '1',
      });
    expect(outcomes(ct('spot-only', ['spot']), ct('spot-and-od', ['spot', 'on-demand']))).toEqual({
      'spot-only': 'valid',
      'spot-and-od': 'Conflict',
    });
  });

  it('takes the heavier price where weights differ; the lighter overlay is valid but changes nothing it shares', () => {
    const heavy = overlay('heavy', {
      requirements: [instanceType('Standard_D4s_v5')],
      weight: 20,
      price: '5',
    });
    const light = overlay('light', {
      requirements: [instanceType('Standard_D4s_v5')],
      weight: 10,
      price: '1',
    });
    const evaluation = evaluateNodeOverlays([light, heavy], [pool], catalog);
    expect([...evaluation.outcomes.values()].every((o) => o.valid)).toBe(true);
    expect(overlaidOfferingPrice(evaluation, 'default', catalog[1]!, 0.2)).toBe(5);
  });
});

describe('capacity', () => {
  const fuse = (name: string, types: string[], weight: number, value = '54') =>
    overlay(name, {
      requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: types }],
      weight,
      capacity: { 'smarter-devices/fuse': value },
    });

  it('fails equal-weight overlays naming the same resource on a shared instance type, even with the same value', () => {
    expect(
      outcomes(
        fuse('overlay-a', ['Standard_D4s_v5', 'Standard_D2s_v5'], 10),
        fuse('overlay-b', ['Standard_D4s_v5', 'Standard_D4ps_v5'], 10),
      ),
    ).toEqual({ 'overlay-a': 'Conflict', 'overlay-b': 'valid' });
  });

  it('passes them on mutually exclusive instance types, or with different weights (the heavier wins)', () => {
    expect(outcomes(fuse('a', ['Standard_D4s_v5'], 10), fuse('b', ['Standard_D4ps_v5'], 10))).toEqual({
      a: 'valid',
      b: 'valid',
    });
    const evaluation = evaluateNodeOverlays(
      [fuse('overlay-a', ['Standard_D4s_v5'], 10, '12'), fuse('overlay-b', ['Standard_D4s_v5'], 20, '99')],
      [pool],
      catalog,
    );
    expect([...evaluation.outcomes.values()].every((o) => o.valid)).toBe(true);
    expect(overlaidCapacity(evaluation, 'default', 'Standard_D4s_v5')).toEqual({
      'smarter-devices/fuse': '99',
    });
  });

  it('merges different resources from several overlays on one instance type', () => {
    const fpga = overlay('fpga', {
      requirements: [instanceType('Standard_D4s_v5')],
      weight: 10,
      capacity: { 'example.com/fpga': '2' },
    });
    const evaluation = evaluateNodeOverlays([fuse('fuse', ['Standard_D4s_v5'], 10), fpga], [pool], catalog);
    expect(overlaidCapacity(evaluation, 'default', 'Standard_D4s_v5')).toEqual({
      'smarter-devices/fuse': '54',
      'example.com/fpga': '2',
    });
    expect(overlaidCapacity(evaluation, 'default', 'Standard_D4ps_v5')).toEqual({});
  });
});

describe('NodePools', () => {
  const pools: OverlayNodePool[] = [
    { name: 'team-a', labels: { team: 'a' } },
    { name: 'team-b', labels: { team: 'b' } },
  ];

  it('applies only to the NodePools its requirements select (karpenter.sh/nodepool or template labels)', () => {
    const byPool = overlay('a-only', {
      requirements: [{ key: 'karpenter.sh/nodepool', operator: 'In', values: ['team-a'] }],
      price: '9',
    });
    const byLabel = overlay('b-label', {
      requirements: [{ key: 'team', operator: 'In', values: ['b'] }],
      price: '7',
    });
    const evaluation = evaluateNodeOverlays([byPool, byLabel], pools, catalog);
    expect(overlaidOfferingPrice(evaluation, 'team-a', catalog[1]!, 0.2)).toBe(9);
    expect(overlaidOfferingPrice(evaluation, 'team-b', catalog[1]!, 0.2)).toBe(7);
  });

  it('applies a conflicting overlay nowhere, not even where it does not conflict (no partial application)', () => {
    const first = overlay('z-first', {
      requirements: [{ key: 'team', operator: 'In', values: ['a'] }],
      weight: 10,
      price: '1',
    });
    const everywhere = overlay('a-everywhere', { requirements: [], weight: 10, price: '3' });
    const evaluation = evaluateNodeOverlays([first, everywhere], pools, catalog);
    expect(evaluation.outcomes.get('a-everywhere')).toMatchObject({ valid: false, reason: 'Conflict' });
    expect(overlaidOfferingPrice(evaluation, 'team-b', catalog[1]!, 0.2)).toBe(0.2);
  });
});

describe('adjustedPrice (upstream AdjustedPrice)', () => {
  it.each([
    [1, '2.5', 2.5],
    [1, '+0.5', 1.5],
    [1, '-0.25', 0.75],
    [1, '-2', 0],
    [2, '+10%', 2.2],
    [2, '-30%', 1.4],
    [2, '-100%', 0],
    [2, '', 2],
  ])('%d with %s is %d', (price, change, expected) => {
    expect(adjustedPrice(price, change)).toBeCloseTo(expected, 10);
  });
});

describe('overlaidInstanceTypes', () => {
  const base: InstanceType = {
    name: 'Standard_D4s_v5',
    labels: {},
    capacity: { cpu: '4', memory: '16Gi' },
    allocatable: { cpu: '3860m', memory: '12Gi' },
    offerings: [
      { zone: 'westus2-1', capacityType: 'on-demand', price: 0.2, available: true },
      { zone: 'westus2-1', capacityType: 'spot', price: Infinity, available: true },
    ],
  };

  it('adjusts matching offering prices and adds the extended resources to capacity and allocatable', () => {
    const evaluation = evaluateNodeOverlays(
      [
        overlay('discount', {
          requirements: [
            instanceType('Standard_D4s_v5'),
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
          ],
          priceAdjustment: '-30%',
        }),
        overlay('fpga', {
          requirements: [instanceType('Standard_D4s_v5')],
          capacity: { 'example.com/fpga': '2' },
        }),
      ],
      [pool],
      catalog,
    );
    const [overlaid] = overlaidInstanceTypes(evaluation, 'default', [base]);
    expect(overlaid!.offerings.map((o) => o.price)).toEqual([0.2 * 0.7, Infinity]);
    expect(overlaid!.capacity).toEqual({ cpu: '4', memory: '16Gi', 'example.com/fpga': '2' });
    expect(overlaid!.allocatable).toEqual({ cpu: '3860m', memory: '12Gi', 'example.com/fpga': '2' });
    expect(overlaidInstanceTypes(evaluation, 'other-pool', [base])).toEqual([base]);
  });
});

describe('nodeOverlayConditions', () => {
  const now = new Date('2026-12-01T00:00:00Z');

  it('writes ValidationSucceeded and Ready True for a valid overlay, and leaves them when nothing changed', () => {
    const conditions = nodeOverlayConditions(undefined, { valid: true }, 3, now);
    expect(conditions.map((c) => [c.type, c.status, c.observedGeneration])).toEqual([
      ['ValidationSucceeded', 'True', 3],
      ['Ready', 'True', 3],
    ]);
    expect(nodeOverlayConditions(conditions, { valid: true }, 3, new Date())).toBe(conditions);
  });

  it('carries the conflict into Ready', () => {
    const conditions = nodeOverlayConditions(
      undefined,
      { valid: false, reason: 'Conflict', message: 'conflict with another overlay' },
      1,
      now,
    );
    expect(conditions.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'Conflict',
      message: 'ValidationSucceeded: conflict with another overlay',
    });
  });
});
