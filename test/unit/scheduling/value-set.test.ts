import { describe, expect, it } from 'vitest';
import type { NodeSelectorRequirement } from '../../../shared/models/kube.js';
import {
  allows,
  intersect,
  isUnsatisfiable,
  toRequirements,
  valueSetOf,
} from '../../../shared/decisions/scheduling/value-set.js';
import { incompatibility, requirementMapOf } from '../../../shared/decisions/scheduling/requirement-map.js';

const set = (operator: NodeSelectorRequirement['operator'], values?: string[]) => {
  const parsed = valueSetOf({ key: 'k', operator, ...(values ? { values } : {}) });
  if (!parsed) throw new Error('invalid');
  return parsed;
};

describe('value sets', () => {
  it.each<[string, ReturnType<typeof set>, string | undefined, boolean]>([
    ['In allows a listed value', set('In', ['a']), 'a', true],
    ['In refuses absence', set('In', ['a']), undefined, false],
    ['NotIn allows absence', set('NotIn', ['a']), undefined, true],
    ['Exists refuses absence', set('Exists'), undefined, false],
    ['DoesNotExist allows only absence', set('DoesNotExist'), 'x', false],
    ['Gt compares integers', set('Gt', ['4']), '8', true],
    ['Lte includes the bound', set('Lte', ['4']), '4', true],
  ])('%s', (_name, valueSet, value, expected) => {
    expect(allows(valueSet, value)).toBe(expected);
  });

  it.each<[string, ReturnType<typeof set>, ReturnType<typeof set>, boolean]>([
    ['In ∩ In with a common value', set('In', ['a', 'b']), set('In', ['b', 'c']), false],
    ['In ∩ In disjoint', set('In', ['a']), set('In', ['b']), true],
    ['In ∩ NotIn of the same value', set('In', ['a']), set('NotIn', ['a']), true],
    ['Gt ∩ Lt leaving no integer', set('Gt', ['3']), set('Lt', ['4']), true],
    ['Gt ∩ Lt leaving one integer', set('Gt', ['3']), set('Lt', ['5']), false],
    ['NotIn ∩ DoesNotExist (absence satisfies both)', set('NotIn', ['a']), set('DoesNotExist'), false],
    ['In ∩ DoesNotExist', set('In', ['a']), set('DoesNotExist'), true],
  ])('%s: unsatisfiable = %s', (_name, a, b, expected) => {
    expect(isUnsatisfiable(intersect(a, b))).toBe(expected);
  });

  it('writes an intersection back as requirements', () => {
    expect(toRequirements('zone', intersect(set('In', ['a', 'b', 'c']), set('NotIn', ['b'])))).toEqual([
      { key: 'zone', operator: 'In', values: ['a', 'c'] },
    ]);
    expect(toRequirements('n', intersect(set('Exists'), set('NotIn', ['x'])))).toEqual([
      { key: 'n', operator: 'Exists' },
      { key: 'n', operator: 'NotIn', values: ['x'] },
    ]);
  });
});

describe("incompatibility (Karpenter's Compatible)", () => {
  const map = (requirements: NodeSelectorRequirement[]) => {
    const parsed = requirementMapOf(requirements);
    if ('error' in parsed) throw new Error(parsed.error);
    return parsed.requirements;
  };
  it.each<[string, NodeSelectorRequirement[], NodeSelectorRequirement[], boolean]>([
    [
      'a custom label the NodePool does not define',
      [],
      [{ key: 'team', operator: 'In', values: ['a'] }],
      false,
    ],
    ['the absence of a custom label', [], [{ key: 'team', operator: 'DoesNotExist' }], true],
    [
      'a well-known label the NodePool leaves open',
      [],
      [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['z1'] }],
      true,
    ],
    [
      'a provider label the NodePool leaves open',
      [],
      [{ key: 'karpenter.azure.com/sku-family', operator: 'In', values: ['D'] }],
      true,
    ],
    [
      'disjoint values',
      [{ key: 'team', operator: 'In', values: ['a'] }],
      [{ key: 'team', operator: 'In', values: ['b'] }],
      false,
    ],
    [
      'NotIn on both sides',
      [{ key: 'team', operator: 'NotIn', values: ['a'] }],
      [{ key: 'team', operator: 'DoesNotExist' }],
      true,
    ],
  ])('%s: compatible = %s', (_name, existing, incoming, compatible) => {
    expect(incompatibility(map(existing), map(incoming)) === undefined).toBe(compatible);
  });
});
