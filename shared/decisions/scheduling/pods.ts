// Pending pods compiled for the simulation. Identical pods (same namespace, labels and spec) share one
// PodGroup, so requests, requirements and every relaxation step are computed once per group, not per pod.
//
// Preferences follow Karpenter (KS pkg/controllers/provisioning/scheduling/preferences.go): a pod is first
// tried with every preference treated as required (the heaviest preferred node-affinity term, preferred
// pod (anti-)affinity, ScheduleAnyway spreads), and relaxed one step per failed attempt, in this order:
//   1. drop the first required node-affinity term while more than one remains (the OR is tried in turn);
//   2. drop the heaviest preferred pod-affinity term;
//   3. drop the heaviest preferred pod-anti-affinity term;
//   4. drop the heaviest preferred node-affinity term (the next heaviest becomes the required one);
//   5. drop one ScheduleAnyway topology spread constraint;
//   6. tolerate PreferNoSchedule taints, when some NodePool has one.
import { WellKnown } from '../../models/karpenter.js';
import type { NodeSelectorRequirement } from '../../models/kube.js';
import { requirementMapOf, type RequirementMap } from './requirement-map.js';
import { podRequests, type Resources } from './resources.js';
import type {
  NodeSelectorTerm,
  PodAffinityTerm,
  PodReference,
  SchedulingPod,
  SchedulingPodSpec,
  Toleration,
  TopologySpreadConstraint,
  WeightedPodAffinityTerm,
} from './types.js';

/** One relaxation level of a pod group: what the pod asks for at that level. */
export interface PodVariant {
  readonly id: number;
  readonly group: PodGroup;
  /** nodeSelector ∩ the first required term ∩ the heaviest remaining preferred term. */
  readonly requirements: RequirementMap;
  /**
   * The same without the volumes' requirements, when the pod has any: what the pod itself asks, so a
   * NodePool that only its volumes rule out is told apart (VolumeZone).
   */
  readonly podRequirements?: RequirementMap;
  readonly volumeRequirements?: RequirementMap;
  /** nodeSelector ∩ the first required term only: which domains count for topology spread. */
  readonly strictRequirements: RequirementMap;
  readonly tolerations: readonly Toleration[];
  /** Spread constraints in force (DoNotSchedule, plus ScheduleAnyway ones not yet relaxed). */
  readonly spread: readonly TopologySpreadConstraint[];
  /** Required plus not-yet-relaxed preferred pod affinity terms. */
  readonly affinity: readonly PodAffinityTerm[];
  readonly antiAffinity: readonly PodAffinityTerm[];
  /** Only the required anti-affinity terms: the ones other pods must respect (inverse anti-affinity). */
  readonly requiredAntiAffinity: readonly PodAffinityTerm[];
  /** nodeSelector ∩ each remaining required term (an OR): the nodes a spread constraint counts. */
  readonly filterTerms: readonly RequirementMap[];
  /** Identifies filterTerms, so spreads of pods with equal node affinity share a topology group. */
  readonly filterKey: string;
}

export type VariantResult = { variant: PodVariant } | { error: string };

export interface PodGroup {
  readonly id: number;
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  /** Effective requests (see podRequests), or why they cannot be read. */
  readonly requests: Resources | undefined;
  readonly error: string | undefined;
  readonly hostPorts: readonly HostPort[];
  /** Relaxation levels computed so far; level 0 first. */
  readonly levels: VariantResult[];
  readonly source: SchedulingPod;
}

export interface HostPort {
  ip: string;
  port: number;
  protocol: string;
}

export interface QueuedPod {
  readonly ref: PodReference;
  readonly group: PodGroup;
  readonly creationTimestamp: string;
}

interface Relaxable {
  requiredTerms: NodeSelectorTerm[];
  preferredNodeTerms: NodeSelectorTerm[];
  preferredAffinity: PodAffinityTerm[];
  preferredAntiAffinity: PodAffinityTerm[];
  scheduleAnyway: TopologySpreadConstraint[];
  tolerations: Toleration[];
  tolerateAllPreferNoSchedule: boolean;
}

function byWeight(terms: readonly WeightedPodAffinityTerm[] | undefined): PodAffinityTerm[] {
  return [...(terms ?? [])].sort((a, b) => b.weight - a.weight).map((t) => t.podAffinityTerm);
}

