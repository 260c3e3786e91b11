// CapacityBuffers (headroom) as upstream Karpenter's buffer controller and provisioner treat them
// (pkg/controllers/capacitybuffer/, pkg/state/virtualpods/, pkg/controllers/provisioning/buffers.go),
// as plain data in and out: what a buffer's spec and its resolved pod template amount to (a number of
// chunks, the status and ReadyForProvisioning), the virtual pods those chunks are in every solve, how a
// solve's placements of them set Provisioning, and which existing nodes hold them now (the room
// consolidation must keep and the sweep checks is still free).
//
// Deliberate differences, each because the sweep re-decides every few seconds and must not repeat a
// failure identically: a spec upstream's controller would retry forever (an unsupported kind or API group,
// a strategy other than active-capacity, both or neither reference, a limit that is not a quantity) is
// ReadyForProvisioning=False naming the field, and waits for the spec to change.
import { ACTIVE_CAPACITY_STRATEGY, type CapacityBuffer } from '../models/capacity-buffer.js';
import type { Condition } from '../models/kube.js';
import { setCondition } from './conditions.js';
import { parseResources, podRequests } from './scheduling/resources.js';
import { solve } from './scheduling/solve.js';
import type {
  ExistingNode,
  SchedulingPod,
  SchedulingPodSpec,
  SchedulingPolicies,
  SchedulingResult,
} from './scheduling/types.js';

/** Upstream's condition types and reasons (pkg/apis/autoscaling/v1beta1, capacitybuffer/constants.go). */
export const CapacityBufferConditionTypes = {
  readyForProvisioning: 'ReadyForProvisioning',
  provisioning: 'Provisioning',
} as const;

export const CapacityBufferReasons = {
  resolved: 'Resolved',
  scalableRefNotFound: 'ScalableRefNotFound',
  podTemplateNotFound: 'PodTemplateNotFound',
  resolutionFailed: 'ResolutionFailed',
  fitsExistingCapacity: 'FitsExistingCapacity',
  requiresNewCapacity: 'RequiresNewCapacity',
  notReadyForProvisioning: 'NotReadyForProvisioning',
  bufferEmpty: 'BufferEmpty',
} as const;

/** The workload kinds a scalableRef may name (group apps), as upstream Karpenter reads them. */
export const SCALABLE_KINDS = ['Deployment', 'StatefulSet', 'ReplicaSet'] as const;
export type ScalableKind = (typeof SCALABLE_KINDS)[number];

/** The shape of one chunk: a pod template's labels and spec. */
export interface BufferPodTemplate {
  labels?: Record<string, string>;
  spec: SchedulingPodSpec;
}

/** What the buffer's reference resolved to, as the lifecycle read it. */
export type BufferReferent =
  | { kind: 'PodTemplate'; name: string; generation?: number; template: BufferPodTemplate }
  | { kind: 'Scalable'; template: BufferPodTemplate; replicas: number }
  | { kind: 'NotFound'; message: string };

/** What the lifecycle must read for a buffer, or the spec problem that means nothing is read. */
export type BufferReference =
  | { kind: 'PodTemplate'; name: string }
  | { kind: 'Scalable'; workload: ScalableKind; name: string }
  | { kind: 'Invalid'; message: string };

