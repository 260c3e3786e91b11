// minValues: a requirement may ask that the NodeClaim keep at least N distinct values of its key among
// its instance-type options (e.g. 5 instance types, 2 families), so launch has room to fall back. As in
// Karpenter (SatisfiesMinValues), a NodeClaim whose options drop below it cannot take the pod (Strict).
import { WellKnown } from '../../models/karpenter.js';
import { instanceTypeValues, type CompiledInstanceType } from './instance-types.js';
import type { RequirementMap } from './requirement-map.js';
import { describeValueSet } from './value-set.js';

export function distinctValues(
  instanceTypes: readonly CompiledInstanceType[],
  key: string,
  requirements: RequirementMap,
): number {
  if (key === WellKnown.instanceTypeLabel) return instanceTypes.length;
  const values = new Set<string>();
  for (const it of instanceTypes)
    for (const value of instanceTypeValues(it, key, requirements)) values.add(value);
  return values.size;
}

/** Why the options fall short of some requirement's minValues, or undefined. */
export function firstMinValuesShortfall(
  instanceTypes: readonly CompiledInstanceType[],
  requirements: RequirementMap,
): string | undefined {
  for (const [key, set] of requirements) {
    if (set.minValues === undefined) continue;
    const distinct = distinctValues(instanceTypes, key, requirements);
    if (distinct < set.minValues) {
      return `${describeValueSet(key, set)} needs minValues ${set.minValues} but only ${distinct} value(s) remain among the instance types that fit`;
    }
  }
  return undefined;
}
