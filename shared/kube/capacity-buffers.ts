// Typed access to CapacityBuffers (namespaced, unlike the other custom resources: custom-objects.ts) and
// to what a buffer refers to: a PodTemplate, or a Deployment, StatefulSet or ReplicaSet in the buffer's
// namespace. Requests only; what they mean is decisions/capacity-buffers.ts. The lifecycle reaches them
// through the CapacityBufferStore port (kubeCapacityBufferStore), so its buffer code can be unit tested
// against an in-memory store (test/support/fake-capacity-buffers.ts).
import { AppsV1Api, PatchStrategy, setHeaderOptions, type V1PodTemplateSpec } from '@kubernetes/client-node';
import type { ScalableKind } from '../decisions/capacity-buffers.js';
import type { CapacityBuffer } from '../models/capacity-buffer.js';
import type { KubeClients } from './client.js';
import { CapacityBufferResource } from './crd-names.js';
import { isNotFound } from './errors.js';
import { listAllPages, pageOf } from './paging.js';

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

export class CapacityBufferObjects {
  constructor(private readonly clients: () => Promise<KubeClients>) {}

  /** Every CapacityBuffer in every namespace, read in pages. */
  async list(): Promise<CapacityBuffer[]> {
    const { custom } = await this.clients();
    const listPage = async (token: string | undefined, limit: number) =>
      pageOf(
        (await custom.listCustomObjectForAllNamespaces({
          group: CapacityBufferResource.group,
          version: CapacityBufferResource.version,
          resourcePlural: CapacityBufferResource.plural,
          limit,
          ...(token ? { _continue: token } : {}),
        })) as { items: CapacityBuffer[]; metadata?: { _continue?: string; continue?: string } },
      );
    return (await listAllPages(listPage, (buffer: CapacityBuffer) => buffer)).items;
  }

  /** JSON merge patch of the status subresource; include metadata.resourceVersion to guard it. */
  async mergePatchStatus(namespace: string, name: string, patch: object): Promise<CapacityBuffer> {
    const { custom } = await this.clients();
    return (await custom.patchNamespacedCustomObjectStatus(
      {
        group: CapacityBufferResource.group,
        version: CapacityBufferResource.version,
        plural: CapacityBufferResource.plural,
        namespace,
        name,
        body: patch,
      },
      mergePatch,
    )) as CapacityBuffer;
  }
}

/** A PodTemplate's template and generation, or undefined when it does not exist. */
export async function readPodTemplate(
  clients: KubeClients,
  namespace: string,
  name: string,
): Promise<ReadPodTemplate | undefined> {
  const { core } = clients;
  try {
    const podTemplate = await core.readNamespacedPodTemplate({ namespace, name });
    return {
      template: podTemplate.template ?? {},
      ...(podTemplate.metadata?.generation !== undefined
        ? { generation: podTemplate.metadata.generation }
        : {}),
    };
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/** A workload's pod template and spec.replicas (1 when unset, as the API defaults it), or undefined. */
export async function readScalable(
  clients: KubeClients,
  kind: ScalableKind,
  namespace: string,
  name: string,
): Promise<ReadScalable | undefined> {
  const apps = clients.config.makeApiClient(AppsV1Api);
  try {
    const workload =
      kind === 'Deployment'
        ? await apps.readNamespacedDeployment({ namespace, name })
        : kind === 'StatefulSet'
          ? await apps.readNamespacedStatefulSet({ namespace, name })
          : await apps.readNamespacedReplicaSet({ namespace, name });
    return { template: workload.spec?.template ?? {}, replicas: workload.spec?.replicas ?? 1 };
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/** A PodTemplate's template and generation, as a buffer referring to it resolves. */
export interface ReadPodTemplate {
  template: V1PodTemplateSpec;
  generation?: number;
}

/** A workload's pod template and replica count, as a buffer referring to it resolves. */
export interface ReadScalable {
  template: V1PodTemplateSpec;
  replicas: number;
}

/** The CapacityBuffer reads and writes the lifecycle makes; undefined answers are objects that do not exist. */
export interface CapacityBufferStore {
  /** Every CapacityBuffer in every namespace. */
  list(): Promise<CapacityBuffer[]>;
  /** JSON merge patch of the status subresource; include metadata.resourceVersion to guard it. */
  mergePatchStatus(namespace: string, name: string, patch: object): Promise<CapacityBuffer>;
  podTemplate(namespace: string, name: string): Promise<ReadPodTemplate | undefined>;
  scalable(kind: ScalableKind, namespace: string, name: string): Promise<ReadScalable | undefined>;
}

export function kubeCapacityBufferStore(kube: () => Promise<KubeClients>): CapacityBufferStore {
  const objects = new CapacityBufferObjects(kube);
  return {
    list: () => objects.list(),
    mergePatchStatus: (namespace, name, patch) => objects.mergePatchStatus(namespace, name, patch),
    podTemplate: async (namespace, name) => readPodTemplate(await kube(), namespace, name),
    scalable: async (kind, namespace, name) => readScalable(await kube(), kind, namespace, name),
  };
}
