import { describe, expect, it } from 'vitest';
import type { NodeSelectorRequirement } from '../../shared/models/kube.js';
import {
  describeRequirement,
  labelsSatisfy,
  requirementAllows,
  validateRequirements,
} from '../../shared/decisions/requirements.js';

const req = (
  operator: NodeSelectorRequirement['operator'],
  values?: string[],
  key = 'k',
): NodeSelectorRequirement => ({ key, operator, ...(values ? { values } : {}) });

describe('requirementAllows', () => {
  it.each<[string, NodeSelectorRequirement, string | undefined, boolean]>([
    ['In matches a listed value', req('In', ['a', 'b']), 'b', true],
    ['In rejects another value', req('In', ['a']), 'c', false],
    ['In rejects an absent label', req('In', ['a']), undefined, false],
    ['NotIn rejects a listed value', req('NotIn', ['a']), 'a', false],
    ['NotIn allows another value', req('NotIn', ['a']), 'b', true],
    ['NotIn allows an absent label', req('NotIn', ['a']), undefined, true],
    ['Exists needs the label', req('Exists'), undefined, false],
    ['Exists accepts an empty value', req('Exists'), '', true],
    ['DoesNotExist rejects a present label', req('DoesNotExist'), 'x', false],
    ['DoesNotExist accepts absence', req('DoesNotExist'), undefined, true],
    ['Gt is strict', req('Gt', ['4']), '4', false],
    ['Gt above', req('Gt', ['4']), '5', true],
    ['Gt compares numerically, not as text', req('Gt', ['9']), '10', true],
    ['Lt is strict', req('Lt', ['4']), '4', false],
    ['Lt below', req('Lt', ['4']), '3', true],
    ['Gte includes the bound', req('Gte', ['4']), '4', true],
    ['Gte below', req('Gte', ['4']), '3', false],
    ['Lte includes the bound', req('Lte', ['4']), '4', true],
    ['Lte above', req('Lte', ['4']), '5', false],
    ['Gt with a non-integer label value', req('Gt', ['1']), 'abc', false],
    ['Gt with an absent label', req('Gt', ['1']), undefined, false],
    ['Lt with a non-integer bound', req('Lt', ['x']), '1', false],
    ['Gt with two bounds', req('Gt', ['1', '2']), '5', false],
    ['Gt with a decimal label value', req('Gt', ['1']), '2.5', false],
  ])('%s', (_name, requirement, value, expected) => {
    expect(requirementAllows(requirement, value)).toBe(expected);
  });

  it('refuses an operator outside the enum', () => {
    const bogus = { key: 'k', operator: 'Near', values: ['a'] } as unknown as NodeSelectorRequirement;
    expect(requirementAllows(bogus, 'a')).toBe(false);
  });
});

describe('labelsSatisfy', () => {
  const labels = { 'karpenter.azure.com/sku-cpu': '8', 'kubernetes.io/arch': 'amd64' };

  it('intersects several requirements on the same key', () => {
    const range = [
      req('Gt', ['2'], 'karpenter.azure.com/sku-cpu'),
      req('Lt', ['9'], 'karpenter.azure.com/sku-cpu'),
    ];
    expect(labelsSatisfy(labels, range)).toEqual({ satisfied: true });
    expect(labelsSatisfy({ 'karpenter.azure.com/sku-cpu': '16' }, range)).toMatchObject({
      satisfied: false,
      key: 'karpenter.azure.com/sku-cpu',
    });
    const disjoint = [req('In', ['a'], 'x'), req('In', ['b'], 'x')];
    expect(labelsSatisfy({ x: 'a' }, disjoint).satisfied).toBe(false);
    expect(labelsSatisfy({ x: 'b' }, disjoint).satisfied).toBe(false);
  });

  it('names the failing key and says why', () => {
    const result = labelsSatisfy(labels, [
      req('In', ['amd64'], 'kubernetes.io/arch'),
      req('In', ['spot'], 'karpenter.sh/capacity-type'),
    ]);
    expect(result).toEqual({
      satisfied: false,
      key: 'karpenter.sh/capacity-type',
      reason:
        'label karpenter.sh/capacity-type is absent does not satisfy karpenter.sh/capacity-type In [spot]',
    });
  });

  it('does not read inherited properties as labels', () => {
    expect(labelsSatisfy({}, [req('Exists', undefined, 'toString')]).satisfied).toBe(false);
  });

  it('is satisfied by no requirements', () => {
    expect(labelsSatisfy({}, [])).toEqual({ satisfied: true });
  });
});

