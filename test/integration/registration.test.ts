// Registration and initialization against the real kube-apiserver, with the real kube-scheduler and
// kube-controller-manager of the shared control plane. NodeClaims are created as launch leaves them
// (providerID and Launched=True written through the status subresource) and Nodes as a kubelet registers
// them; everything else is the production code path.
import {
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  Watch,
  type V1Pod,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { findCondition } from '../../shared/decisions/conditions.js';
import { nodeSatisfiesRegistrationInvariant } from '../../shared/decisions/registration.js';
import { toCloudEvent } from '../../shared/events/cloud-event.js';
import { statusCodeOf } from '../../shared/kube/errors.js';
import { getNode } from '../../shared/kube/nodes.js';
import type { LifecycleDependencies } from '../../shared/lifecycle/dependencies.js';
import { handleObjectEvent } from '../../shared/lifecycle/bridge-events/object-events.js';
import { reconcileRegistration } from '../../shared/lifecycle/node-join/registration.js';
import { initializationStep } from '../../shared/lifecycle/sweep/steps/initialization.js';
import { registrationStep } from '../../shared/lifecycle/sweep/steps/registration.js';
import { runSweepSteps } from '../../shared/lifecycle/sweep/sweep.js';
import type { NodeClaim } from '../../shared/models/index.js';
import type { Node, Taint } from '../../shared/models/kube.js';
import type { Metrics } from '../../shared/observability/metrics.js';
import { silentLogger } from '../../shared/observability/logger.js';
import {
  createLaunchedNodeClaim,
  deleteNodesAndNodeClaims,
  kubeletNode,
  orchestrationsMustNotBeUsed,
  providerIdOf,
  reportNodeReady,
  testDependencies,
  uniqueSuffix,
  unregisteredTaint,
  vmNameOf,
} from './registration-support.js';
import { pollUntilDefined } from '../support/poll.js';

const suffix = uniqueSuffix();
const testLabel = 'test.example/registration-run';
const selector = `${testLabel}=${suffix}`;
const dedicated: Taint = { key: 'example.com/dedicated', value: 'infra', effect: 'NoSchedule' };
const agentNotReady: Taint = { key: 'example.com/agent-not-ready', effect: 'NoSchedule' };

let deps: LifecycleDependencies;
let metrics: Metrics;
let core: CoreV1Api;
let kubeConfig: KubeConfig;
const nodeClaims: string[] = [];
const nodes: string[] = [];
const pods: string[] = [];

beforeAll(() => {
  ({ deps, metrics, core } = testDependencies({
    kubeconfigPath: inject('kubeconfigPath'),
    appKubeconfigPath: inject('functionsKubeconfigPath'),
    caCertPath: inject('devCaCertPath'),
  }));
  kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(inject('kubeconfigPath'));
});

afterAll(async () => {
  for (const name of pods) {
    await core
      .deleteNamespacedPod({ name, namespace: 'default', gracePeriodSeconds: 0 })
      .catch(() => undefined);
  }
  await deleteNodesAndNodeClaims({ core, deps, nodes, nodeClaims });
});

function claimLabels(name: string, pool: string): Record<string, string> {
  return { [testLabel]: suffix, 'karpenter.sh/nodepool': pool, 'test.example/claim': name };
}

async function launchedClaim(
  name: string,
  extra: { taints?: Taint[]; startupTaints?: Taint[]; pool?: string } = {},
): Promise<NodeClaim> {
  nodeClaims.push(name);
  return createLaunchedNodeClaim(deps, {
    name,
    labels: claimLabels(name, extra.pool ?? `pool-${suffix}`),
    annotations: { 'test.example/synced': 'yes' },
    ...(extra.taints ? { taints: extra.taints } : {}),
    ...(extra.startupTaints ? { startupTaints: extra.startupTaints } : {}),
  });
}

async function joinNode(
  nodeClaimName: string,
  taints: Taint[],
  labels: Record<string, string> = {},
  nodeName = vmNameOf(nodeClaimName),
): Promise<string> {
  nodes.push(nodeName);
  await core.createNode({
    body: kubeletNode({ name: nodeName, providerID: providerIdOf(nodeClaimName), labels, taints }),
  });
  return nodeName;
}

/** One scoped sweep; returns how many objects each step wrote or acted on. */
async function sweep(): Promise<Record<string, number>> {
  const result = await runSweepSteps(
    deps,
    { orchestrations: orchestrationsMustNotBeUsed, log: silentLogger },
    {
      steps: [registrationStep, initializationStep],
      nodeClaimSelector: selector,
      memory: { leftovers: { previous: undefined, pending: new Map() } },
    },
  );
  if (result.status === 'skipped') throw new Error(result.reason);
  for (const report of result.steps) expect(report.failed, report.step).toBe(0);
  return Object.fromEntries(result.steps.map((report) => [report.step, report.acted]));
}

async function nodeClaim(name: string): Promise<NodeClaim> {
  const found = await deps.objects.nodeClaims.get(name);
  if (!found) throw new Error(`NodeClaim ${name} is gone`);
  return found;
}

/** Taint keys minus the node lifecycle controller's own (node.kubernetes.io/not-ready and friends). */
function taintKeys(node: Node | undefined): string[] {
  return (node?.spec.taints ?? [])
    .map((t) => t.key)
    .filter((key) => !key.startsWith('node.kubernetes.io/'))
    .sort();
}

function conditionOf(claim: NodeClaim, type: string) {
  return findCondition(claim.status?.conditions, type);
}

describe('registration', () => {
  it('never exposes the Node without the unregistered taint before it has the NodeClaim labels and taints; the scheduler binds a not-ready-tolerating pod only after registration', async () => {
    const name = `reg-race-${suffix}`;
    const claim = await launchedClaim(name, { taints: [dedicated], startupTaints: [agentNotReady] });
    const nodeName = vmNameOf(name);

    const observed: Node[] = [];
    const watch = await new Watch(kubeConfig).watch(
      '/api/v1/nodes',
      { fieldSelector: `metadata.name=${nodeName}` },
      (_phase, object: Node) => observed.push(object),
      () => undefined,
    );
    try {
      // A DaemonSet-style pod: it tolerates not-ready/unreachable and the NodeClaim's own taints, selects
      // on a NodeClaim label the kubelet sets itself, and does NOT tolerate karpenter.sh/unregistered.
      const podName = `ds-like-${suffix}`;
      pods.push(podName);
      const pod: V1Pod = {
        metadata: { name: podName, namespace: 'default' },
        spec: {
          automountServiceAccountToken: false,
          nodeSelector: { 'test.example/claim': name },
          tolerations: [
            { key: 'node.kubernetes.io/not-ready', operator: 'Exists' },
            { key: 'node.kubernetes.io/unreachable', operator: 'Exists' },
            { key: dedicated.key, operator: 'Exists' },
            { key: agentNotReady.key, operator: 'Exists' },
          ],
          containers: [{ name: 'pause', image: 'registry.invalid/pause:3.10' }],
        },
      };
      // The controller-manager creates the namespace's default ServiceAccount shortly after it starts.
      await pollUntilDefined('the default ServiceAccount', () =>
        core.readNamespacedServiceAccount({ name: 'default', namespace: 'default' }).then(
          () => true,
          () => undefined,
        ),
      );
      await core.createNamespacedPod({ namespace: 'default', body: pod });

      // The kubelet joins with the labels it may set and the taints bootstrap told it to register with.
      await joinNode(name, [unregisteredTaint, dedicated, agentNotReady], { 'test.example/claim': name });
      await reportNodeReady(core, nodeName);

      // The scheduler has looked at the pod with the Ready node present and refused it.
      await pollUntilDefined('the scheduler to report the pod unschedulable', async () => {
        const current = await core.readNamespacedPod({ name: podName, namespace: 'default' });
        expect(current.spec?.nodeName ?? '').toBe('');
        const scheduled = current.status?.conditions?.find((c) => c.type === 'PodScheduled');
        return scheduled?.status === 'False' && scheduled.reason === 'Unschedulable' ? true : undefined;
      });
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(
        (await core.readNamespacedPod({ name: podName, namespace: 'default' })).spec?.nodeName ?? '',
      ).toBe('');

      // The bridge's path: a Node event for a Node with the unregistered taint.
      const node = await getNode(core, nodeName);
      await handleObjectEvent(
        deps,
        toCloudEvent(
          {
            kind: 'Node',
            name: nodeName,
            uid: node?.metadata.uid ?? '',
            resourceVersion: node?.metadata.resourceVersion ?? '',
            changeType: 'MODIFIED',
          },
          { id: `node-${suffix}`, source: 'test', time: new Date() },
        ),
        { orchestrations: orchestrationsMustNotBeUsed, invocationId: 'test', log: silentLogger },
      );

      const bound = await pollUntilDefined('the pod to be bound', async () => {
        const current = await core.readNamespacedPod({ name: podName, namespace: 'default' });
        return current.spec?.nodeName || undefined;
      });
      expect(bound).toBe(nodeName);

      const registered = await nodeClaim(name);
      expect(conditionOf(registered, 'Registered')?.status).toBe('True');
      expect(registered.status?.nodeName).toBe(nodeName);
      const synced = await getNode(core, nodeName);
      expect(synced?.metadata.labels).toMatchObject({
        ...claimLabels(name, `pool-${suffix}`),
        'karpenter.sh/registered': 'true',
      });
      expect(synced?.metadata.annotations).toMatchObject({ 'test.example/synced': 'yes' });
      expect(synced?.metadata.finalizers).toContain('karpenter.sh/termination');
      expect(synced?.metadata.ownerReferences).toEqual([
        expect.objectContaining({ kind: 'NodeClaim', name, uid: claim.metadata.uid }),
      ]);
      expect(taintKeys(synced)).toEqual([agentNotReady.key, dedicated.key].sort());
    } finally {
      watch.abort();
    }

    expect(observed.length).toBeGreaterThan(1);
    expect(observed.some((n) => n.spec.taints?.some((t) => t.key === unregisteredTaint.key))).toBe(true);
    expect(observed.some((n) => !n.spec.taints?.some((t) => t.key === unregisteredTaint.key))).toBe(true);
    for (const version of observed) {
      expect(
        nodeSatisfiesRegistrationInvariant(version, claim),
        `resourceVersion ${version.metadata.resourceVersion}`,
      ).toBe(true);
    }
  });

  it('registers a Node that joined without the unregistered taint and records a Warning event', async () => {
    const name = `reg-notaint-${suffix}`;
    const pool = `pool-notaint-${suffix}`;
    await launchedClaim(name, { taints: [dedicated], pool });
    const nodeName = await joinNode(name, []);

    await sweep();

    const registered = await nodeClaim(name);
    expect(conditionOf(registered, 'Registered')).toMatchObject({ status: 'True', reason: 'Registered' });
    expect(registered.status?.nodeName).toBe(nodeName);
    const synced = await getNode(core, nodeName);
    expect(taintKeys(synced)).toEqual([dedicated.key]);
    expect(synced?.spec.taints).toContainEqual(dedicated);
    const events = await core.listNamespacedEvent({
      namespace: 'default',
      fieldSelector: `involvedObject.name=${name}`,
    });
    expect(
      events.items.filter((e) => e.reason === 'UnregisteredTaintMissing' && e.type === 'Warning'),
    ).toHaveLength(1);
    expect(
      metrics.count('operator_nodeclaim_status_condition_transitions_total', {
        type: 'Registered',
        karpenter_sh_nodepool: pool,
      }),
    ).toBe(1);
    expect(
      metrics.count('operator_nodeclaim_status_condition_transition_seconds', {
        type: 'Registered',
        karpenter_sh_nodepool: pool,
      }),
    ).toBe(1);

    // A second pass finds nothing to do: no new write, event or metric. (The Node's resourceVersion is not
    // the measure: the real node lifecycle controller may taint this kubelet-less Node at any moment.)
    const acted = await sweep();
    expect(acted).toEqual({ registration: 0, initialization: 0 });
    expect(
      metrics.count('operator_nodeclaim_status_condition_transitions_total', {
        type: 'Registered',
        karpenter_sh_nodepool: pool,
      }),
    ).toBe(1);
    const eventsAfter = await core.listNamespacedEvent({
      namespace: 'default',
      fieldSelector: `involvedObject.name=${name}`,
    });
    expect(eventsAfter.items.filter((e) => e.reason === 'UnregisteredTaintMissing')).toHaveLength(1);
  });

  it('reports NodeNotFound without a Node and MultipleNodesFound with two', async () => {
    const lonely = `reg-nonode-${suffix}`;
    await launchedClaim(lonely);
    const twin = `reg-twin-${suffix}`;
    await launchedClaim(twin);
    await joinNode(twin, [unregisteredTaint]);
    await joinNode(twin, [unregisteredTaint], {}, `${vmNameOf(twin)}-copy`);

    await sweep();

    expect(conditionOf(await nodeClaim(lonely), 'Registered')).toMatchObject({
      status: 'Unknown',
      reason: 'NodeNotFound',
    });
    const twinClaim = await nodeClaim(twin);
    expect(conditionOf(twinClaim, 'Registered')).toMatchObject({
      status: 'False',
      reason: 'MultipleNodesFound',
    });
    expect(conditionOf(twinClaim, 'Ready')).toMatchObject({ status: 'False', reason: 'MultipleNodesFound' });
    // Neither Node was touched.
    for (const name of [vmNameOf(twin), `${vmNameOf(twin)}-copy`]) {
      const node = await getNode(core, name);
      expect(taintKeys(node)).toEqual([unregisteredTaint.key]);
      expect(node?.metadata.labels?.['karpenter.sh/registered']).toBeUndefined();
    }
  });

  it('re-reads and re-plans on a conflict instead of overwriting a concurrent change to the Node', async () => {
    const name = `reg-conflict-${suffix}`;
    await launchedClaim(name, { taints: [dedicated] });
    const nodeName = await joinNode(name, [unregisteredTaint]);
    const stale = await getNode(core, nodeName);
    if (!stale) throw new Error('node missing');
    // Someone else writes the Node after our read: a label and a taint of their own.
    await core.patchNode(
      {
        name: nodeName,
        body: [
          { op: 'add', path: '/metadata/labels/other.example~1owner', value: 'them' },
          { op: 'add', path: '/spec/taints/-', value: { key: 'other.example/taint', effect: 'NoSchedule' } },
        ],
      },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );

    const result = await reconcileRegistration(deps, await nodeClaim(name), [stale]);

    expect(result.outcome).toBe('registered');
    const synced = await getNode(core, nodeName);
    expect(synced?.metadata.labels?.['other.example/owner']).toBe('them');
    expect(taintKeys(synced)).toEqual(['example.com/dedicated', 'other.example/taint']);
  });
});

describe('initialization', () => {
  it('keeps Initialized=Unknown while a startup taint remains and sets Initialized=True and the label once someone else removes it', async () => {
    const name = `init-${suffix}`;
    const pool = `pool-init-${suffix}`;
    await launchedClaim(name, { startupTaints: [agentNotReady], pool });
    const nodeName = await joinNode(name, [unregisteredTaint, agentNotReady]);
    await reportNodeReady(core, nodeName);

    await sweep();
    const waiting = await nodeClaim(name);
    expect(conditionOf(waiting, 'Registered')?.status).toBe('True');
    expect(conditionOf(waiting, 'Initialized')).toMatchObject({
      status: 'Unknown',
      reason: 'StartupTaintsExist',
    });
    expect(conditionOf(waiting, 'Ready')).toMatchObject({ status: 'Unknown', reason: 'StartupTaintsExist' });

    // The agent the startup taint waited for (a CNI, a device plugin) removes it, the way agents write:
    // guarded by the version it read, and read again when the real node lifecycle controller (which
    // also writes this kubelet-less Node) got there first.
    for (let attempt = 1; ; attempt += 1) {
      const node = await getNode(core, nodeName);
      try {
        await core.patchNode(
          {
            name: nodeName,
            body: [
              { op: 'test', path: '/metadata/resourceVersion', value: node?.metadata.resourceVersion },
              { op: 'replace', path: '/spec/taints', value: [] },
            ],
          },
          setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
        );
        break;
      } catch (error) {
        // A failed JSON Patch `test` answers 422 Invalid.
        if (attempt >= 5 || statusCodeOf(error) !== 422) throw error;
      }
    }

    await sweep();
    const initialized = await nodeClaim(name);
    expect(conditionOf(initialized, 'Initialized')).toMatchObject({ status: 'True', reason: 'Initialized' });
    expect(conditionOf(initialized, 'Ready')?.status).toBe('True');
    expect((await getNode(core, nodeName))?.metadata.labels?.['karpenter.sh/initialized']).toBe('true');
    // The startup taint was not put back by a later registration pass.
    expect(taintKeys(await getNode(core, nodeName))).toEqual([]);
    expect(
      metrics.count('operator_nodeclaim_status_condition_transitions_total', {
        type: 'Initialized',
        karpenter_sh_nodepool: pool,
      }),
    ).toBe(1);
  });
});
