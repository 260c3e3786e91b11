// One disruption method's view of one NodePool in one sweep (a MethodPass) over the in-memory fakes,
// built as the disruption step builds it, and the initialized NodeClaims and Ready Nodes the methods
// decide about: for unit tests of each method's computeCommands on its own, as Karpenter tests each
// disruption method apart from the orchestration that carries its commands out.
import type { Condition } from '../../shared/models/index.js';
import type { NodeClaim, NodePool } from '../../shared/models/karpenter.js';
import { ConditionTypes, WellKnown } from '../../shared/models/karpenter.js';
import type { Node } from '../../shared/models/kube.js';
import type { MethodPass } from '../../shared/lifecycle/disruption/methods/method.js';
import { nodeClassRef } from './fixtures.js';
import { FAKE_NOW, fakeSweepContext, type FakeLifecycle, type FakeOrchestrations } from './fake-lifecycle.js';

export const HOUR_AGO = new Date(FAKE_NOW.getTime() - 3_600_000).toISOString();

export const providerIdOf = (name: string): string =>
  `azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/aks-${name}`;

/** A NodeClaim of `nodePool`, launched and Initialized an hour ago, with its Node `aks-<name>`. */
export function initializedNodeClaim(
  name: string,
  nodePool: NodePool,
  options: { conditions?: Condition[]; creationTimestamp?: string; spec?: Partial<NodeClaim['spec']> } = {},
): NodeClaim {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name,
      uid: `uid-${name}`,
      labels: { [WellKnown.nodePoolLabel]: nodePool.metadata.name },
      finalizers: [WellKnown.terminationFinalizer],
      creationTimestamp: options.creationTimestamp ?? HOUR_AGO,
    },
    spec: { nodeClassRef: nodeClassRef('default'), requirements: [], ...options.spec },
    status: {
      providerID: providerIdOf(name),
      nodeName: `aks-${name}`,
      conditions: [
        {
          type: ConditionTypes.initialized,
          status: 'True',
          reason: 'Initialized',
          message: '',
          lastTransitionTime: HOUR_AGO,
        },
        ...(options.conditions ?? []),
      ],
    },
  };
}

/** The NodePool `general` (AKSNodeClass `default`, nothing to consolidate) with one budget of `nodes`. */
export function poolWithBudget(nodes: string): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'general', uid: 'pool-uid' },
    spec: {
      template: { spec: { nodeClassRef: nodeClassRef('default'), requirements: [] } },
      disruption: { consolidateAfter: 'Never', budgets: [{ nodes }] },
    },
    status: { conditions: [] },
  };
}

/** `nodeClaim` with a DisruptionReason=True mark for `reason`, made at `markedAt`. */
export function markedForDisruption(nodeClaim: NodeClaim, reason: string, markedAt: string): NodeClaim {
  const mark: Condition = {
    type: ConditionTypes.disruptionReason,
    status: 'True',
    reason,
    message: reason.toLowerCase(),
    lastTransitionTime: markedAt,
  };
  return {
    ...nodeClaim,
    status: { ...nodeClaim.status, conditions: [...(nodeClaim.status?.conditions ?? []), mark] },
  };
}

/** An initialized NodeClaim of `nodePool` marked Drifted=True (its NodeClass changed) `sinceMinutes` ago. */
export function driftedNodeClaim(name: string, nodePool: NodePool, sinceMinutes = 30): NodeClaim {
  return initializedNodeClaim(name, nodePool, {
    conditions: [
      {
        type: ConditionTypes.drifted,
        status: 'True',
        reason: 'NodeClassDrifted',
        message: 'imageFamily',
        lastTransitionTime: new Date(FAKE_NOW.getTime() - sinceMinutes * 60_000).toISOString(),
      },
    ],
  });
}

/** The NodeClaim's Node, Ready (or with the Ready condition given) since an hour ago. */
export function nodeOf(
  nodeClaim: NodeClaim,
  options: { ready?: 'True' | 'False' | 'Unknown'; labels?: Record<string, string> } = {},
): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: nodeClaim.status?.nodeName ?? `aks-${nodeClaim.metadata.name}`,
      uid: `node-${nodeClaim.metadata.name}`,
      labels: { ...nodeClaim.metadata.labels, ...options.labels },
    },
    spec: { providerID: nodeClaim.status?.providerID ?? providerIdOf(nodeClaim.metadata.name) },
    status: {
      allocatable: { cpu: '3860m', memory: '12Gi', pods: '110' },
      conditions: [{ type: 'Ready', status: options.ready ?? 'True', lastTransitionTime: HOUR_AGO }],
    },
  };
}

/** The NodeClaims a pass decides about: given with their Nodes (pairs), or alone with Ready Nodes. */
export type PassNodes =
  { nodeClaims: NodeClaim[]; nodes?: Node[] } | { pairs: readonly { nodeClaim: NodeClaim; node: Node }[] };

/**
 * The pass a method gets for `nodePool`, with work shared between methods computed once; `allowed`
 * (the budget left) is unlimited when not given.
 */
export function methodPass(
  fake: FakeLifecycle,
  orchestrations: FakeOrchestrations,
  state: { nodePool: NodePool; allowed?: number | undefined } & PassNodes,
): MethodPass {
  const nodeClaims = 'pairs' in state ? state.pairs.map((p) => p.nodeClaim) : state.nodeClaims;
  const nodes =
    'pairs' in state ? state.pairs.map((p) => p.node) : (state.nodes ?? nodeClaims.map((c) => nodeOf(c)));
  const sweep = fakeSweepContext(fake, orchestrations, {
    nodeClaims,
    nodes,
    nodePools: [state.nodePool],
  });
  const shared = new Map<string, Promise<unknown>>();
  return {
    sweep,
    nodePool: state.nodePool,
    nodeClaims,
    nodesFor: (nodeClaim) => sweep.view.nodesFor(nodeClaim),
    now: fake.deps.now(),
    allowed: state.allowed ?? Number.POSITIVE_INFINITY,
    shared<T>(key: string, compute: () => Promise<T>): Promise<T> {
      let work = shared.get(key) as Promise<T> | undefined;
      if (!work) {
        work = compute();
        shared.set(key, work);
      }
      return work;
    },
  };
}
