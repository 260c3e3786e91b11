// In-memory CapacityBuffers and what they refer to, with the CapacityBufferStore contract the lifecycle
// relies on: a status merge patch pinned to a stale resourceVersion answers 409 and one to a missing
// buffer 404, as the API server answers; PodTemplates and workloads are looked up by namespace and name.
// A test seeds them and asserts on the stored buffers and on `statusPatches`.
import type { ScalableKind } from '../../shared/decisions/capacity-buffers.js';
import type {
  CapacityBufferStore,
  ReadPodTemplate,
  ReadScalable,
} from '../../shared/kube/capacity-buffers.js';
import type { CapacityBuffer } from '../../shared/models/capacity-buffer.js';
import { FakeApiError } from './fake-api-error.js';
import { mergePatch } from './merge-patch.js';

const keyOf = (namespace: string, name: string): string => `${namespace}/${name}`;

export class FakeCapacityBuffers implements CapacityBufferStore {
  private readonly buffers = new Map<string, CapacityBuffer>();
  private version = 0;
  /** PodTemplates by "namespace/name". */
  readonly podTemplates = new Map<string, ReadPodTemplate>();
  /** Deployments, StatefulSets and ReplicaSets by "Kind/namespace/name". */
  readonly scalables = new Map<string, ReadScalable>();
  /** Every status patch the store accepted, in order. */
  readonly statusPatches: { namespace: string; name: string; patch: object }[] = [];

  /** Puts a buffer as the API server would hold it (a fresh resourceVersion). */
  seed(buffer: CapacityBuffer): CapacityBuffer {
    const stored = structuredClone(buffer);
    stored.metadata.resourceVersion = String(++this.version);
    this.buffers.set(keyOf(stored.metadata.namespace ?? 'default', stored.metadata.name), stored);
    return structuredClone(stored);
  }

  peek(namespace: string, name: string): CapacityBuffer | undefined {
    const buffer = this.buffers.get(keyOf(namespace, name));
    return buffer ? structuredClone(buffer) : undefined;
  }

  async list(): Promise<CapacityBuffer[]> {
    return [...this.buffers.values()].map((buffer) => structuredClone(buffer));
  }

  async mergePatchStatus(namespace: string, name: string, patch: object): Promise<CapacityBuffer> {
    const current = this.buffers.get(keyOf(namespace, name));
    if (!current) throw new FakeApiError(404, `CapacityBuffer ${namespace}/${name} not found`);
    const expected = (patch as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion;
    if (expected !== undefined && expected !== current.metadata.resourceVersion) {
      throw new FakeApiError(409, `CapacityBuffer ${namespace}/${name}: the object has been modified`);
    }
    const next = mergePatch(current, patch) as CapacityBuffer;
    next.metadata.resourceVersion = String(++this.version);
    this.buffers.set(keyOf(namespace, name), next);
    this.statusPatches.push({ namespace, name, patch: structuredClone(patch) });
    return structuredClone(next);
  }

  async podTemplate(namespace: string, name: string): Promise<ReadPodTemplate | undefined> {
    const read = this.podTemplates.get(keyOf(namespace, name));
    return read ? structuredClone(read) : undefined;
  }

  async scalable(kind: ScalableKind, namespace: string, name: string): Promise<ReadScalable | undefined> {
    const read = this.scalables.get(`${kind}/${keyOf(namespace, name)}`);
    return read ? structuredClone(read) : undefined;
  }
}
