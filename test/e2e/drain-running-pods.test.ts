// A drain of a node whose pods really run: a Deployment's pods are Running and Ready through the kubelet
// simulator on one node, a PodDisruptionBudget with minAvailable guards them, and the node's NodeClaim is
// deleted. A watch sees every version of every pod and counts the available ones (Ready, not terminating)
// after each: the count never drops below minAvailable, and the drain still finishes (NodeClaim, Node and
// VM gone, every replica Running again on the other node), with upstream's Events on the pods and the
// Node. Real control plane (scheduler, ReplicaSet and
// disruption controllers, the Eviction API), ARM emulator through the real SDK, kubelet simulator.
import { randomUUID } from 'node:crypto';
import { AppsV1Api, CoreV1Api, KubeConfig, PolicyV1Api, Watch, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, inject, test, vi } from 'vitest';
import { WellKnown, type NodeClaim, type NodePool } from '../../shared/models/index.js';
import {
  exampleRequirements,
  nodeClass,
  nodeClassRef,
  nodePool as fixtureNodePool,
} from '../support/fixtures.js';
import { eventually } from '../support/launch-stack.js';
import { isInitialized, startDisruptionStack, type DisruptionStack } from '../support/disruption-stack.js';
import { printStackLogOnFailure } from '../support/stack-log-on-failure.js';

vi.hoisted(() => {
  process.env.SWEEP_SCHEDULE = '0 0 0 1 1 *';
});

const suffix = randomUUID().slice(0, 6);
const poolName = `drain-run-${suffix}`;
const app = `web-${suffix}`;
const namespace = 'default';
const REPLICAS = 3;
const MIN_AVAILABLE = 2;
let env: DisruptionStack;
printStackLogOnFailure(() => env.stack);
let core: CoreV1Api;
let apps: AppsV1Api;
let policy: PolicyV1Api;
let config: KubeConfig;

// Nothing but the deletion below may disrupt these nodes.
const nodePool = (): NodePool => fixtureNodePool(poolName, poolName, { consolidateAfter: 'Never' });

function nodeClaim(name: string): NodeClaim {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: { name, labels: { [WellKnown.nodePoolLabel]: poolName } },
    spec: { nodeClassRef: nodeClassRef(poolName), requirements: exampleRequirements },
  };
}

/** Launches one NodeClaim of the pool and returns it once initialized with its Node. */
async function readyNodeClaim(name: string): Promise<NodeClaim> {
  await env.stack.deps.objects.nodeClaims.create(nodeClaim(name));
  return eventually(
    async () => {
      const claim = await env.stack.deps.objects.nodeClaims.get(name);
      return claim && isInitialized(claim) && claim.status?.nodeName ? claim : undefined;
    },
    `${name} initialized with a Node`,
    60_000,
  );
}

