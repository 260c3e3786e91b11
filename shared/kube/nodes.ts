// Nodes as the domain reads them. @kubernetes/client-node deserializes timestamps into Date objects; the
// domain model (and the JSON Patch built from it) uses the API's own string form, so the conversion
// happens here, once, at the edge.
import { PatchStrategy, setHeaderOptions, type CoreV1Api, type V1Node } from '@kubernetes/client-node';
import type { Node, OwnerReference, Taint } from '../models/kube.js';
import type { JsonPatchOperation } from '../decisions/node-patch.js';
import { findNodesForClaim, sameProviderID } from '../decisions/registration.js';
import { parseProviderId } from '../cloudprovider/azure/decisions/vm-spec.js';
import { isNotFound } from './errors.js';
import { listAllPages, LIST_PAGE_SIZE, pageOf, type ListPage } from './paging.js';

const jsonPatch = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);

function timestamp(value: Date | string | undefined): string | undefined {
  if (value === undefined) return undefined;
  return typeof value === 'string' ? value : value.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Drops undefined properties, so a converted object compares equal to one read as plain JSON. */
function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

export function toDomainNode(node: V1Node): Node {
  const metadata = node.metadata ?? {};
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: defined({
      name: metadata.name ?? '',
      uid: metadata.uid,
      resourceVersion: metadata.resourceVersion,
      creationTimestamp: timestamp(metadata.creationTimestamp),
      deletionTimestamp: timestamp(metadata.deletionTimestamp),
      labels: metadata.labels,
      annotations: metadata.annotations,
      finalizers: metadata.finalizers,
      ownerReferences: metadata.ownerReferences?.map((o) =>
        defined<OwnerReference>({
          apiVersion: o.apiVersion,
          kind: o.kind,
          name: o.name,
          uid: o.uid,
          controller: o.controller,
          blockOwnerDeletion: o.blockOwnerDeletion,
        }),
      ),
    }),
    spec: defined({
      providerID: node.spec?.providerID,
      taints: node.spec?.taints?.map((t) =>
        defined<Taint>({
          key: t.key,
          value: t.value,
          effect: t.effect as Taint['effect'],
          timeAdded: timestamp(t.timeAdded),
        }),
      ),
      unschedulable: node.spec?.unschedulable,
    }),
    ...(node.status
      ? {
          status: defined({
            capacity: node.status.capacity,
            allocatable: node.status.allocatable,
            conditions: node.status.conditions?.map((c) =>
              defined({
                type: c.type,
                status: c.status as 'True' | 'False' | 'Unknown',
                reason: c.reason,
                message: c.message,
                // Node repair counts a policy's toleration from it: without it a NotReady node's
                // toleration would start again at every sweep and never end.
                lastTransitionTime: timestamp(c.lastTransitionTime),
              }),
            ),
          }),
        }
      : {}),
  };
}

export async function getNode(core: CoreV1Api, name: string): Promise<Node | undefined> {
  try {
    return toDomainNode(await core.readNode({ name }));
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/** Every Node, read in pages so a large cluster never arrives as one huge response. */
export async function listNodes(core: CoreV1Api, pageSize = LIST_PAGE_SIZE): Promise<Node[]> {
  return (await listAllPages((token, limit) => listNodesPage(core, token, limit), toDomainNode, pageSize))
    .items;
}

/** The Nodes a label selector (`key=value`, comma-separated) selects, in one request. */
export async function listLabelledNodes(core: CoreV1Api, labelSelector: string): Promise<Node[]> {
  return (await core.listNode({ labelSelector })).items.map(toDomainNode);
}

/** One page of Nodes, with the list's resourceVersion (where a watch can resume from). */
export async function listNodesPage(
  core: CoreV1Api,
  continueToken: string | undefined,
  limit: number,
): Promise<ListPage<V1Node>> {
  return pageOf(await core.listNode({ limit, ...(continueToken ? { _continue: continueToken } : {}) }));
}

/**
 * Applies a JSON Patch to a Node. The patches this project builds pin /metadata/resourceVersion first,
 * so a Node that changed since it was read answers 409 Conflict instead of being overwritten.
 */
export async function patchNode(
  core: CoreV1Api,
  name: string,
  operations: JsonPatchOperation[],
): Promise<Node> {
  return toDomainNode(await core.patchNode({ name, body: operations }, jsonPatch));
}

/**
 * The Nodes whose spec.providerID is `providerID` (ARM IDs compare case-insensitively), by GET alone: a
 * VM's Node is named after it (the VM's computer name is its name, cloudprovider/azure/decisions/vm-spec.ts, and kubelet
 * registers under the host name in lower case), so an Azure providerID names its Node. The NodeClaim's
 * status.nodeName, when known, is tried first. Only a providerID that names no VM falls back to a
 * paginated list (providerID has no field selector), which would cost a whole cluster's Nodes per call.
 */
export async function nodesWithProviderID(
  core: CoreV1Api,
  providerID: string,
  knownNodeName?: string,
): Promise<Node[]> {
  const vmNodeName = parseProviderId(providerID)?.vmName.toLowerCase();
  for (const name of new Set([knownNodeName, vmNodeName])) {
    if (!name) continue;
    const node = await getNode(core, name);
    if (node?.spec.providerID && sameProviderID(node.spec.providerID, providerID)) return [node];
  }
  if (vmNodeName) return [];
  return findNodesForClaim(await listNodes(core), providerID);
}
