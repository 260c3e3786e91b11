// The API calls a kubelet (and, for deletion and startup taints, its neighbours) makes about one node.
import type { V1Lease, V1Node } from '@kubernetes/client-node';
import { V1MicroTime } from '@kubernetes/client-node';
import { guardedNodePatch } from '../../shared/decisions/node-patch.js';
import { isAlreadyExists, isConflict, isNotFound } from '../../shared/kube/errors.js';
import type { Taint } from '../../shared/models/kube.js';
import type { KubeRest } from './kube-rest.js';
import { leaseDurationSeconds, nodeLeaseNamespace } from './node-template.js';
import type { NodeJson, NodeView } from './node-view.js';

const nodePath = (name: string): string => `/api/v1/nodes/${encodeURIComponent(name)}`;
const leasesPath = `/apis/coordination.k8s.io/v1/namespaces/${nodeLeaseNamespace}/leases`;

export interface NodeList {
  apiVersion?: string;
  kind?: string;
  metadata?: { resourceVersion?: string };
  items: NodeJson[];
}

export class KubeletApi {
  constructor(private readonly rest: KubeRest) {}

  listNodes(): Promise<NodeList> {
    return this.rest.request<NodeList>('list nodes', 'GET', '/api/v1/nodes');
  }

  createNode(node: V1Node): Promise<NodeJson> {
    return this.rest.request<NodeJson>('create node', 'POST', '/api/v1/nodes', node);
  }

  /** undefined when there is no such Node. */
  async readNode(name: string): Promise<NodeJson | undefined> {
    try {
      return await this.rest.request<NodeJson>('read node', 'GET', nodePath(name));
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /** Strategic merge patch of the status subresource, as kubelet writes its status. */
  patchNodeStatus(label: string, name: string, patch: object): Promise<NodeJson> {
    return this.rest.request<NodeJson>(
      label,
      'PATCH',
      `${nodePath(name)}/status`,
      patch,
      'application/strategic-merge-patch+json',
    );
  }

  /**
   * Replaces the taints of the Node as it was read, guarded by its resourceVersion: a 409 means
   * somebody wrote the Node since, and the caller re-reads.
   */
  replaceTaints(node: NodeView, taints: Taint[]): Promise<NodeJson> {
    const before = {
      metadata: { name: node.name, resourceVersion: node.resourceVersion },
      spec: { taints: node.taints },
    };
    const after = { metadata: before.metadata, spec: { taints } };
    return this.rest.request<NodeJson>(
      'remove startup taints',
      'PATCH',
      nodePath(node.name),
      guardedNodePatch(before, after),
      'application/json-patch+json',
    );
  }

  /** Deletes the Node if it is still the one with this uid; false when it was already gone. */
  async deleteNode(name: string, uid: string): Promise<boolean> {
    try {
      await this.rest.request('delete node', 'DELETE', nodePath(name), {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        preconditions: { uid },
      });
      return true;
    } catch (error) {
      // 409: a different Node of that name exists now; it is not ours to delete.
      if (isNotFound(error) || isConflict(error)) return false;
      throw error;
    }
  }

  /**
   * Renews the node's Lease with one request. `exists` says whether it is known to exist: a freshly
   * registered node creates it straight away, as kubelet's lease controller does on start; either way a
   * wrong guess costs one extra request and is corrected.
   */
  async renewLease(nodeName: string, nodeUid: string, exists: boolean): Promise<void> {
    const renewTime = new V1MicroTime().toISOString();
    if (exists) {
      try {
        await this.#patchLease(nodeName, renewTime);
        return;
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    }
    try {
      await this.#createLease(nodeName, nodeUid, renewTime);
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
      await this.#patchLease(nodeName, renewTime);
    }
  }

  #patchLease(nodeName: string, renewTime: string): Promise<unknown> {
    return this.rest.request(
      'renew lease',
      'PATCH',
      `${leasesPath}/${encodeURIComponent(nodeName)}`,
      { spec: { renewTime } },
      'application/merge-patch+json',
    );
  }

  #createLease(nodeName: string, nodeUid: string, renewTime: string): Promise<unknown> {
    const lease: V1Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: nodeName,
        namespace: nodeLeaseNamespace,
        // Owned by the Node, so the garbage collector removes it with the Node.
        ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: nodeName, uid: nodeUid }],
      },
      spec: { holderIdentity: nodeName, leaseDurationSeconds },
    };
    return this.rest.request('create lease', 'POST', leasesPath, {
      ...lease,
      spec: { ...lease.spec, renewTime },
    });
  }

  async kubeletVersion(): Promise<string> {
    const version = await this.rest.request<{ gitVersion?: string }>('version', 'GET', '/version');
    return version.gitVersion ?? 'v0.0.0';
  }
}