export function hostPortsOf(spec: SchedulingPodSpec): HostPort[] {
  const ports: HostPort[] = [];
  for (const container of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) {
    for (const port of container.ports ?? []) {
      if (!port.hostPort) continue;
      ports.push({ ip: port.hostIP || '0.0.0.0', port: port.hostPort, protocol: port.protocol || 'TCP' });
    }
  }
  return ports;
}

export interface PodCompileOptions {
  ignorePreferences: boolean;
}

export class PodCompiler {
  private readonly groups = new Map<string, PodGroup>();
  private readonly relaxables = new Map<PodGroup, Relaxable>();
  private nextVariantId = 0;

  constructor(
    private readonly options: PodCompileOptions,
    /** Whether some NodePool has a PreferNoSchedule taint (enables relaxation step 6). */
    private readonly preferNoScheduleExists: boolean,
  ) {}

  get groupCount(): number {
    return this.groups.size;
  }

  queue(pod: SchedulingPod): QueuedPod {
    return {
      ref: { namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid },
      group: this.groupOf(pod),
      creationTimestamp: pod.metadata.creationTimestamp ?? '',
    };
  }

  groupOf(pod: SchedulingPod): PodGroup {
    const key = JSON.stringify([
      pod.metadata.namespace,
      pod.metadata.labels ?? {},
      pod.spec,
      pod.volumeRequirements ?? [],
    ]);
    const existing = this.groups.get(key);
    if (existing) return existing;
    let group: PodGroup;
    try {
      group = this.compileGroup(pod);
    } catch (error) {
      // A spec shaped unlike a pod (a missing list, a wrong type) fails this pod alone.
      group = {
        id: this.groups.size,
        namespace: pod.metadata.namespace,
        labels: {},
        requests: undefined,
        error: `unreadable pod spec: ${(error as Error).message}`,
        hostPorts: [],
        levels: [],
        source: pod,
      };
    }
    this.groups.set(key, group);
    return group;
  }

  private compileGroup(pod: SchedulingPod): PodGroup {
    const requests = podRequests(pod.spec);
    const spec = pod.spec;
    const affinity = spec.affinity;
    const group: PodGroup = {
      id: this.groups.size,
      namespace: pod.metadata.namespace,
      labels: pod.metadata.labels ?? {},
      requests: 'resources' in requests ? requests.resources : undefined,
      error: 'error' in requests ? requests.error : undefined,
      hostPorts: hostPortsOf(pod.spec),
      levels: [],
      source: pod,
    };
    const ignore = this.options.ignorePreferences;
    this.relaxables.set(group, {
      requiredTerms: [
        ...(affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []),
      ],
      preferredNodeTerms: ignore
        ? []
        : [...(affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? [])]
            .sort((a, b) => b.weight - a.weight)
            .map((t) => t.preference),
      preferredAffinity: ignore
        ? []
        : byWeight(affinity?.podAffinity?.preferredDuringSchedulingIgnoredDuringExecution),
      preferredAntiAffinity: ignore
        ? []
        : byWeight(affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution),
      scheduleAnyway: ignore
        ? []
        : (spec.topologySpreadConstraints ?? []).filter((c) => c.whenUnsatisfiable === 'ScheduleAnyway'),
      tolerations: [...(spec.tolerations ?? [])],
      tolerateAllPreferNoSchedule: false,
    });
    return group;
  }

  /** The group's variant at `level`, or undefined when nothing is left to relax. */
  variant(group: PodGroup, level: number): VariantResult | undefined {
    const levels = group.levels as VariantResult[];
    while (levels.length <= level) {
      const state = this.relaxables.get(group);
      if (!state) return undefined;
      if (levels.length > 0 && !this.relax(state)) {
        this.relaxables.delete(group);
        return undefined;
      }
      levels.push(this.compile(group, state));
    }
    return levels[level];
  }

  private relax(state: Relaxable): boolean {
    if (state.requiredTerms.length > 1) {
      state.requiredTerms.shift();
      return true;
    }
    if (state.preferredAffinity.length > 0) {
      state.preferredAffinity.shift();
      return true;
    }
    if (state.preferredAntiAffinity.length > 0) {
      state.preferredAntiAffinity.shift();
      return true;
    }
    if (state.preferredNodeTerms.length > 0) {
      state.preferredNodeTerms.shift();
      return true;
    }
    if (state.scheduleAnyway.length > 0) {
      state.scheduleAnyway.shift();
      return true;
    }
    if (this.preferNoScheduleExists && !state.tolerateAllPreferNoSchedule) {
      state.tolerateAllPreferNoSchedule = true;
      state.tolerations = [...state.tolerations, { operator: 'Exists', effect: 'PreferNoSchedule' }];
      return true;
    }
    return false;
  }