const isReady = (pod: V1Pod) =>
  pod.status?.phase === 'Running' &&
  (pod.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
/** What a PodDisruptionBudget counts as healthy: Ready and not being deleted. */
const isAvailable = (pod: V1Pod) => isReady(pod) && !pod.metadata?.deletionTimestamp;

/**
 * Every version of the app's pods, seen through one watch. After each, the number of available pods is
 * recorded, so a dip that lasts milliseconds is seen.
 */
async function watchAvailability() {
  const pods = new Map<string, V1Pod>();
  const counts: { count: number; event: string }[] = [];
  const request = await new Watch(config).watch(
    `/api/v1/namespaces/${namespace}/pods`,
    { labelSelector: `app=${app}` },
    (type: string, pod: V1Pod) => {
      const uid = pod.metadata?.uid ?? '';
      if (type === 'DELETED') pods.delete(uid);
      else pods.set(uid, pod);
      const count = [...pods.values()].filter(isAvailable).length;
      counts.push({ count, event: `${type} ${pod.metadata?.name} on ${pod.spec?.nodeName ?? '-'}` });
    },
    () => undefined,
  );
  return { pods, counts, stop: () => request.abort() };
}

beforeAll(async () => {
  env = await startDisruptionStack({
    leaseName: `sweep-drain-run-${suffix}`,
    latencies: { createMs: 1_000, deleteMs: 300, retryAfterSeconds: 0.3 },
  });
  config = new KubeConfig();
  config.loadFromFile(inject('kubeconfigPath'));
  core = config.makeApiClient(CoreV1Api);
  apps = config.makeApiClient(AppsV1Api);
  policy = config.makeApiClient(PolicyV1Api);
  await env.stack.admin.objects.nodeClasses.create(nodeClass(poolName, 'Ubuntu2204'));
  await env.stack.admin.objects.nodePools.create(nodePool());
});

afterAll(async () => {
  await apps?.deleteNamespacedDeployment({ name: app, namespace }).catch(() => undefined);
  await policy?.deleteNamespacedPodDisruptionBudget({ name: app, namespace }).catch(() => undefined);
  await env?.stack.admin.objects.nodePools.delete(poolName);
  await env?.stop();
});

test(`a PDB with minAvailable ${MIN_AVAILABLE} of ${REPLICAS} Running pods holds during the drain, and the drain finishes`, async () => {
  const stop = env.sweepContinuously([poolName], 200);
  let watch: Awaited<ReturnType<typeof watchAvailability>> | undefined;
  try {
    const first = await readyNodeClaim(`${poolName}-a`);
    const labels = { app };
    await apps.createNamespacedDeployment({
      namespace,
      body: {
        metadata: { name: app, labels },
        spec: {
          replicas: REPLICAS,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              // Only this file's nodes: other files share the control plane.
              nodeSelector: { [WellKnown.nodePoolLabel]: poolName },
              terminationGracePeriodSeconds: 1,
              containers: [
                {
                  name: 'app',
                  image: 'registry.k8s.io/pause:3.10',
                  resources: { requests: { cpu: '100m', memory: '64Mi' } },
                },
              ],
            },
          },
        },
      },
    });
    await policy.createNamespacedPodDisruptionBudget({
      namespace,
      body: {
        metadata: { name: app },
        spec: { minAvailable: MIN_AVAILABLE, selector: { matchLabels: labels } },
      },
    });
    watch = await watchAvailability();
    const onFirst = await eventually(
      async () => {
        const list = await core.listNamespacedPod({ namespace, labelSelector: `app=${app}` });
        const ready = list.items.filter(isAvailable);
        return ready.length === REPLICAS && ready.every((p) => p.spec?.nodeName === first.status?.nodeName)
          ? ready
          : undefined;
      },
      `${REPLICAS} pods Running and Ready on the first node`,
      60_000,
    );
    expect(onFirst).toHaveLength(REPLICAS);
    await eventually(async () => {
      const pdb = await policy.readNamespacedPodDisruptionBudget({ name: app, namespace });
      return pdb.status?.currentHealthy === REPLICAS && pdb.status.disruptionsAllowed === 1
        ? true
        : undefined;
    }, 'PDB status computed by the disruption controller');
    const second = await readyNodeClaim(`${poolName}-b`);

    const vmOf = (claim: NodeClaim) => claim.status?.providerID?.toLowerCase() ?? '';
    const firstVm = vmOf(first);
    expect(firstVm).not.toBe('');
    // Only versions seen from here on judge the drain.
    const from = watch.counts.length;
    await env.stack.deps.objects.nodeClaims.delete(first.metadata.name);

    await eventually(
      async () => {
        const [claim, nodes, list] = await Promise.all([
          env.stack.deps.objects.nodeClaims.get(first.metadata.name),
          env.nodes(),
          core.listNamespacedPod({ namespace, labelSelector: `app=${app}` }),
        ]);
        const vmGone = !env.stack.emulator.controls.vms().some((vm) => firstVm.endsWith(vm.id.toLowerCase()));
        const nodeGone = !nodes.some((n) => n.metadata.name === first.status?.nodeName);
        const moved =
          list.items.length === REPLICAS &&
          list.items.every((p) => isAvailable(p) && p.spec?.nodeName === second.status?.nodeName);
        return !claim && vmGone && nodeGone && moved ? true : undefined;
      },
      'the first NodeClaim, its Node and VM gone, every replica Ready on the second node',
      120_000,
    );

    const during = watch.counts.slice(from);
    // The drain did evict (pods were seen terminating and recreated), so the count was tested, not idle.
    expect(during.some((c) => c.event.startsWith('ADDED'))).toBe(true);
    const lowest = Math.min(...during.map((c) => c.count));
    const dips = during.filter((c) => c.count < MIN_AVAILABLE);
    expect(dips, `versions with fewer than ${MIN_AVAILABLE} available pods`).toEqual([]);
    // Each eviction takes the count to the edge (one terminating pod, its replacement not Ready yet).
    expect(lowest).toBe(MIN_AVAILABLE);

    // Upstream's termination Events, written as the functions' identity: Evicted on each evicted pod,
    // FailedDraining on the Node while the PodDisruptionBudget held the rest.
    const evictedPods = new Set(onFirst.map((pod) => pod.metadata?.name ?? ''));
    const nodeName = first.status?.nodeName ?? '';
    const events = await eventually(
      async () => {
        const list = await core.listNamespacedEvent({ namespace });
        const evicted = list.items.filter(
          (e) => e.reason === 'Evicted' && evictedPods.has(e.involvedObject.name ?? ''),
        );
        const failedDraining = list.items.filter(
          (e) => e.reason === 'FailedDraining' && e.involvedObject.name === nodeName,
        );
        return evicted.length === REPLICAS && failedDraining.length > 0
          ? { evicted, failedDraining }
          : undefined;
      },
      `an Evicted Event on each of the ${REPLICAS} pods and FailedDraining on ${nodeName}`,
      30_000,
    );
    expect(events.evicted.map((e) => [e.type, e.involvedObject.kind, e.message])).toEqual(
      Array.from({ length: REPLICAS }, () => ['Normal', 'Pod', 'Evicted pod: Forceful Termination']),
    );
    expect(events.failedDraining.every((e) => e.type === 'Warning' && e.involvedObject.kind === 'Node')).toBe(
      true,
    );
    expect(events.failedDraining.map((e) => e.message)).toContain(
      'Failed to drain node, evicting pod violates a PDB',
    );
  } finally {
    watch?.stop();
    await stop();
  }
}, 240_000);
