// registration-race: NodeClaims launch while two DaemonSet-style workloads wait for nodes. Both tolerate
// node.kubernetes.io/not-ready (as DaemonSets do) and the agent's startup taint; one selects a label the
// kubelet sets at boot, the other a NodeClaim label only registration can put on the Node. Without the
// karpenter.sh/unregistered taint the first would land on a Node whose labels and taints are not synced
// yet. Invariant: no pod binds to a Node before registration synced it and removed the taint.
import type { V1DaemonSet } from '@kubernetes/client-node';
import { WellKnown, type Node } from '../../shared/models/index.js';
import { RUN_LABEL } from '../stack/local-stack.js';
import type { Observed } from '../view/recorder.js';
import type { TimelineMark } from '../view/timeline-svg.js';
import {
  deleteNodeClaims,
  createNodeClassAndPool,
  deleteNodePoolAndClass,
  exampleNodePool,
  nodeClaimFor,
  patience,
  waitFor,
  type Invariant,
  type Scenario,
  type ScenarioContext,
  type ScenarioOutcome,
} from './scenario.js';

const NODE_CLAIMS = 4;
/** kubelet may not set labels under node-restriction.kubernetes.io/: only registration can sync it. */
const SYNCED_ONLY_LABEL = 'node-restriction.kubernetes.io/race-workload';

export const registrationRace: Scenario = {
  name: 'registration-race',
  title: 'registration race: no pod binds before the Node is synced',
  description:
    `${NODE_CLAIMS} NodeClaims launch while two DaemonSets that tolerate not-ready wait for their Nodes (one selects a ` +
    'kubelet label present at boot, one a NodeClaim label that only registration syncs). Shows that every pod binds ' +
    'only after registration synced the Node and removed karpenter.sh/unregistered in the same write.',
  usesPods: true,
  play,
};

async function play(context: ScenarioContext): Promise<ScenarioOutcome> {
  const { stack, recorder, runId, namespace } = context;
  const objects = stack.admin.objects;
  const name = `race-${runId}`;
  const nodePool = exampleNodePool(name, runId, name);
  await createNodeClassAndPool(context, nodePool);

  // The workloads exist first, so they are waiting when the first Node appears.
  await context.apps.createNamespacedDaemonSet({
    namespace,
    body: daemonSet('agent', { [RUN_LABEL]: runId }),
  });
  await context.apps.createNamespacedDaemonSet({
    namespace,
    body: daemonSet('workload', { [SYNCED_ONLY_LABEL]: runId }),
  });
  context.note(
    `DaemonSets ${namespace}/agent (selects ${RUN_LABEL}, set by kubelet at boot) and ${namespace}/workload (selects ${SYNCED_ONLY_LABEL}, synced by registration) are waiting`,
  );

  const names = Array.from({ length: NODE_CLAIMS }, (_, index) => `${name}-${index + 1}`);
  const started = Date.now();
  await Promise.all(
    names.map((claimName) =>
      objects.nodeClaims.create(nodeClaimFor(nodePool, claimName, { [SYNCED_ONLY_LABEL]: runId })),
    ),
  );
  context.note(`created ${NODE_CLAIMS} NodeClaims; watching every Node and Pod version`);

  const nodeNames = await waitFor(context, 'every NodeClaim to be Initialized', patience(stack), () => {
    const claims = names.map((claimName) => recorder.nodeClaims.get(claimName));
    const initialized = claims.every((claim) =>
      claim?.status?.conditions?.some((c) => c.type === 'Initialized' && c.status === 'True'),
    );
    return initialized ? claims.map((claim) => claim?.status?.nodeName ?? '') : undefined;
  });
  context.note('every NodeClaim is Initialized; waiting for both DaemonSets to run on every Node');
  await waitFor(context, 'both workloads bound on every Node', patience(stack, 2), () => {
    const bound = [...recorder.pods.values()].filter(
      (pod) => pod.spec?.nodeName && nodeNames.includes(pod.spec.nodeName),
    );
    return bound.length >= 2 * nodeNames.length ? true : undefined;
  });
  const makespanMs = Date.now() - started;

  const binds = podBinds(recorder.history.pods);
  const checks = binds.map((bind) => ({
    bind,
    node: nodeVersionBefore(recorder.history.nodes, bind.nodeName, bind.resourceVersion),
  }));
  const early = checks.filter(({ node }) => !node || !isSynced(node, runId));
  const claimOfNode = new Map(
    names.map(
      (claimName) => [recorder.nodeClaims.get(claimName)?.status?.nodeName ?? '', claimName] as const,
    ),
  );
  const marks: TimelineMark[] = binds.map((bind) => ({
    row: claimOfNode.get(bind.nodeName) ?? bind.nodeName,
    at: bind.at,
    label: `pod ${bind.pod} bound to ${bind.nodeName}`,
    kind: 'bind',
  }));

  const perNode = nodeNames.map((nodeName) => {
    const versions = recorder.history.nodes.filter((o) => o.object.metadata.name === nodeName);
    const createdAt = versions[0]?.at ?? 0;
    const registeredAt = versions.find((o) => isSynced(o.object, runId))?.at ?? 0;
    const firstBind = Math.min(...binds.filter((b) => b.nodeName === nodeName).map((b) => b.at));
    return { nodeName, createdAt, registeredAt, firstBind };
  });
  const invariants: Invariant[] = [
    {
      name: 'no pod binds before its Node is registered (labels synced, karpenter.sh/unregistered removed)',
      holds: early.length === 0 && binds.length >= 2 * NODE_CLAIMS,
      detail:
        early.length === 0
          ? `${binds.length} binds, each after the Node version that registration wrote (compared by resourceVersion)`
          : `early binds: ${early.map(({ bind }) => `${bind.pod}→${bind.nodeName}`).join(', ')}`,
    },
    {
      name: 'every Node registered with the karpenter.sh/unregistered taint',
      holds: nodeNames.every((nodeName) =>
        recorder.history.nodes
          .find((o) => o.object.metadata.name === nodeName)
          ?.object.spec.taints?.some((t) => t.key === WellKnown.unregisteredTaintKey),
      ),
      detail: 'the first version of every Node, as the simulated kubelet created it, carries the taint',
    },
  ];
  const summary = [
    `NodeClaims: ${NODE_CLAIMS}, workload pods bound: ${binds.length}, makespan ${(makespanMs / 1000).toFixed(1)} s`,
    'per Node: Node created → registered (synced + untainted) → first pod bound',
    ...perNode.map(
      (n) =>
        `  ${n.nodeName}: registered +${((n.registeredAt - n.createdAt) / 1000).toFixed(2)} s, first bind +${((n.firstBind - n.createdAt) / 1000).toFixed(2)} s after the Node appeared`,
    ),
  ];

  await deleteNodeClaims(context, names, patience(stack));
  await deleteNodePoolAndClass(context, nodePool);
  return { invariants, summary, marks, figures: { makespanMs, binds: binds.length } };
}