describe('describeRequirement', () => {
  it.each<[NodeSelectorRequirement, string]>([
    [req('In', ['a', 'b']), 'k In [a, b]'],
    [req('Exists'), 'k Exists'],
    [req('Gte', ['3']), 'k Gte 3'],
  ])('%j → %s', (requirement, text) => {
    expect(describeRequirement(requirement)).toBe(text);
  });
});

describe('validateRequirements', () => {
  const path = 'spec.template.spec.requirements';

  it('accepts what the upstream CRDs accept', () => {
    expect(
      validateRequirements(
        [
          req('In', ['on-demand', 'spot'], 'karpenter.sh/capacity-type'),
          req('In', ['default'], 'karpenter.sh/nodepool'),
          req('Gt', ['2'], 'karpenter.azure.com/sku-cpu'),
          req('Lte', ['0'], 'karpenter.azure.com/sku-gpu-count'),
          req('NotIn', [], 'team'),
          req('Exists', ['ignored'], 'topology.kubernetes.io/zone'),
          { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['a', 'b'], minValues: 2 },
        ],
        path,
      ),
    ).toEqual([]);
    expect(validateRequirements(undefined, path)).toEqual([]);
  });

  it.each<[string, NodeSelectorRequirement, string]>([
    [
      'Gt without a value',
      req('Gt', [], 'karpenter.azure.com/sku-cpu'),
      `${path}[0].values: operator Gt needs exactly one non-negative integer, got []`,
    ],
    [
      'Lt with two values',
      req('Lt', ['1', '2']),
      `${path}[0].values: operator Lt needs exactly one non-negative integer, got ["1","2"]`,
    ],
    [
      'Gte with a word',
      req('Gte', ['many']),
      `${path}[0].values: operator Gte needs exactly one non-negative integer, got ["many"]`,
    ],
    [
      'Lte negative',
      req('Lte', ['-1']),
      `${path}[0].values: operator Lte needs exactly one non-negative integer, got ["-1"]`,
    ],
    ['In without values', req('In', []), `${path}[0].values: operator In needs at least one value`],
    ['In with values missing', req('In'), `${path}[0].values: operator In needs at least one value`],
    [
      'restricted karpenter.sh key',
      req('Exists', undefined, 'karpenter.sh/registered'),
      `${path}[0].key: label domain "karpenter.sh" is restricted`,
    ],
    [
      'restricted karpenter.sh subdomain',
      req('Exists', undefined, 'x.karpenter.sh/foo'),
      `${path}[0].key: label domain "karpenter.sh" is restricted`,
    ],
    [
      'hostname',
      req('In', ['a'], 'kubernetes.io/hostname'),
      `${path}[0].key: label "kubernetes.io/hostname" is restricted`,
    ],
    [
      'invalid value',
      req('In', ['has space']),
      `${path}[0].values[0]: "has space" is not a valid label value (at most 63 characters of letters, digits, '-', '_' or '.', starting and ending with a letter or digit)`,
    ],
    [
      'invalid key prefix',
      req('Exists', undefined, 'Upper.Case/x'),
      `${path}[0].key: prefix "Upper.Case" must be a lower-case DNS subdomain of at most 253 characters`,
    ],
    [
      'unknown operator',
      { key: 'k', operator: 'Near' } as unknown as NodeSelectorRequirement,
      `${path}[0].operator: must be one of In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte, got "Near"`,
    ],
    [
      'missing key',
      { operator: 'Exists' } as unknown as NodeSelectorRequirement,
      `${path}[0].key: is required`,
    ],
    [
      'minValues above values',
      { key: 'k', operator: 'In', values: ['a'], minValues: 2 },
      `${path}[0].minValues: 2 needs at least that many values, got 1`,
    ],
    [
      'minValues out of range',
      { key: 'k', operator: 'Exists', minValues: 0 },
      `${path}[0].minValues: must be an integer from 1 to 50, got 0`,
    ],
  ])('%s', (_name, requirement, error) => {
    expect(validateRequirements([requirement], path)).toContain(error);
  });

  it('names the index of the offending requirement', () => {
    const errors = validateRequirements([req('In', ['a']), req('In', ['b']), req('Gt', ['x'])], path);
    expect(errors).toEqual([
      `${path}[2].values: operator Gt needs exactly one non-negative integer, got ["x"]`,
    ]);
  });

  it('limits the list to 100 entries', () => {
    const many = Array.from({ length: 101 }, () => req('Exists'));
    expect(validateRequirements(many, path)).toEqual([
      `${path}: at most 100 requirements are allowed, got 101`,
    ]);
  });
});
