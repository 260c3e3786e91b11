// minValues: a requirement may ask that the NodeClaim keep at least N distinct values of its key among
// its instance-type options (e.g. 5 instance types, 2 families), so launch has room to fall back. As in
// Karpenter (SatisfiesMinValues), a NodeClaim whose options drop below it cannot take the pod (Strict);
// under BestEffort the NodeClaim is opened anyway with the minValues lowered to what its options have
// (Karpenter's relaxMinValues), and launch then holds it to the lowered number.
import { WellKnown } from '../../models/karpenter.js';
import { instanceTypeValues, type CompiledInstanceType } from './instance-types.js';
import type { RequirementMap } from './requirement-map.js';
import { describeValueSet, type ValueSet } from './value-set.js';

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

/**
 * The requirements with every minValues the options fall below lowered to the distinct values they have
 * (a requirement left with none loses its minValues: the CRD's least is 1), or the same map when none is.
 */
export function relaxMinValues(
  instanceTypes: readonly CompiledInstanceType[],
  requirements: RequirementMap,
): RequirementMap {
  let relaxed: Map<string, ValueSet> | undefined;
  for (const [key, set] of requirements) {
    if (set.minValues === undefined) continue;
    const distinct = distinctValues(instanceTypes, key, requirements);
    if (distinct >= set.minValues) continue;
    relaxed ??= new Map(requirements);
    const { minValues: _lowered, ...rest } = set;
    relaxed.set(key, distinct > 0 ? { ...rest, minValues: distinct } : rest);
  }
  return relaxed ?? requirements;
}

/** Whether some minValues of `original` is lower, or gone, in `requirements`. */
export function minValuesLowered(original: RequirementMap, requirements: RequirementMap): boolean {
  for (const [key, set] of original) {
    if (set.minValues === undefined) continue;
    const now = requirements.get(key);
    if (now !== undefined && (now.minValues ?? 0) < set.minValues) return true;
  }
  return false;
}
