// Typed access to the cluster-scoped custom resources. Writes are guarded by resourceVersion where the
// caller passes one, so a handler that read stale state gets a conflict instead of overwriting newer data.
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { AKSNodeClass, NodeClaim, NodePool } from '../models/index.js';
import {
  AKSNodeClassResource,
  NodeClaimResource,
  NodePoolResource,
  type CustomResourceName,
} from './crd-names.js';
import type { KubeClients } from './client.js';
import { isNotFound } from './errors.js';
import { listAllPages, pageOf, type ListPage } from './paging.js';

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const jsonPatch = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);

export type JsonPatchOperation =
  { op: 'add' | 'replace' | 'test'; path: string; value: unknown } | { op: 'remove'; path: string };

export class CustomObjects<T extends { metadata: { name: string } }> {
  constructor(
    private readonly clients: () => Promise<KubeClients>,
    private readonly resource: CustomResourceName,
  ) {}

  async get(name: string): Promise<T | undefined> {
    const { custom } = await this.clients();
    try {
      return (await custom.getClusterCustomObject({ ...this.coordinates(), name })) as T;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /** Lists every object, following `continue` tokens so large clusters are read in pages. */
  async list(options: { labelSelector?: string; pageSize?: number } = {}): Promise<T[]> {
    const listPage = (token: string | undefined, limit: number) =>
      this.listPage(token, limit, options.labelSelector);
    return (await listAllPages(listPage, (item: T) => item, options.pageSize)).items;
  }

  /** One page of the collection, with the list's resourceVersion (where a watch can resume from). */
  async listPage(
    continueToken: string | undefined,
    limit: number,
    labelSelector?: string,
  ): Promise<ListPage<T>> {
    const { custom } = await this.clients();
    const page = (await custom.listClusterCustomObject({
      ...this.coordinates(),
      limit,
      ...(continueToken ? { _continue: continueToken } : {}),
      ...(labelSelector ? { labelSelector } : {}),
    })) as { items: T[]; metadata?: { _continue?: string; continue?: string; resourceVersion?: string } };
    return pageOf(page);
  }

  /** The collection's URL path, as a watch requests it. */
  get collectionPath(): string {
    return `/apis/${this.resource.group}/${this.resource.version}/${this.resource.plural}`;
  }

  async create(object: T): Promise<T> {
    const { custom } = await this.clients();
    return (await custom.createClusterCustomObject({ ...this.coordinates(), body: object })) as T;
  }

  /** JSON merge patch of the main resource (metadata and spec). */
  async mergePatch(name: string, patch: object): Promise<T> {
    const { custom } = await this.clients();
    return (await custom.patchClusterCustomObject(
      { ...this.coordinates(), name, body: patch },
      mergePatch,
    )) as T;
  }

  async jsonPatch(name: string, operations: JsonPatchOperation[]): Promise<T> {
    const { custom } = await this.clients();
    return (await custom.patchClusterCustomObject(
      { ...this.coordinates(), name, body: operations },
      jsonPatch,
    )) as T;
  }

  /** JSON merge patch of the status subresource; include metadata.resourceVersion to guard it. */
  async mergePatchStatus(name: string, patch: object): Promise<T> {
    const { custom } = await this.clients();
    return (await custom.patchClusterCustomObjectStatus(
      { ...this.coordinates(), name, body: patch },
      mergePatch,
    )) as T;
  }

  /** Deletes; returns false when it was already gone. */
  async delete(name: string, options: { uid?: string } = {}): Promise<boolean> {
    const { custom } = await this.clients();
    try {
      await custom.deleteClusterCustomObject({
        ...this.coordinates(),
        name,
        // A precondition on uid makes sure a late handler never deletes a newer object with the same name.
        ...(options.uid ? { body: { preconditions: { uid: options.uid } } } : {}),
      });
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }

  private coordinates(): { group: string; version: string; plural: string } {
    return { group: this.resource.group, version: this.resource.version, plural: this.resource.plural };
  }
}

export interface KarpenterObjects {
  nodeClaims: CustomObjects<NodeClaim>;
  nodePools: CustomObjects<NodePool>;
  nodeClasses: CustomObjects<AKSNodeClass>;
}

export function karpenterObjects(clients: () => Promise<KubeClients>): KarpenterObjects {
  return {
    nodeClaims: new CustomObjects<NodeClaim>(clients, NodeClaimResource),
    nodePools: new CustomObjects<NodePool>(clients, NodePoolResource),
    nodeClasses: new CustomObjects<AKSNodeClass>(clients, AKSNodeClassResource),
  };
}
