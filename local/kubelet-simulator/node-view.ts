// The few facts about a Node the simulator acts on, read from the API server's JSON.
import type { ConditionStatus, Taint } from '../../shared/models/kube.js';

/** The Node JSON as the API server sends it (list, watch, create); only the fields read here. */
export interface NodeJson {
  metadata?: {
    name?: string;
    uid?: string;
    resourceVersion?: string;
    creationTimestamp?: string;
    deletionTimestamp?: string;
  };
  spec?: { providerID?: string; taints?: Taint[] };
  status?: { conditions?: Array<{ type: string; status: string }> };
}

export interface NodeView {
  name: string;
  uid: string;
  resourceVersion: string;
  providerId: string | undefined;
  taints: Taint[];
  conditionTypes: string[];
  ready: ConditionStatus | undefined;
  /** ms since the epoch. */
  createdAt: number;
}

export function nodeView(node: NodeJson): NodeView {
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready')?.status;
  return {
    name: node.metadata?.name ?? '',
    uid: node.metadata?.uid ?? '',
    resourceVersion: node.metadata?.resourceVersion ?? '',
    providerId: node.spec?.providerID,
    taints: node.spec?.taints ?? [],
    conditionTypes: (node.status?.conditions ?? []).map((c) => c.type),
    ready: ready === 'True' || ready === 'False' || ready === 'Unknown' ? ready : undefined,
    createdAt: Date.parse(node.metadata?.creationTimestamp ?? '') || Date.now(),
  };
}

/** Provider IDs compare case-insensitively: ARM resource IDs are case-insensitive. */
export function sameProviderId(a: string | undefined, b: string | undefined): boolean {
  return a !== undefined && b !== undefined && a.toLowerCase() === b.toLowerCase();
}
