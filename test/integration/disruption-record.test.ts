// One disruption pass of a NodePool against the real API server, as the Function App's shipped identity,
// and the record it leaves: of four nodes, one is kept by karpenter.sh/do-not-disrupt, one by a real
// PodDisruptionBudget (its status computed by the disruption controller), one by the Underutilized budget
// of 1, and one is consolidated (deleted, its pod moving to another node). The record names each
// candidate's cause and the command's $/h before and after and the pod it moves; the blocked counts are on
// the gauge and in the NodePool's status (which the CRD keeps). Workflows are not run: the step starts
// them on an in-memory orchestration client, and the NodePool's class does not exist, so consolidation
// may only delete and no other file's host launches for it.
import { randomUUID } from 'node:crypto';
import { CoreV1Api, PatchStrategy, PolicyV1Api, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { DisruptionRecord } from '../../shared/decisions/explain/decision-record.js';
import { kubeClientsFromKubeconfig } from '../../shared/kube/client.js';
import { karpenterObjects, type KarpenterObjects } from '../../shared/kube/custom-objects.js';
import { SweepView } from '../../shared/lifecycle/cluster/snapshot.js';
import { disruptionStepOf } from '../../shared/lifecycle/disruption/disruption-step.js';
import { disruptionMethods } from '../../shared/lifecycle/disruption/methods/methods.js';
import { createLeftoverMemory } from '../../shared/lifecycle/sweep-step/leftover-memory.js';
import type { SweepContext } from '../../shared/lifecycle/sweep-step/sweep-step.js';
import type { LifecycleDependencies } from '../../shared/lifecycle/dependencies.js';
import { WellKnown, type NodePool } from '../../shared/models/karpenter.js';
import type { Metrics } from '../../shared/observability/metrics.js';
import { silentLogger } from '../../shared/observability/logger.js';
import { eventually } from '../support/launch-stack.js';
import { FakeOrchestrations } from '../support/fake-lifecycle.js';
import {
  createLaunchedNodeClaim,
  kubeletNode,
  providerIdOf,
  reportNodeReady,
  testDependencies,
} from './registration-support.js';

const suffix = randomUUID().slice(0, 6);
const poolName = `record-${suffix}`;
const namespace = 'default';
const names = ['a', 'b', 'c', 'd'].map((n) => `${poolName}-${n}`) as [string, string, string, string];
const [keptByAnnotation, keptByPdb, consolidatedFirst, keptByBudget] = names;
const nodeNameOf = (claim: string) => `aks-${claim}`;
const podOf = (claim: string) => `pod-${claim}`;
const pdbLabels = { app: `record-pdb-${suffix}` };
const HOUR_AGO = new Date(Date.now() - 3_600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');

let deps: LifecycleDependencies;
let metrics: Metrics;
let admin: KarpenterObjects;
let core: CoreV1Api;
let policy: PolicyV1Api;

async function boundPod(claim: string, labels: Record<string, string> = {}): Promise<void> {
  const name = podOf(claim);
  await core.createNamespacedPod({
    namespace,
    body: {
      metadata: { name, labels },
      spec: {
        nodeName: nodeNameOf(claim),
        containers: [
          {
            name: 'app',
            image: 'registry.k8s.io/pause:3.10',
            resources: { requests: { cpu: '100m', memory: '128Mi' } },
          },
        ],
        tolerations: [
          { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
          { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
        ],
      },
    },
  });
  // What its kubelet would report: Running and Ready, so the PDB counts it.
  const now = new Date();
  const ready = { status: 'True', lastTransitionTime: now };
  await core.replaceNamespacedPodStatus({
    name,
    namespace,
    body: {
      ...(await core.readNamespacedPod({ name, namespace })),
      status: {
        phase: 'Running',
        startTime: now,
        conditions: [
          { type: 'PodScheduled', ...ready },
          { type: 'Initialized', ...ready },
          { type: 'ContainersReady', ...ready },
          { type: 'Ready', ...ready },
        ],
      },
    } satisfies V1Pod,
  });
}

/** An initialized NodeClaim of the pool (an hour ago) and its Ready Node, a D2s_v5 on demand. */
async function poolNode(claim: string, annotations?: Record<string, string>): Promise<void> {
  const providerID = providerIdOf(claim);
  await createLaunchedNodeClaim(deps, {
    name: claim,
    labels: { [WellKnown.nodePoolLabel]: poolName },
    launchedAt: new Date(HOUR_AGO),
  });
  const nodeName = nodeNameOf(claim);
  const condition = (type: string) => ({
    type,
    status: 'True',
    reason: type,
    message: '',
    lastTransitionTime: HOUR_AGO,
  });
  await admin.nodeClaims.mergePatchStatus(claim, {
    status: {
      providerID,
      nodeName,
      capacity: { cpu: '2', memory: '8Gi', pods: '110' },
      conditions: ['Launched', 'Registered', 'Initialized'].map(condition),
    },
  });
  const node = kubeletNode({
    name: nodeName,
    providerID,
    labels: {
      [WellKnown.nodePoolLabel]: poolName,
      [WellKnown.instanceTypeLabel]: 'Standard_D2s_v5',
      [WellKnown.capacityTypeLabel]: 'on-demand',
      'kubernetes.io/arch': 'amd64',
      'kubernetes.io/os': 'linux',
    },
  });
  if (annotations) node.metadata = { ...node.metadata, annotations };
  await core.createNode({ body: node });
  await reportNodeReady(core, nodeName, { cpu: '2', memory: '8Gi', pods: '110' });
}

async function sweepContext(orchestrations: FakeOrchestrations): Promise<SweepContext> {
  const [nodePool, nodeClaims, nodes] = await Promise.all([
    deps.objects.nodePools.get(poolName),
    deps.objects.nodeClaims.list({ labelSelector: `${WellKnown.nodePoolLabel}=${poolName}` }),
    deps.nodes.listLabelled(`${WellKnown.nodePoolLabel}=${poolName}`),
  ]);
  return {
    deps,
    view: new SweepView({
      readAt: deps.now(),
      nodeClaims,
      nodes,
      nodePools: nodePool ? [nodePool] : [],
      nodeClasses: [],
    }),
    orchestrations,
    log: silentLogger,
    memory: { leftovers: createLeftoverMemory() },
    stopping: () => false,
  };
}

beforeAll(async () => {
  const clients = kubeClientsFromKubeconfig(inject('kubeconfigPath'));
  admin = karpenterObjects(() => Promise.resolve(clients));
  core = clients.config.makeApiClient(CoreV1Api);
  policy = clients.config.makeApiClient(PolicyV1Api);
  const made = testDependencies({
    kubeconfigPath: inject('kubeconfigPath'),
    appKubeconfigPath: inject('functionsKubeconfigPath'),
    caCertPath: inject('devCaCertPath'),
  });
  metrics = made.metrics;
  // No ARM here: no offering to launch (the class does not exist either), so consolidation only deletes.
  deps = {
    ...made.deps,
    cloud: {
      ...made.deps.cloud,
      offerings: () => Promise.resolve([]),
      unavailableOfferings: () => Promise.resolve([]),
      nodeOverlays: () => Promise.resolve(undefined),
    },
  };
  const pool: NodePool = {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: poolName },
    spec: {
      disruption: {
        consolidationPolicy: 'WhenEmptyOrUnderutilized',
        consolidateAfter: '0s',
        budgets: [{ nodes: '1' }],
      },
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: `missing-${suffix}` },
          requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }],
        },
      },
    },
  };
  await admin.nodePools.create(pool);
  await poolNode(keptByAnnotation, { [WellKnown.doNotDisruptAnnotation]: 'true' });
  await poolNode(keptByPdb);
  await poolNode(consolidatedFirst);
  await poolNode(keptByBudget);
  await boundPod(keptByPdb, pdbLabels);
  await boundPod(consolidatedFirst);
  await boundPod(keptByBudget);
  await policy.createNamespacedPodDisruptionBudget({
    namespace,
    body: {
      metadata: { name: `record-${suffix}` },
      spec: { minAvailable: 1, selector: { matchLabels: pdbLabels } },
    },
  });
  await eventually(async () => {
    const pdb = await policy.readNamespacedPodDisruptionBudget({ name: `record-${suffix}`, namespace });
    return pdb.status?.observedGeneration === pdb.metadata?.generation &&
      pdb.status?.currentHealthy === 1 &&
      pdb.status.disruptionsAllowed === 0
      ? true
      : undefined;
  }, 'PDB status computed by the disruption controller');
});