/** The object a buffer's spec points at, or the field that makes it unusable. */
export function bufferReference(buffer: CapacityBuffer): BufferReference {
  const { spec } = buffer;
  const strategy = spec.provisioningStrategy ?? ACTIVE_CAPACITY_STRATEGY;
  if (strategy !== ACTIVE_CAPACITY_STRATEGY) {
    return {
      kind: 'Invalid',
      message: `spec.provisioningStrategy "${strategy}" is not supported; only "${ACTIVE_CAPACITY_STRATEGY}" is`,
    };
  }
  if (spec.podTemplateRef && spec.scalableRef) {
    return { kind: 'Invalid', message: 'spec.podTemplateRef and spec.scalableRef are both set; set one' };
  }
  if (spec.podTemplateRef) {
    if (!spec.podTemplateRef.name) return { kind: 'Invalid', message: 'spec.podTemplateRef.name is empty' };
    return { kind: 'PodTemplate', name: spec.podTemplateRef.name };
  }
  const ref = spec.scalableRef;
  if (!ref) return { kind: 'Invalid', message: 'Neither podTemplateRef nor scalableRef is set' };
  const group = ref.apiGroup || 'apps';
  if (group !== 'apps') {
    return {
      kind: 'Invalid',
      message: `spec.scalableRef.apiGroup "${ref.apiGroup}" is not supported; use apps`,
    };
  }
  if (!(SCALABLE_KINDS as readonly string[]).includes(ref.kind)) {
    return {
      kind: 'Invalid',
      message: `spec.scalableRef.kind "${ref.kind}" is not supported; use one of ${SCALABLE_KINDS.join(', ')}`,
    };
  }
  if (!ref.name) return { kind: 'Invalid', message: 'spec.scalableRef.name is empty' };
  return { kind: 'Scalable', workload: ref.kind as ScalableKind, name: ref.name };
}

/**
 * ceil(workload replicas × percentage / 100), at least 1 when both are positive (upstream's
 * calculatePercentageReplicas).
 */
export function percentageReplicas(scalableReplicas: number, percentage: number): number {
  const replicas = Math.ceil((scalableReplicas * percentage) / 100);
  return replicas < 1 && percentage > 0 && scalableReplicas > 0 ? 1 : replicas;
}

/**
 * How many chunks fit within `limits`: the least floor(limit / request) over the resources both name
 * (upstream's calculateLimitReplicas). Undefined when no limited resource is requested (the limits then
 * constrain nothing); an error naming the field when a limit or request is not a quantity.
 */
export function limitReplicas(
  limits: Readonly<Record<string, string>>,
  spec: SchedulingPodSpec,
): { replicas: number | undefined } | { error: string } {
  const requests = podRequests(spec);
  if ('error' in requests) return { error: `the pod template's ${requests.error}` };
  const parsedLimits = parseResources(limits, 'spec.limits');
  if ('error' in parsedLimits) return { error: parsedLimits.error };
  let least: number | undefined;
  for (const name of Object.keys(limits)) {
    // podRequests counts the pod itself; upstream's requests for a spec do not.
    if (name === 'pods') continue;
    const request = requests.resources.get(name);
    if (!request) continue;
    // A limit of 0 is absent from the parsed limits: it allows no chunk.
    const replicas = Math.floor((parsedLimits.resources.get(name) ?? 0) / request);
    least = least === undefined ? replicas : Math.min(least, replicas);
  }
  return { replicas: least };
}

/**
 * The number of chunks (upstream's computeReplicas): the larger of spec.replicas and the percentage of the
 * workload's replicas, capped by what the limits allow; the limits alone when neither is set; 0 when
 * nothing is set.
 */
export function desiredReplicas(
  buffer: CapacityBuffer,
  template: BufferPodTemplate,
  scalableReplicas: number | undefined,
): { replicas: number } | { error: string } {
  const { spec } = buffer;
  const sizes: number[] = [];
  if (spec.percentage !== undefined && scalableReplicas !== undefined && scalableReplicas > 0) {
    sizes.push(percentageReplicas(scalableReplicas, spec.percentage));
  }
  if (spec.replicas !== undefined) sizes.push(spec.replicas);
  const desired = sizes.length > 0 ? Math.max(...sizes) : 0;
  if (!spec.limits) return { replicas: desired };
  const limited = limitReplicas(spec.limits, template.spec);
  if ('error' in limited) return limited;
  if (limited.replicas === undefined) return { replicas: desired };
  return { replicas: sizes.length > 0 ? Math.min(desired, limited.replicas) : limited.replicas };
}