  private compile(group: PodGroup, state: Relaxable): VariantResult {
    const spec = group.source.spec;
    const selector: NodeSelectorRequirement[] = Object.entries(spec.nodeSelector ?? {}).map(
      ([key, value]) => ({
        key,
        operator: 'In',
        values: [value],
      }),
    );
    const required = state.requiredTerms[0];
    if (required?.matchFields?.length) {
      return { error: 'node affinity uses matchFields, which Karpenter does not support' };
    }
    // A volume's node affinity is required as the pod's own is (Karpenter's VolumeTopology adds it to
    // every required term).
    const volumes = group.source.volumeRequirements ?? [];
    const volumeMap = requirementMapOf(volumes);
    if ('error' in volumeMap) return { error: `volume node affinity: ${volumeMap.error}` };
    const strict = requirementMapOf([...selector, ...volumes, ...(required?.matchExpressions ?? [])]);
    if ('error' in strict) return { error: `node selector: ${strict.error}` };
    const preferred = state.preferredNodeTerms[0];
    const full = requirementMapOf(preferred?.matchExpressions ?? [], new Map(strict.requirements));
    if ('error' in full) return { error: `preferred node affinity: ${full.error}` };
    let podRequirements: RequirementMap | undefined;
    if (volumes.length > 0) {
      const own = requirementMapOf([
        ...selector,
        ...(required?.matchExpressions ?? []),
        ...(preferred?.matchExpressions ?? []),
      ]);
      if ('error' in own) return { error: `node selector: ${own.error}` };
      podRequirements = own.requirements;
    }
    const optOut = [...selector, ...state.requiredTerms.flatMap((t) => t.matchExpressions ?? [])].some(
      (r) => r.key === WellKnown.nodePoolLabel && r.operator === 'DoesNotExist',
    );
    // Karpenter ignores pods that require karpenter.sh/nodepool DoesNotExist: they opt out of it.
    if (optOut)
      return { error: 'the pod requires karpenter.sh/nodepool DoesNotExist, so no NodePool may serve it' };
    // Topology spread counts only nodes matching the pod's nodeSelector and any one required term.
    const filterTerms: RequirementMap[] = [];
    for (const term of state.requiredTerms.length > 0 ? state.requiredTerms : [{}]) {
      const parsed = requirementMapOf([
        ...selector,
        ...volumes,
        ...((term as NodeSelectorTerm).matchExpressions ?? []),
      ]);
      if ('error' in parsed) return { error: `node affinity: ${parsed.error}` };
      filterTerms.push(parsed.requirements);
    }
    const affinity = group.source.spec.affinity;
    const requiredAnti = affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
    return {
      variant: {
        id: this.nextVariantId++,
        group,
        requirements: full.requirements,
        ...(podRequirements && { podRequirements, volumeRequirements: volumeMap.requirements }),
        strictRequirements: strict.requirements,
        tolerations: state.tolerations,
        spread: [
          ...(spec.topologySpreadConstraints ?? []).filter((c) => c.whenUnsatisfiable !== 'ScheduleAnyway'),
          ...state.scheduleAnyway,
        ],
        affinity: [
          ...(affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []),
          ...state.preferredAffinity,
        ],
        antiAffinity: [...requiredAnti, ...state.preferredAntiAffinity],
        requiredAntiAffinity: requiredAnti,
        filterTerms,
        filterKey: JSON.stringify([spec.nodeSelector ?? {}, state.requiredTerms, volumes]),
      },
    };
  }
}

/** Karpenter's queue order (queue.go): larger CPU first, then larger memory, then older, then by UID. */
export function compareQueued(a: QueuedPod, b: QueuedPod): number {
  const cpu = (b.group.requests?.get('cpu') ?? 0) - (a.group.requests?.get('cpu') ?? 0);
  if (cpu !== 0) return cpu;
  const memory = (b.group.requests?.get('memory') ?? 0) - (a.group.requests?.get('memory') ?? 0);
  if (memory !== 0) return memory;
  if (a.creationTimestamp !== b.creationTimestamp) return a.creationTimestamp < b.creationTimestamp ? -1 : 1;
  return a.ref.uid < b.ref.uid ? -1 : a.ref.uid > b.ref.uid ? 1 : 0;
}
