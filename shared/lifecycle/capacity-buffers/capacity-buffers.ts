// The CapacityBuffers in force, each with what its reference resolved to and the status that follows
// (upstream's buffer controller, pkg/controllers/capacitybuffer/controller.go): read once per use, so the
// sweep's status step, every provisioning window and every consolidation decision see the same buffers
// and the same virtual pods. With the CapacityBuffer feature gate off (the default, as upstream) nothing
// is read and nothing changes.
//
// Upstream keeps the virtual pods in an in-memory store the controller refreshes every 30 s; a Function
// App has no process that outlives an invocation for certain, so they are rebuilt from the API each time
// (one list of buffers and one GET per referenced object), which also means no window ever works from a
// stale template.
import type { V1PodTemplateSpec } from '@kubernetes/client-node';
import {
  bufferKey,
  bufferReference,
  capacityBufferStatus,
  isBufferReadyForProvisioning,
  virtualPods,
  type BufferPodTemplate,
  type BufferReferent,
  type VirtualPods,
} from '../../decisions/capacity-buffers.js';
import { labelsMatch } from '../../decisions/label-selector.js';
import { plainEqual } from '../../decisions/plain-equal.js';
import type { SchedulingPodSpec } from '../../decisions/scheduling/types.js';
import type { CapacityBuffer, CapacityBufferStatus } from '../../models/capacity-buffer.js';
import type { LifecycleDependencies } from '../dependencies.js';
import { writeStatus } from '../status/status-write.js';

type BufferDependencies = Pick<LifecycleDependencies, 'capacityBuffers' | 'settings' | 'now'>;

/** A buffer as read, what its reference resolved to, and its status as it should be now. */
export interface ResolvedBuffer {
  buffer: CapacityBuffer;
  status: CapacityBufferStatus;
  /** The chunk's shape, when the reference resolved. */
  template?: BufferPodTemplate;
}

function podTemplateOf(template: V1PodTemplateSpec): BufferPodTemplate {
  return {
    ...(template.metadata?.labels ? { labels: template.metadata.labels } : {}),
    // client-node's V1PodSpec spells every field the simulation reads as Kubernetes does.
    spec: (template.spec ?? { containers: [] }) as unknown as SchedulingPodSpec,
  };
}

async function resolve(
  deps: BufferDependencies,
  buffer: CapacityBuffer,
): Promise<BufferReferent | { kind: 'Invalid'; message: string }> {
  const reference = bufferReference(buffer);
  if (reference.kind === 'Invalid') return reference;
  const namespace = buffer.metadata.namespace ?? 'default';
  if (reference.kind === 'PodTemplate') {
    const read = await deps.capacityBuffers.podTemplate(namespace, reference.name);
    if (!read) return { kind: 'NotFound', message: `PodTemplate ${namespace}/${reference.name} not found` };
    return {
      kind: 'PodTemplate',
      name: reference.name,
      ...(read.generation !== undefined ? { generation: read.generation } : {}),
      template: podTemplateOf(read.template),
    };
  }
  const read = await deps.capacityBuffers.scalable(reference.workload, namespace, reference.name);
  if (!read) {
    return { kind: 'NotFound', message: `${reference.workload} ${namespace}/${reference.name} not found` };
  }
  return { kind: 'Scalable', template: podTemplateOf(read.template), replicas: read.replicas };
}

/** Every buffer not being deleted, resolved; undefined when the gate is off. */
export async function readCapacityBuffers(deps: BufferDependencies): Promise<ResolvedBuffer[] | undefined> {
  if (!deps.settings.featureGates.CapacityBuffer) return undefined;
  const buffers = (await deps.capacityBuffers.list()).filter((b) => !b.metadata.deletionTimestamp);
  const now = deps.now();
  return Promise.all(
    buffers.map(async (buffer) => {
      const resolved = await resolve(deps, buffer);
      return {
        buffer,
        status: capacityBufferStatus(buffer, resolved, now),
        ...(resolved.kind === 'PodTemplate' || resolved.kind === 'Scalable'
          ? { template: resolved.template }
          : {}),
      };
    }),
  );
}

/**
 * The buffers an app confined to a label selector owns (a sharded app, or stacks sharing a cluster): those
 * whose pod template carries matching labels, as provisioning selects pods. Without a selector, all.
 */
export function buffersSelectedBy(
  entries: readonly ResolvedBuffer[],
  selector: string | undefined,
): ResolvedBuffer[] {
  if (!selector) return [...entries];
  return entries.filter((e) => e.template && labelsMatch(selector, e.template.labels ?? {}));
}

/** The virtual pods of every buffer ready for provisioning, by their status as it should be now. */
export function bufferVirtualPods(entries: readonly ResolvedBuffer[]): VirtualPods {
  const pods: VirtualPods['pods'] = [];
  const bufferOf = new Map<string, string>();
  for (const { buffer, status, template } of entries) {
    const current = { ...buffer, status };
    if (!template || !isBufferReadyForProvisioning(current)) continue;
    for (const pod of virtualPods(current, template)) {
      pods.push(pod);
      bufferOf.set(pod.metadata.uid, bufferKey(buffer));
    }
  }
  return { pods, bufferOf };
}

/**
 * Writes `status` onto the buffer unless it already says so, guarded by the resourceVersion read (a
 * buffer changed since is judged again next time). Fields the new status no longer has are removed
 * (a merge patch keeps what it does not name). True when written.
 */
export async function writeCapacityBufferStatus(
  deps: Pick<LifecycleDependencies, 'capacityBuffers'>,
  buffer: CapacityBuffer,
  status: CapacityBufferStatus,
): Promise<boolean> {
  if (plainEqual(buffer.status ?? {}, status)) return false;
  const removed = Object.fromEntries(
    Object.keys(buffer.status ?? {})
      .filter((key) => status[key as keyof CapacityBufferStatus] === undefined)
      .map((key) => [key, null]),
  );
  const namespace = buffer.metadata.namespace ?? 'default';
  const result = await writeStatus(buffer, { ...removed, ...status }, (name, patch) =>
    deps.capacityBuffers.mergePatchStatus(namespace, name, patch),
  );
  return result.written;
}