function daemonSet(name: string, nodeSelector: Record<string, string>): V1DaemonSet {
  return {
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          nodeSelector,
          // What DaemonSets usually tolerate: a not-ready Node, and the network agent's startup taint.
          tolerations: [
            { key: 'node.kubernetes.io/not-ready', operator: 'Exists' },
            { key: 'node.cilium.io/agent-not-ready', operator: 'Exists' },
          ],
          containers: [{ name, image: 'registry.k8s.io/pause:3.10' }],
        },
      },
    },
  };
}

interface PodBind {
  pod: string;
  nodeName: string;
  at: number;
  resourceVersion: number;
}

/** The first version of each pod that names a Node: the scheduler's binding. */
export function podBinds(
  history: readonly Observed<{
    metadata: { name: string; resourceVersion?: string };
    spec?: { nodeName?: string };
  }>[],
): PodBind[] {
  const seen = new Set<string>();
  const binds: PodBind[] = [];
  for (const observation of history) {
    const nodeName = observation.object.spec?.nodeName;
    const pod = observation.object.metadata.name;
    if (!nodeName || seen.has(pod)) continue;
    seen.add(pod);
    binds.push({
      pod,
      nodeName,
      at: observation.at,
      resourceVersion: Number(observation.object.metadata.resourceVersion),
    });
  }
  return binds;
}

/**
 * The Node as it was when the pod was bound: its last version written before the binding. Every write to
 * one kube-apiserver's etcd gets a larger resourceVersion, so versions of different objects compare.
 */
export function nodeVersionBefore(
  history: readonly Observed<Node>[],
  nodeName: string,
  resourceVersion: number,
): Node | undefined {
  let found: Node | undefined;
  for (const observation of history) {
    if (observation.object.metadata.name !== nodeName) continue;
    if (Number(observation.object.metadata.resourceVersion) < resourceVersion) found = observation.object;
  }
  return found;
}

function isSynced(node: Node, runId: string): boolean {
  return (
    node.metadata.labels?.[WellKnown.registeredLabel] === 'true' &&
    node.metadata.labels[SYNCED_ONLY_LABEL] === runId &&
    !(node.spec.taints ?? []).some((t) => t.key === WellKnown.unregisteredTaintKey)
  );
}
