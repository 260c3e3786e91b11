// The Node reads and writes the lifecycle phases make (registration, initialization, taints, drain,
// termination, consolidation's validation), behind one narrow interface so a phase can be unit tested
// against an in-memory store (test/support/fake-nodes.ts). kubeNodeStore implements it with the API
// server client, making exactly the requests the phases made before through the functions of nodes.ts.
import type { JsonPatchOperation } from '../decisions/node-patch.js';
import type { Node } from '../models/kube.js';
import type { KubeClients } from './client.js';
import { getNode, listLabelledNodes, listNodes, nodesWithProviderID, patchNode } from './nodes.js';

export interface NodeStore {
  /** The Node, or undefined when it does not exist. */
  get(name: string): Promise<Node | undefined>;
  /**
   * A JSON Patch; the patches built here pin /metadata/resourceVersion first, so a Node changed since it
   * was read answers 409 (and one that is gone 404), as the API server does.
   */
  patch(name: string, operations: JsonPatchOperation[]): Promise<Node>;
  /** Deletes the Node; a missing one answers 404. */
  delete(name: string): Promise<void>;
  /** The Nodes whose spec.providerID is `providerID`, `knownNodeName` tried first (nodes.ts). */
  withProviderID(providerID: string, knownNodeName?: string): Promise<Node[]>;
  /** Every Node, read in pages. */
  list(): Promise<Node[]>;
  /** The Nodes a label selector (`key=value`, comma-separated) selects, in one request. */
  listLabelled(labelSelector: string): Promise<Node[]>;
}

export function kubeNodeStore(kube: () => Promise<KubeClients>): NodeStore {
  return {
    get: async (name) => getNode((await kube()).core, name),
    patch: async (name, operations) => patchNode((await kube()).core, name, operations),
    delete: async (name) => {
      await (await kube()).core.deleteNode({ name });
    },
    withProviderID: async (providerID, knownNodeName) =>
      nodesWithProviderID((await kube()).core, providerID, knownNodeName),
    list: async () => listNodes((await kube()).core),
    listLabelled: async (labelSelector) => listLabelledNodes((await kube()).core, labelSelector),
  };
}
