// The API calls a kubelet makes about its own node, each with the node's own credentials (see
// node-connections.ts): registering the Node, reading it back, posting its status and renewing its Lease.
// The Node authorizer and NodeRestriction admission allow each only for the node's own objects.
import type { V1Lease, V1Node } from '@kubernetes/client-node';
import { V1MicroTime } from '@kubernetes/client-node';
import { isAlreadyExists, isNotFound } from '../../shared/kube/errors.js';
import type { KubeRequest } from './kube-rest.js';
import { leaseDurationSeconds, nodeLeaseNamespace } from './node-template.js';
import type { NodeJson } from './node-view.js';

const nodePath = (name: string): string => `/api/v1/nodes/${encodeURIComponent(name)}`;
const leasesPath = `/apis/coordination.k8s.io/v1/namespaces/${nodeLeaseNamespace}/leases`;

export class KubeletApi {
  /** `request` authenticates as the node itself (system:node:<name>). */
  constructor(private readonly request: KubeRequest) {}

  createNode(node: V1Node): Promise<NodeJson> {
    return this.request<NodeJson>('create node', 'POST', '/api/v1/nodes', node);
  }

  /** Its own Node (a node may get no other); undefined when there is none. */
  async readNode(name: string): Promise<NodeJson | undefined> {
    try {
      return await this.request<NodeJson>('read own node', 'GET', nodePath(name));
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /** Strategic merge patch of the status subresource, as kubelet writes its status. */
  patchNodeStatus(label: string, name: string, patch: object): Promise<NodeJson> {
    return this.request<NodeJson>(
      label,
      'PATCH',
      `${nodePath(name)}/status`,
      patch,
      'application/strategic-merge-patch+json',
    );
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
    return this.request(
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
    return this.request('create lease', 'POST', leasesPath, {
      ...lease,
      spec: { ...lease.spec, renewTime },
    });
  }

  /** Who the API server takes this node's requests to be (a SelfSubjectReview). */
  async identity(): Promise<{ username: string; groups: string[] }> {
    const review = await this.request<{ status?: { userInfo?: { username?: string; groups?: string[] } } }>(
      'self subject review',
      'POST',
      '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    );
    return {
      username: review.status?.userInfo?.username ?? '',
      groups: review.status?.userInfo?.groups ?? [],
    };
  }
}
