// Small hand-made day histories for the invariant checkers' tests: NodeClaims, Nodes and pods at chosen
// times, as the recorder would have seen them.
import type { DayHistory, DayPod, Version } from '../../../local/scenarios/day/invariants/history.js';
import type { Condition, Node, NodeClaim } from '../../../shared/models/index.js';

export function history(parts: Partial<DayHistory> = {}): DayHistory {
  return {
    nodeClaims: [],
    nodes: [],
    pods: [],
    armRequests: [],
    vmFailures: [],
    poolBudgets: [],
    poolChanges: [],
    pools: [{ name: 'general', consolidateAfterMs: 10_000 }],
    pdbs: [],
    pdbStatuses: [],
    replicas: [],
    doNotDisruptSets: [],
    daemonSet: 'agent',
    disturbances: [],
    brokenNodes: [],
    apiServer: [],
    injectedThrottles: 0,
    ...parts,
  };
}

export interface ClaimShape {
  pool?: string;
  initialized?: boolean;
  reason?: string;
  /** The DisruptionReason condition's message (repair names its policy there). */
  message?: string;
  deleting?: boolean;
  nodeName?: string;
  replacementOf?: string;
  launchedFalse?: string;
  requirements?: NodeClaim['spec']['requirements'];
}

export function claim(
  at: number,
  name: string,
  shape: ClaimShape = {},
  type: Version<NodeClaim>['type'] = 'MODIFIED',
): Version<NodeClaim> {
  const conditions: Condition[] = [];
  const condition = (type: string, status: Condition['status'], reason: string, message = ''): Condition => ({
    type,
    status,
    reason,
    message,
    lastTransitionTime: new Date(at).toISOString(),
  });
  if (shape.initialized) conditions.push(condition('Initialized', 'True', 'Initialized'));
  if (shape.reason) conditions.push(condition('DisruptionReason', 'True', shape.reason, shape.message));
  if (shape.launchedFalse) conditions.push(condition('Launched', 'False', shape.launchedFalse));
  return {
    at,
    type,
    object: {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: {
        name,
        labels: { 'karpenter.sh/nodepool': shape.pool ?? 'general' },
        ...(shape.replacementOf
          ? { annotations: { 'karpenter.azure.com/replacement-of': shape.replacementOf } }
          : {}),
        ...(shape.deleting ? { deletionTimestamp: new Date(at).toISOString() } : {}),
      },
      spec: {
        nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'general' },
        requirements: shape.requirements ?? [
          { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
        ],
      },
      status: { conditions, ...(shape.nodeName ? { nodeName: shape.nodeName } : {}) },
    },
  };
}

export function node(
  at: number,
  name: string,
  disrupted = false,
  type: Version<Node>['type'] = 'MODIFIED',
): Version<Node> {
  return {
    at,
    type,
    object: {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name },
      spec: { taints: disrupted ? [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }] : [] },
    } as Node,
  };
}

export interface PodShape {
  nodeName?: string;
  phase?: string;
  ready?: boolean;
  /** Not Ready since this time (ms): the Ready condition False with that lastTransitionTime. */
  notReadySince?: number;
  deleting?: boolean;
  /** Deleting through the Eviction API, which marks the pod DisruptionTarget (EvictionByEvictionAPI) first. */
  evicted?: boolean;
  /** The grace period the delete was given: deletionTimestamp is `at` plus this. */
  graceSeconds?: number;
}

export function pod(
  at: number,
  name: string,
  app: string,
  shape: PodShape = {},
  type: Version<DayPod>['type'] = 'MODIFIED',
): Version<DayPod> {
  return {
    at,
    type,
    object: {
      metadata: {
        name,
        labels: { app },
        ...(shape.deleting || shape.evicted
          ? {
              deletionTimestamp: new Date(at + (shape.graceSeconds ?? 0) * 1000).toISOString(),
              ...(shape.graceSeconds !== undefined ? { deletionGracePeriodSeconds: shape.graceSeconds } : {}),
            }
          : {}),
      },
      spec: shape.nodeName ? { nodeName: shape.nodeName } : {},
      status: {
        phase: shape.phase ?? 'Pending',
        conditions: [
          ...(shape.ready
            ? [{ type: 'Ready', status: 'True' }]
            : shape.notReadySince !== undefined
              ? [
                  {
                    type: 'Ready',
                    status: 'False',
                    lastTransitionTime: new Date(shape.notReadySince).toISOString(),
                  },
                ]
              : []),
          ...(shape.evicted
            ? [{ type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI' }]
            : []),
        ],
      },
    },
  };
}

/** A Running, Ready pod on a node. */
export const running = (at: number, name: string, app: string, nodeName: string) =>
  pod(at, name, app, { nodeName, phase: 'Running', ready: true });