/** A buffer's status from its referent (or its spec problem), as upstream's controller writes it. */
export function capacityBufferStatus(
  buffer: CapacityBuffer,
  resolved: BufferReferent | { kind: 'Invalid'; message: string },
  now: Date,
): NonNullable<CapacityBuffer['status']> {
  const current = buffer.status ?? {};
  const observed =
    buffer.metadata.generation !== undefined ? { observedGeneration: buffer.metadata.generation } : {};
  const strategy = buffer.spec.provisioningStrategy;
  const base = {
    ...current,
    ...(strategy !== undefined ? { provisioningStrategy: strategy } : {}),
  };
  const notReady = (reason: string, message: string) => ({
    ...base,
    conditions: setCondition(
      current.conditions,
      {
        type: CapacityBufferConditionTypes.readyForProvisioning,
        status: 'False',
        reason,
        message,
        ...observed,
      },
      now,
    ),
  });
  if (resolved.kind === 'Invalid') return notReady(CapacityBufferReasons.resolutionFailed, resolved.message);
  if (resolved.kind === 'NotFound') {
    const reason = buffer.spec.podTemplateRef
      ? CapacityBufferReasons.podTemplateNotFound
      : CapacityBufferReasons.scalableRefNotFound;
    return notReady(reason, resolved.message);
  }
  const replicas = desiredReplicas(
    buffer,
    resolved.template,
    resolved.kind === 'Scalable' ? resolved.replicas : undefined,
  );
  if ('error' in replicas) return notReady(CapacityBufferReasons.resolutionFailed, replicas.error);
  const { podTemplateRef: _ref, podTemplateGeneration: _generation, ...withoutTemplate } = base;
  const templateFields =
    resolved.kind === 'PodTemplate'
      ? {
          podTemplateRef: { name: resolved.name },
          ...(resolved.generation !== undefined ? { podTemplateGeneration: resolved.generation } : {}),
        }
      : {};
  return {
    ...withoutTemplate,
    ...templateFields,
    replicas: replicas.replicas,
    conditions: setCondition(
      current.conditions,
      {
        type: CapacityBufferConditionTypes.readyForProvisioning,
        status: 'True',
        reason: CapacityBufferReasons.resolved,
        message: 'Pod template resolved successfully',
        ...observed,
      },
      now,
    ),
  };
}

/** "namespace/name": how virtual pods and placements name their buffer. */
export function bufferKey(buffer: CapacityBuffer): string {
  return `${buffer.metadata.namespace ?? 'default'}/${buffer.metadata.name}`;
}

/** Upstream's isBufferReadyForProvisioning: resolved, and at least one chunk. */
export function isBufferReadyForProvisioning(buffer: CapacityBuffer): boolean {
  const ready = buffer.status?.conditions?.find(
    (c) => c.type === CapacityBufferConditionTypes.readyForProvisioning,
  );
  return ready?.status === 'True' && (buffer.status?.replicas ?? 0) > 0;
}

/** A buffer's virtual pods with the buffer each belongs to. */
export interface VirtualPods {
  pods: SchedulingPod[];
  /** Virtual pod UID → buffer key. */
  bufferOf: Map<string, string>;
}

/**
 * The buffer's chunks as pods the simulation places (upstream's BuildVirtualPods): status.replicas copies
 * of the template, with its labels (topology spread and affinity see them as the real pods), deterministic
 * names and UIDs (`capacity-buffer-<name>-<i>`, `<buffer uid>-<i>`). They exist only in memory: nothing
 * binds them, so nothing ever evicts them.
 */
export function virtualPods(buffer: CapacityBuffer, template: BufferPodTemplate): SchedulingPod[] {
  const replicas = buffer.status?.replicas ?? 0;
  const uid = buffer.metadata.uid ?? bufferKey(buffer);
  const pods: SchedulingPod[] = [];
  for (let i = 1; i <= replicas; i++) {
    pods.push({
      metadata: {
        name: `capacity-buffer-${buffer.metadata.name}-${i}`,
        namespace: buffer.metadata.namespace ?? 'default',
        uid: `${uid}-${i}`,
        ...(template.labels ? { labels: { ...template.labels } } : {}),
        ...(buffer.metadata.creationTimestamp
          ? { creationTimestamp: buffer.metadata.creationTimestamp }
          : {}),
      },
      spec: template.spec,
    });
  }
  return pods;
}

/** Where one buffer's virtual pods went in a solve. */
export interface BufferPlacement {
  existing: number;
  requiresNewClaim: number;
  failed: number;
}

