// Builders for the plain NodeClaim and Node objects the decision tests feed in.
import type { Condition, Node, NodeClaim, Taint } from '../../shared/models/index.js';

export const PROVIDER_ID =
  'azure:///subscriptions/0000/resourcegroups/mc_rg/providers/Microsoft.Compute/virtualMachines/aks-default-abcde';

export function nodeClaim(overrides: {
  name?: string;
  uid?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  taints?: Taint[];
  startupTaints?: Taint[];
  requests?: Record<string, string>;
  providerID?: string | null;
  conditions?: Condition[];
  creationTimestamp?: string;
  deletionTimestamp?: string;
}): NodeClaim {
  const providerID = overrides.providerID === null ? undefined : (overrides.providerID ?? PROVIDER_ID);
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name: overrides.name ?? 'default-abcde',
      uid: overrides.uid ?? 'uid-nodeclaim-1',
      labels: overrides.labels ?? { 'karpenter.sh/nodepool': 'default' },
      ...(overrides.annotations ? { annotations: overrides.annotations } : {}),
      ...(overrides.creationTimestamp ? { creationTimestamp: overrides.creationTimestamp } : {}),
      ...(overrides.deletionTimestamp ? { deletionTimestamp: overrides.deletionTimestamp } : {}),
    },
    spec: {
      nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
      requirements: [],
      ...(overrides.taints ? { taints: overrides.taints } : {}),
      ...(overrides.startupTaints ? { startupTaints: overrides.startupTaints } : {}),
      ...(overrides.requests ? { resources: { requests: overrides.requests } } : {}),
    },
    status: {
      ...(providerID ? { providerID } : {}),
      ...(overrides.conditions ? { conditions: overrides.conditions } : {}),
    },
  };
}

export function node(overrides: {
  name?: string;
  providerID?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  taints?: Taint[];
  finalizers?: string[];
  ready?: 'True' | 'False' | 'Unknown' | null;
  allocatable?: Record<string, string>;
  resourceVersion?: string | null;
}): Node {
  const ready = overrides.ready === undefined ? 'True' : overrides.ready;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: overrides.name ?? 'aks-default-abcde',
      uid: 'uid-node-1',
      ...(overrides.resourceVersion === null ? {} : { resourceVersion: overrides.resourceVersion ?? '100' }),
      ...(overrides.labels ? { labels: overrides.labels } : {}),
      ...(overrides.annotations ? { annotations: overrides.annotations } : {}),
      ...(overrides.finalizers ? { finalizers: overrides.finalizers } : {}),
    },
    spec: {
      providerID: overrides.providerID ?? PROVIDER_ID,
      ...(overrides.taints ? { taints: overrides.taints } : {}),
    },
    status: {
      allocatable: overrides.allocatable ?? { cpu: '4', memory: '16Gi', pods: '110' },
      conditions: ready === null ? [] : [{ type: 'Ready', status: ready }],
    },
  };
}

export function condition(
  type: string,
  status: Condition['status'],
  reason = type,
  at = '2025-01-01T00:00:00.000Z',
): Condition {
  return { type, status, reason, message: '', lastTransitionTime: at };
}

export const UNREGISTERED: Taint = { key: 'karpenter.sh/unregistered', effect: 'NoExecute' };

/** Applies an RFC 6902 patch to a JSON document, strictly: a missing parent or a failed test throws. */
export function applyJsonPatch<T>(
  document: T,
  operations: readonly { op: string; path: string; value?: unknown }[],
): T {
  const root = structuredClone(document) as unknown as Record<string, unknown>;
  for (const operation of operations) {
    const tokens = operation.path
      .split('/')
      .slice(1)
      .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
    const last = tokens.pop();
    if (last === undefined) throw new Error(`bad path ${operation.path}`);
    let parent: Record<string, unknown> = root;
    for (const token of tokens) {
      const child = parent[token];
      if (child === null || typeof child !== 'object')
        throw new Error(`missing parent for ${operation.path}`);
      parent = child as Record<string, unknown>;
    }
    switch (operation.op) {
      case 'add':
        parent[last] = structuredClone(operation.value);
        break;
      case 'replace':
        if (!(last in parent)) throw new Error(`replace of missing ${operation.path}`);
        parent[last] = structuredClone(operation.value);
        break;
      case 'remove':
        if (!(last in parent)) throw new Error(`remove of missing ${operation.path}`);
        delete parent[last];
        break;
      case 'test':
        if (JSON.stringify(parent[last]) !== JSON.stringify(operation.value))
          throw new Error(`test failed ${operation.path}`);
        break;
      default:
        throw new Error(`unsupported op ${operation.op}`);
    }
  }
  return root as unknown as T;
}
