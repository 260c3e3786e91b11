// DaemonSet overhead: the requests and host ports of the DaemonSet pods that would run on a node.
//
// Follows Karpenter (KS scheduler.go buildDaemonOverheadGroups, isDaemonPodCompatible): per NodePool
// and instance type, a DaemonSet counts when its pod tolerates the NodePool's taints (PreferNoSchedule
// is tolerated, a daemon ignores preferences) and one of its required node-affinity terms, with its
// nodeSelector, is compatible with the NodePool's requirements and the instance type. Instance types
// with the same set of DaemonSets share one overhead. On an existing node, only the DaemonSets that
// would schedule there and have no pod there yet add to what is used.
import type { Taint } from '../../models/kube.js';
import { cheapestOffering, instanceTypeMismatch, type CompiledInstanceType } from './instance-types.js';
import { hostPortsOf, type HostPort } from './pods.js';
import { incompatibility, labelMismatch, requirementMapOf, type RequirementMap } from './requirement-map.js';
import { podRequests, type Resources } from './resources.js';
import { untoleratedTaint } from './taints.js';
import type { DaemonSet, Toleration } from './types.js';

export interface CompiledDaemonSet {
  readonly name: string;
  readonly requests: Resources;
  readonly tolerations: readonly Toleration[];
  /** nodeSelector ∩ each required node-affinity term: the DaemonSet runs where any one holds. */
  readonly terms: readonly RequirementMap[];
  readonly hostPorts: readonly HostPort[];
}

/** The DaemonSets that would run on a node, as one overhead. */
export interface DaemonOverhead {
  readonly key: string;
  readonly requests: Resources;
  readonly hostPorts: readonly HostPort[];
}

export const NO_DAEMONS: DaemonOverhead = { key: '', requests: new Map(), hostPorts: [] };

/** DaemonSets whose template cannot be read are left out: they must not block provisioning. */
export function compileDaemonSets(daemonSets: readonly DaemonSet[]): CompiledDaemonSet[] {
  const compiled: CompiledDaemonSet[] = [];
  for (const daemonSet of daemonSets) {
    const spec = daemonSet.template.spec;
    const requests = podRequests(spec);
    if ('error' in requests) continue;
    const selector = Object.entries(spec.nodeSelector ?? {}).map(([key, value]) => ({
      key,
      operator: 'In' as const,
      values: [value],
    }));
    const terms =
      spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
    const parsed = (terms?.length ? terms : [{}]).map((term) =>
      requirementMapOf([...selector, ...(term.matchExpressions ?? [])]),
    );
    const valid = parsed.flatMap((p) => ('requirements' in p ? [p.requirements] : []));
    if (valid.length === 0) continue;
    compiled.push({
      name: daemonSet.name,
      requests: requests.resources,
      tolerations: [...(spec.tolerations ?? []), { operator: 'Exists', effect: 'PreferNoSchedule' }],
      terms: valid,
      hostPorts: hostPortsOf(spec),
    });
  }
  return compiled;
}

/** Overhead per instance type of one NodePool; instance types with the same DaemonSets share it. */
export function daemonOverheadByInstanceType(
  daemonSets: readonly CompiledDaemonSet[],
  template: {
    requirements: RequirementMap;
    taints: readonly Taint[];
    instanceTypes: readonly CompiledInstanceType[];
  },
): Map<CompiledInstanceType, DaemonOverhead> {
  const result = new Map<CompiledInstanceType, DaemonOverhead>();
  if (daemonSets.length === 0) {
    for (const it of template.instanceTypes) result.set(it, NO_DAEMONS);
    return result;
  }
  const tolerated = daemonSets.filter(
    (ds) => untoleratedTaint(template.taints, ds.tolerations) === undefined,
  );
  const shared = new Map<string, DaemonOverhead>();
  for (const it of template.instanceTypes) {
    const compatible = tolerated.filter((ds) =>
      ds.terms.some(
        (term) =>
          incompatibility(template.requirements, term) === undefined &&
          instanceTypeMismatch(it, term) === undefined &&
          cheapestOffering(it, term) !== undefined,
      ),
    );
    const key = compatible.map((ds) => ds.name).join(',');
    let overhead = shared.get(key);
    if (!overhead) {
      const requests: Resources = new Map();
      for (const ds of compatible)
        for (const [name, amount] of ds.requests) requests.set(name, (requests.get(name) ?? 0) + amount);
      overhead = { key, requests, hostPorts: compatible.flatMap((ds) => ds.hostPorts) };
      shared.set(key, overhead);
    }
    result.set(it, overhead);
  }
  return result;
}

/** The DaemonSets that would run on an existing node but have no pod there yet. */
export function missingDaemons(
  daemonSets: readonly CompiledDaemonSet[],
  node: {
    labels: Readonly<Record<string, string>>;
    taints: readonly Taint[];
    daemonSetsPresent: ReadonlySet<string>;
  },
): CompiledDaemonSet[] {
  return daemonSets.filter(
    (ds) =>
      !node.daemonSetsPresent.has(ds.name) &&
      untoleratedTaint(node.taints, ds.tolerations) === undefined &&
      ds.terms.some((term) => labelMismatch(node.labels, term) === undefined),
  );
}