/** Upstream's classifyBufferPods: each buffer's virtual pods by where the solve put them. */
export function classifyBufferPods(
  result: SchedulingResult,
  bufferOf: ReadonlyMap<string, string>,
): Map<string, BufferPlacement> {
  const out = new Map<string, BufferPlacement>();
  const count = (uid: string, field: keyof BufferPlacement) => {
    const key = bufferOf.get(uid);
    if (key === undefined) return;
    const placement = out.get(key) ?? { existing: 0, requiresNewClaim: 0, failed: 0 };
    placement[field] += 1;
    out.set(key, placement);
  };
  for (const placement of result.existingPlacements) count(placement.pod.uid, 'existing');
  for (const claim of result.newNodeClaims) for (const pod of claim.pods) count(pod.uid, 'requiresNewClaim');
  for (const { pod } of result.unschedulable) count(pod.uid, 'failed');
  return out;
}

/**
 * The buffer's Provisioning condition after a solve (upstream's computeProvisioningCondition), or
 * undefined when the solve says nothing about it (ready, but none of its pods was in the solve).
 */
export function provisioningCondition(
  buffer: CapacityBuffer,
  placement: BufferPlacement | undefined,
  now: Date,
): Condition[] | undefined {
  const observed =
    buffer.metadata.generation !== undefined ? { observedGeneration: buffer.metadata.generation } : {};
  const ready = buffer.status?.conditions?.find(
    (c) => c.type === CapacityBufferConditionTypes.readyForProvisioning,
  );
  const set = (status: 'True' | 'False', reason: string, message: string) =>
    setCondition(
      buffer.status?.conditions,
      { type: CapacityBufferConditionTypes.provisioning, status, reason, message, ...observed },
      now,
    );
  if (ready?.status !== 'True') {
    return set('False', CapacityBufferReasons.notReadyForProvisioning, 'Buffer is not ReadyForProvisioning');
  }
  const desired = buffer.status?.replicas ?? 0;
  if (desired === 0) {
    return set(
      'False',
      CapacityBufferReasons.bufferEmpty,
      'Buffer has zero desired replicas (spec.replicas, spec.percentage and spec.limits allow none)',
    );
  }
  if (!placement) return undefined;
  if (placement.requiresNewClaim > 0 || placement.failed > 0) {
    return set(
      'False',
      CapacityBufferReasons.requiresNewCapacity,
      `${placement.requiresNewClaim}/${desired} virtual pods required new capacity, ${placement.failed} failed`,
    );
  }
  if (placement.existing === desired) {
    return set(
      'True',
      CapacityBufferReasons.fitsExistingCapacity,
      `All ${desired} virtual pods fit on existing capacity`,
    );
  }
  return undefined;
}

/** Which existing nodes hold the virtual pods now, and how many fit nowhere. */
export interface HeldCapacity {
  /** Node name → the virtual pods the simulation placed there. */
  byNode: Map<string, SchedulingPod[]>;
  unplaced: number;
}

/**
 * Places the virtual pods on the existing nodes alone, as a solve without NodePools would: the room each
 * node keeps for the buffer after its real pods, which consolidation must not take away, and whether the
 * buffer still fits at all (when not, a provisioning window must refill it).
 */
export function heldCapacity(
  pods: readonly SchedulingPod[],
  existingNodes: readonly ExistingNode[],
  policies: SchedulingPolicies,
): HeldCapacity {
  const byNode = new Map<string, SchedulingPod[]>();
  if (pods.length === 0) return { byNode, unplaced: 0 };
  const byUid = new Map(pods.map((p) => [p.metadata.uid, p]));
  const result = solve({
    pods: [...pods],
    nodePools: [],
    existingNodes: [...existingNodes],
    options: { ...policies, packing: 'FirstFit' },
  });
  for (const placement of result.existingPlacements) {
    const pod = byUid.get(placement.pod.uid);
    if (!pod || placement.kind !== 'Node') continue;
    const list = byNode.get(placement.nodeName);
    if (list) list.push(pod);
    else byNode.set(placement.nodeName, [pod]);
  }
  const placed = [...byNode.values()].reduce((sum, list) => sum + list.length, 0);
  return { byNode, unplaced: pods.length - placed };
}
