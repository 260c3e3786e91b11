// NodePools compiled into NodeClaim templates (Karpenter's NodeClaimTemplate): requirements from the
// NodePool's requirements, labels and its own name; taints; instance types; what is left of its limits.
import { WellKnown } from '../../models/karpenter.js';
import type { Taint } from '../../models/kube.js';
import { compileInstanceType, type CompiledInstanceType } from './instance-types.js';
import { labelRequirements, requirementMapOf, type RequirementMap } from './requirement-map.js';
import { parseResources, type Resources } from './resources.js';
import type { SchedulingNodePool } from './types.js';
import { exactly } from './value-set.js';

export interface Template {
  readonly name: string;
  readonly weight: number;
  readonly requirements: RequirementMap;
  readonly labels: Readonly<Record<string, string>>;
  /** Taints that repel pods: spec.taints only (startupTaints are removed before pods run). */
  readonly taints: readonly Taint[];
  readonly instanceTypes: readonly CompiledInstanceType[];
  /** Limits minus usage, per resource; undefined when the NodePool has no limits. */
  remaining: Resources | undefined;
  /** Why this NodePool can take no pod at all (bad spec), reported for every pod. */
  readonly error: string | undefined;
}

/** Karpenter's OrderByWeight: higher weight first, ties by name descending. */
export function compareTemplates(a: Template, b: Template): number {
  if (a.weight !== b.weight) return b.weight - a.weight;
  return a.name < b.name ? 1 : a.name > b.name ? -1 : 0;
}

export function compileTemplate(
  nodePool: SchedulingNodePool,
  instanceTypeCache: Map<object, CompiledInstanceType | string>,
): Template {
  const base = {
    name: nodePool.name,
    weight: nodePool.weight ?? 0,
    labels: { ...nodePool.labels, [WellKnown.nodePoolLabel]: nodePool.name },
    taints: nodePool.taints ?? [],
  };
  const fail = (error: string): Template => ({
    ...base,
    requirements: new Map(),
    instanceTypes: [],
    remaining: undefined,
    error,
  });
  const requirements = requirementMapOf(nodePool.requirements, labelRequirements(nodePool.labels));
  if ('error' in requirements) return fail(`spec.template.spec.requirements: ${requirements.error}`);
  requirements.requirements.set(WellKnown.nodePoolLabel, exactly(nodePool.name));

  let remaining: Resources | undefined;
  if (nodePool.limits !== undefined) {
    const limits = parseResources(nodePool.limits, 'spec.limits');
    if ('error' in limits) return fail(limits.error);
    const usage = parseResources(nodePool.usage, 'usage');
    if ('error' in usage) return fail(usage.error);
    remaining = new Map();
    // Only limited resources are tracked; a limit of 0 is kept so nothing fits it.
    for (const name of Object.keys(nodePool.limits)) {
      remaining.set(name, (limits.resources.get(name) ?? 0) - (usage.resources.get(name) ?? 0));
    }
  }

  const instanceTypes: CompiledInstanceType[] = [];
  for (const instanceType of nodePool.instanceTypes) {
    let compiled = instanceTypeCache.get(instanceType);
    if (compiled === undefined) {
      const result = compileInstanceType(instanceType);
      compiled = 'error' in result ? result.error : result.instanceType;
      instanceTypeCache.set(instanceType, compiled);
    }
    // An instance type with an unreadable allocatable is left out, not allowed to fail the NodePool.
    if (typeof compiled !== 'string') instanceTypes.push(compiled);
  }
  return { ...base, requirements: requirements.requirements, instanceTypes, remaining, error: undefined };
}
