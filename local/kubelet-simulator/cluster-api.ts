// The API calls the simulator makes about nodes as the cluster's other components, with the admin
// kubeconfig: its Node informer's list (standing in for the agent DaemonSet's and the cloud node
// controller's), the agent's startup-taint removal, the cloud node lifecycle controller's deletion of a
// Node whose VM is gone, and the API server's version. None of these is a kubelet's own call.
import { guardedNodePatch } from '../../shared/decisions/node-patch.js';
import { isConflict, isNotFound } from '../../shared/kube/errors.js';
import type { Taint } from '../../shared/models/kube.js';
import type { KubeRequest } from './kube-rest.js';
import type { NodeJson, NodeView } from './node-view.js';

const nodePath = (name: string): string => `/api/v1/nodes/${encodeURIComponent(name)}`;

export interface NodeList {
  apiVersion?: string;
  kind?: string;
  metadata?: { resourceVersion?: string };
  items: NodeJson[];
}

export class ClusterApi {
  constructor(private readonly request: KubeRequest) {}

  listNodes(): Promise<NodeList> {
    return this.request<NodeList>('list nodes', 'GET', '/api/v1/nodes');
  }

  /** undefined when there is no such Node. */
  async readNode(name: string): Promise<NodeJson | undefined> {
    try {
      return await this.request<NodeJson>('read node', 'GET', nodePath(name));
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
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
    return this.request<NodeJson>(
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
      await this.request('delete node', 'DELETE', nodePath(name), {
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

  async kubeletVersion(): Promise<string> {
    const version = await this.request<{ gitVersion?: string }>('version', 'GET', '/version');
    return version.gitVersion ?? 'v0.0.0';
  }
}