afterAll(async () => {
  await policy
    ?.deleteNamespacedPodDisruptionBudget({ name: `record-${suffix}`, namespace })
    .catch(() => undefined);
  for (const claim of names) {
    await core
      ?.deleteNamespacedPod({ name: podOf(claim), namespace, gracePeriodSeconds: 0 })
      .catch(() => undefined);
    await core?.deleteNode({ name: nodeNameOf(claim) }).catch(() => undefined);
    await admin?.nodeClaims.mergePatch(claim, { metadata: { finalizers: null } }).catch(() => undefined);
    await admin?.nodeClaims.delete(claim).catch(() => undefined);
  }
  await admin?.nodePools.delete(poolName).catch(() => undefined);
});

describe('a disruption pass leaves a decision record', () => {
  it('names why each node is kept, what the command saves and moves, and counts the kept per cause', async () => {
    const records: DisruptionRecord[] = [];
    const orchestrations = new FakeOrchestrations();
    const step = disruptionStepOf(disruptionMethods, { onRecord: (r) => void records.push(r) });
    // These Nodes have no kubelet: the setup above may outlast the node monitor's grace period on a busy
    // machine (the PDB's status waits for the disruption controller), after which the node lifecycle
    // controller marks them Unknown and no candidate is Ready. Report each Ready again, as its kubelet
    // would have all along, so the pass sees the cluster the test built.
    await Promise.all(
      names.map((claim) =>
        reportNodeReady(core, nodeNameOf(claim), { cpu: '2', memory: '8Gi', pods: '110' }),
      ),
    );
    // The node lifecycle controller takes its not-ready and unreachable taints off a Node only when it
    // next looks (every few seconds), after the Ready above. A pass that reads a Node still tainted sees
    // it not Ready, and a pod it cannot move there: which of the two equal nodes the pass consolidated
    // then depended on which taint went first (seen in CI). Wait until none is left.
    await eventually(async () => {
      const tainted = (
        await Promise.all(names.map((claim) => core.readNode({ name: nodeNameOf(claim) })))
      ).filter((node) => (node.spec?.taints ?? []).some((t) => t.key.startsWith('node.kubernetes.io/')));
      return tainted.length === 0 ? true : undefined;
    }, "the node lifecycle controller's taints gone from every Node");

    const report = await step.run(await sweepContext(orchestrations));

    expect(report).toMatchObject({ examined: 1, acted: 1, failed: 0 });
    expect(records).toHaveLength(1);
    const record = records[0] as DisruptionRecord;
    expect(record).toMatchObject({ kind: 'disruption', nodePool: poolName });
    const byClaim = new Map(record.candidates.map((c) => [c.nodeClaim, c]));
    expect(byClaim.get(keptByAnnotation)).toMatchObject({
      node: nodeNameOf(keptByAnnotation),
      decision: 'keep',
      cause: 'DoNotDisrupt',
      message: 'Disruption is blocked through the "karpenter.sh/do-not-disrupt" annotation',
    });
    expect(byClaim.get(keptByPdb)).toMatchObject({ decision: 'keep', cause: 'PDB' });
    expect(byClaim.get(keptByPdb)?.message).toContain(`PodDisruptionBudget=${namespace}/record-${suffix}`);
    expect(byClaim.get(keptByBudget)).toMatchObject({
      method: 'single-node-consolidation',
      decision: 'keep',
      cause: 'Budget',
      message: 'No allowed disruptions for disruption reason Underutilized due to blocking budget',
    });
    expect(byClaim.get(consolidatedFirst)).toMatchObject({
      method: 'single-node-consolidation',
      decision: 'disrupt',
      cause: 'Disrupted',
    });
    expect(record.commands).toHaveLength(1);
    const command = record.commands[0];
    expect(command).toMatchObject({
      method: 'single-node-consolidation',
      reason: 'Underutilized',
      candidates: [consolidatedFirst],
      replacements: [],
      podsMoved: [`${namespace}/${podOf(consolidatedFirst)}`],
      pricePerHourAfter: 0,
    });
    expect(command?.pricePerHourBefore).toBeGreaterThan(command?.pricePerHourAfter ?? 0);
    expect(orchestrations.started).toHaveLength(1);

    const gauge = (cause: string) =>
      metrics.total('karpenter_nodepools_disruption_blocked_candidates', { nodepool: poolName, cause });
    expect([gauge('Budget'), gauge('DoNotDisrupt'), gauge('PDB'), gauge('Disrupted')]).toEqual([1, 1, 1, 0]);
    const stored = await admin.nodePools.get(poolName);
    expect(stored?.status?.disruptionBlocked).toEqual([
      { cause: 'Budget', count: 1 },
      { cause: 'DoNotDisrupt', count: 1 },
      { cause: 'PDB', count: 1 },
    ]);

    // Once the do-not-disrupt annotation is gone, the next pass no longer counts that cause (the node,
    // empty, is the next command's): the gauge reads 0 for it and the status drops it.
    await core.patchNode(
      {
        name: nodeNameOf(keptByAnnotation),
        body: { metadata: { annotations: { [WellKnown.doNotDisruptAnnotation]: null } } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await step.run(await sweepContext(new FakeOrchestrations()));
    expect(gauge('DoNotDisrupt')).toBe(0);
    const after = await admin.nodePools.get(poolName);
    expect(after?.status?.disruptionBlocked?.map((b) => b.cause)).not.toContain('DoNotDisrupt');
  });
});
