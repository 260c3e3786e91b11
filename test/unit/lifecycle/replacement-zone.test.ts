// A drift replacement keeps its candidate's zone when the NodePool's template allows that zone, and
// otherwise goes where the template lets it: the zone is added to the template's requirements, never put
// in place of them.
import { describe, expect, test } from 'vitest';
import { withZoneKept } from '../../../shared/lifecycle/disruption/replacements.js';
import type { NodeSelectorRequirement } from '../../../shared/models/kube.js';

const zone = 'topology.kubernetes.io/zone';
const arch: NodeSelectorRequirement = { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] };
const keep: NodeSelectorRequirement = { key: zone, operator: 'In', values: ['westus2-1'] };

describe('withZoneKept', () => {
  test('adds the zone to requirements that say nothing of zones', () => {
    expect(withZoneKept([arch], 'westus2-1')).toEqual([arch, keep]);
  });

  test('adds it where the template allows it, among others', () => {
    const some: NodeSelectorRequirement = { key: zone, operator: 'In', values: ['westus2-1', 'westus2-2'] };
    expect(withZoneKept([arch, some], 'westus2-1')).toEqual([arch, some, keep]);
    const notThird: NodeSelectorRequirement = { key: zone, operator: 'NotIn', values: ['westus2-3'] };
    expect(withZoneKept([notThird], 'westus2-1')).toEqual([notThird, keep]);
  });

  test('leaves the requirements as they are when the template moved away from the zone, or none is kept', () => {
    const elsewhere: NodeSelectorRequirement = { key: zone, operator: 'In', values: ['westus2-2'] };
    const requirements = [arch, elsewhere];
    expect(withZoneKept(requirements, 'westus2-1')).toBe(requirements);
    const excluded: NodeSelectorRequirement[] = [{ key: zone, operator: 'NotIn', values: ['westus2-1'] }];
    expect(withZoneKept(excluded, 'westus2-1')).toBe(excluded);
    expect(withZoneKept(requirements, undefined)).toBe(requirements);
  });
});
