// Requirements as one value set per key, and the two questions the simulation asks of them: do a
// pod's requirements fit a NodePool's (Karpenter's Compatible), and does a node's label map satisfy them.
import type { NodeSelectorRequirement } from '../../models/kube.js';
import { normalizedKey } from '../requirements.js';
import { WellKnown } from '../../models/karpenter.js';
import {
  allows,
  describeValueSet,
  exactly,
  intersect,
  isNegative,
  isUnsatisfiable,
  sameValueSet,
  valueSetOf,
  type ValueSet,
} from './value-set.js';

export type RequirementMap = ReadonlyMap<string, ValueSet>;

/**
 * Labels whose values the provider supplies (KS pkg/apis/v1/labels.go WellKnownLabels plus the Azure
 * provider's karpenter.azure.com/* and kubernetes.azure.com/* keys): a pod may require them even when
 * the NodePool does not mention them (AllowUndefinedWellKnownLabels); instance types then decide.
 */
export function isWellKnownLabel(key: string): boolean {
  return (
    key === WellKnown.nodePoolLabel ||
    key === WellKnown.zoneLabel ||
    key === WellKnown.regionLabel ||
    key === WellKnown.instanceTypeLabel ||
    key === WellKnown.archLabel ||
    key === WellKnown.osLabel ||
    key === WellKnown.capacityTypeLabel ||
    key === 'node.kubernetes.io/windows-build' ||
    key.startsWith('karpenter.azure.com/') ||
    key.startsWith('kubernetes.azure.com/')
  );
}

export type ParsedRequirements = { requirements: Map<string, ValueSet> } | { error: string };

/** Several requirements, intersected per key. An unreadable one is an error naming it. */
export function requirementMapOf(
  requirements: readonly NodeSelectorRequirement[],
  into: Map<string, ValueSet> = new Map(),
): ParsedRequirements {
  for (const requirement of requirements) {
    const set = valueSetOf(requirement);
    if (set === undefined) {
      return {
        error: `requirement ${requirement.key} ${requirement.operator} ${JSON.stringify(requirement.values ?? [])} is not valid`,
      };
    }
    const key = normalizedKey(requirement.key);
    const existing = into.get(key);
    into.set(key, existing ? intersect(existing, set) : set);
  }
  return { requirements: into };
}

export function labelRequirements(
  labels: Readonly<Record<string, string>> | undefined,
): Map<string, ValueSet> {
  const map = new Map<string, ValueSet>();
  for (const [key, value] of Object.entries(labels ?? {})) map.set(key, exactly(value));
  return map;
}

export function mergeRequirements(a: RequirementMap, b: RequirementMap): Map<string, ValueSet> {
  const merged = new Map(a);
  for (const [key, set] of b) {
    const existing = merged.get(key);
    merged.set(key, existing ? intersect(existing, set) : set);
  }
  return merged;
}

/** `existing` ∩ `incoming`, returning `existing` itself when `incoming` narrows nothing (no copy). */
export function narrowedBy(existing: RequirementMap, incoming: RequirementMap): RequirementMap {
  let merged: Map<string, ValueSet> | undefined;
  for (const [key, set] of incoming) {
    const current = existing.get(key);
    const narrowed = current ? intersect(current, set) : set;
    if (current && sameValueSet(current, narrowed)) continue;
    merged ??= new Map(existing);
    merged.set(key, narrowed);
  }
  return merged ?? existing;
}

export function sameRequirements(a: RequirementMap, b: RequirementMap): boolean {
  if (a === b) return true;
  if (a.size !== b.size) return false;
  for (const [key, set] of a) {
    const other = b.get(key);
    if (!other || !sameValueSet(set, other)) return false;
  }
  return true;
}

/**
 * Why `incoming` (a pod's) cannot be met by `existing` (a NodePool template's or a NodeClaim's), or
 * undefined when compatible. Karpenter's Compatible (KS pkg/scheduling/requirements.go): a key the
 * existing side does not define is allowed only when it is well known or the pod asks for its absence;
 * a key both define must intersect, except that NotIn/DoesNotExist on both sides always does.
 */
export function incompatibility(existing: RequirementMap, incoming: RequirementMap): string | undefined {
  for (const [key, wanted] of incoming) {
    const offered = existing.get(key);
    if (offered === undefined) {
      if (isWellKnownLabel(key) || wanted.allowsAbsent) continue;
      return `label ${key} is not defined (pod requires ${describeValueSet(key, wanted)})`;
    }
    if (isUnsatisfiable(intersect(offered, wanted)) && !(isNegative(offered) && isNegative(wanted))) {
      return `${describeValueSet(key, offered)} does not allow ${describeValueSet(key, wanted)}`;
    }
  }
  return undefined;
}

/** Whether a node with these labels satisfies every requirement, or the first that fails. */
export function labelMismatch(
  labels: Readonly<Record<string, string>>,
  requirements: RequirementMap,
): string | undefined {
  for (const [key, set] of requirements) {
    const value = Object.hasOwn(labels, key) ? labels[key] : undefined;
    if (!allows(set, value)) {
      const actual = value === undefined ? `label ${key} is absent` : `${key}=${value}`;
      return `${actual} does not satisfy ${describeValueSet(key, set)}`;
    }
  }
  return undefined;
}
