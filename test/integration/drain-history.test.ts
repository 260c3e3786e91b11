// A drain a real PodDisruptionBudget blocks for six simulated hours ends with a bounded history. The
// termination orchestrator runs on the local host's durable engine (orchestration-runtime.ts,
// durable-functions' replay) under a virtual clock, so six hours of 30 s passes replay in seconds; each
// pass is the real drain activity, as the Function App's identity, against the real kube-apiserver, where
// a PDB with minAvailable 1 over the node's one pod (its status computed by the real disruption
// controller) makes the Eviction API answer 429 every time. The VM and finish steps must not run while
// the drain waits; they are registered as failures, not stand-ins. The 5 s default poll over six hours,
// and terminationGracePeriod across continuations, are in test/unit/lifecycle/termination-history.test.ts.
import { randomUUID } from 'node:crypto';
import { CoreV1Api, PolicyV1Api, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { statusCodeOf } from '../../shared/kube/errors.js';
import { kubeClientsFromKubeconfig } from '../../shared/kube/client.js';
import { karpenterObjects, type KarpenterObjects } from '../../shared/kube/custom-objects.js';
import { outageTolerantRegistration } from '../../shared/lifecycle/durable/durable-activity.js';
import { HISTORY_EVENTS_PER_TASK } from '../../shared/lifecycle/durable/history-budget.js';
import { drainNodeClaim } from '../../shared/lifecycle/termination/drain.js';
import {
  TERMINATION_TASKS_PER_EXECUTION,
  TerminationActivities,
  terminationInstanceId,
  terminationOrchestrator,
  type TerminationInput,
  type TerminationProgress,
} from '../../shared/lifecycle/termination/termination.js';
import { WellKnown, type NodeClaim } from '../../shared/models/index.js';
import { orchestration, type FunctionDefinition } from '../../shared/runtime/definitions.js';
import { TerminationNames } from '../../shared/runtime/function-names.js';
import { eventually } from '../support/launch-stack.js';
import { startVirtualDurableEngine } from '../support/virtual-durable-engine.js';
import { kubeletNode, reportNodeReady, subscriptionId, testDependencies } from './registration-support.js';

const HOUR = 3_600_000;
/** The budget is in tasks, so the interval changes how many executions six hours take, not their size. */
const DRAIN_POLL_SECONDS = 30;
/** The stated bound: four events a task over the task budget, plus the episode not yet truncated. */
const HISTORY_BOUND = HISTORY_EVENTS_PER_TASK * TERMINATION_TASKS_PER_EXECUTION + 4;

const suffix = randomUUID().slice(0, 6);
const namespace = 'default';
const claimName = `drain-history-${suffix}`;
const nodeName = `aks-drain-history-${suffix}`;
const podName = `held-${suffix}`;
const labels = { app: `drain-history-${suffix}` };
// Not this system's resource group: no other file's ARM emulator or kubelet simulator knows this VM.
const providerID = `azure:///subscriptions/${subscriptionId}/resourceGroups/rg-drain-history/providers/Microsoft.Compute/virtualMachines/${nodeName}`;

let admin: KarpenterObjects;
let core: CoreV1Api;
let policy: PolicyV1Api;

beforeAll(async () => {
  const clients = kubeClientsFromKubeconfig(inject('kubeconfigPath'));
  admin = karpenterObjects(() => Promise.resolve(clients));
  core = clients.config.makeApiClient(CoreV1Api);
  policy = clients.config.makeApiClient(PolicyV1Api);
});

afterAll(async () => {
  await policy?.deleteNamespacedPodDisruptionBudget({ name: podName, namespace }).catch(() => undefined);
  await core?.deleteNamespacedPod({ name: podName, namespace, gracePeriodSeconds: 0 }).catch(() => undefined);
  await core?.deleteNode({ name: nodeName }).catch(() => undefined);
  await admin?.nodeClaims.mergePatch(claimName, { metadata: { finalizers: null } }).catch(() => undefined);
  await admin?.nodeClaims.delete(claimName).catch(() => undefined);
});

/**
 * A deleted NodeClaim (its termination finalizer holding it) whose Node runs one Ready pod that a PDB
 * allowing no disruption guards. Its nodeClassRef is not an AKSNodeClass, so the hosts of other test
 * files sharing this control plane leave it alone; the drain itself does not look at the class.
 */
async function blockedNodeClaim(): Promise<NodeClaim> {
  await admin.nodeClaims.create({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: { name: claimName, finalizers: [WellKnown.terminationFinalizer] },
    spec: {
      nodeClassRef: { group: 'drain-history.test', kind: 'TestNodeClass', name: 'default' },
      requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }],
    },
  });
  await admin.nodeClaims.mergePatchStatus(claimName, { status: { providerID, nodeName } });
  await core.createNode({ body: kubeletNode({ name: nodeName, providerID }) });
  await reportNodeReady(core, nodeName);
  await core.createNamespacedPod({
    namespace,
    body: {
      metadata: { name: podName, labels },
      spec: {
        nodeName,
        containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }],
        // No kubelet heartbeats this Node: the node controller's NoExecute taints must not evict the pod.
        tolerations: [
          { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
          { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
        ],
      },
    },
  });
  // What its kubelet would report: Running and Ready, so the PDB counts it (a Pending pod skips PDBs).
  const now = new Date();
  const ready = { status: 'True', lastTransitionTime: now };
  await core.replaceNamespacedPodStatus({
    name: podName,
    namespace,
    body: {
      ...(await core.readNamespacedPod({ name: podName, namespace })),
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
  await policy.createNamespacedPodDisruptionBudget({
    namespace,
    body: { metadata: { name: podName }, spec: { minAvailable: 1, selector: { matchLabels: labels } } },
  });
  await eventually(async () => {
    const pdb = await policy.readNamespacedPodDisruptionBudget({ name: podName, namespace });
    return pdb.status?.observedGeneration === pdb.metadata?.generation &&
      pdb.status?.currentHealthy === 1 &&
      pdb.status.desiredHealthy === 1 &&
      pdb.status.disruptionsAllowed === 0
      ? true
      : undefined;
  }, 'PDB status computed by the disruption controller');
  await admin.nodeClaims.delete(claimName);
  const deleted = await admin.nodeClaims.get(claimName);
  if (!deleted?.metadata.deletionTimestamp) throw new Error(`${claimName} has no deletionTimestamp`);
  return deleted;
}

describe('termination history while a real PodDisruptionBudget blocks the drain', () => {
  test('six simulated hours against the real API server: one execution stays under the bound, the drain having continued as new', async () => {
    const claim = await blockedNodeClaim();
    const uid = claim.metadata.uid ?? '';
    // The drain reads the engine's virtual time, once the engine exists.
    const clock = { now: () => Date.now() };
    const { deps } = testDependencies({
      kubeconfigPath: inject('kubeconfigPath'),
      appKubeconfigPath: inject('functionsKubeconfigPath'),
      caCertPath: inject('devCaCertPath'),
      now: () => new Date(clock.now()),
    });
    const mustNotRun = { deleteVm: 0, finish: 0 };
    const definitions: FunctionDefinition[] = [
      orchestration(TerminationNames.orchestration, terminationOrchestrator),
      outageTolerantRegistration(TerminationActivities.drain, (input) => drainNodeClaim(deps, input)),
      outageTolerantRegistration(TerminationActivities.deleteVm, () => {
        mustNotRun.deleteVm += 1;
        return Promise.reject(new Error('the VM was deleted while a PDB held the drain'));
      }),
      outageTolerantRegistration(TerminationActivities.finish, () => {
        mustNotRun.finish += 1;
        return Promise.reject(new Error('termination finished while a PDB held the drain'));
      }),
    ];
    const start = new Date();
    const engine = await startVirtualDurableEngine(definitions, start);
    clock.now = () => engine.clock.now();
    const instanceId = terminationInstanceId(uid);
    const input: TerminationInput = {
      nodeClaim: { name: claimName, uid },
      vmName: nodeName,
      pollIntervalSeconds: 5,
      drainPollSeconds: DRAIN_POLL_SECONDS,
    };
    try {
      await engine.client.startNew(TerminationNames.orchestration, { instanceId, input });
      await engine.runUntil(start.getTime() + 6 * HOUR);

      const status = await engine.client.getStatus(instanceId);
      const progress = status?.customStatus as TerminationProgress;
      const continuations = engine.events.filter((e) => e.type === 'orchestration.continuedAsNew').length;
      const longest = engine.longestHistory.get(instanceId) ?? 0;
      const record = await engine.record(instanceId);
      console.info(
        `drain blocked 6 simulated hours: ${progress.passes} passes, ${continuations} continuations, ` +
          `longest execution ${longest} events, now ${record?.history.length} (bound ${HISTORY_BOUND})`,
      );

      expect(status?.runtimeStatus).toBe('Running');
      expect(progress).toMatchObject({
        phase: 'Draining',
        passes: (6 * HOUR) / (DRAIN_POLL_SECONDS * 1000) + 1,
        continuations,
        startedAt: start.toISOString(),
        // Every pass the API server answered 429 for the one pod.
        lastDrain: { status: 'Draining', waiting: 1, blockedByPdb: 1, deleted: 0 },
      });
      expect(continuations).toBe(Math.floor(progress.passes / (TERMINATION_TASKS_PER_EXECUTION / 2)));
      expect(longest).toBeLessThanOrEqual(HISTORY_BOUND);
      expect(record?.history.length).toBeLessThanOrEqual(HISTORY_BOUND);
      // One execution would have held about four events for each of the 2 tasks of every pass.
      expect(progress.passes * 2 * HISTORY_EVENTS_PER_TASK).toBeGreaterThan(5 * HISTORY_BOUND);
      expect(mustNotRun).toEqual({ deleteVm: 0, finish: 0 });

      // The pod is still there, on its tainted Node, and the API server still refuses its eviction.
      const pod = await core.readNamespacedPod({ name: podName, namespace });
      expect(pod.metadata?.deletionTimestamp).toBeUndefined();
      const node = await core.readNode({ name: nodeName });
      expect(node.spec?.taints?.map((t) => `${t.key}:${t.effect}`)).toContain(
        `${WellKnown.disruptedTaintKey}:NoSchedule`,
      );
      const refused = await core
        .createNamespacedPodEviction({
          name: podName,
          namespace,
          body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: podName, namespace } },
        })
        .then(
          () => 'evicted',
          (error: unknown) => statusCodeOf(error),
        );
      expect(refused).toBe(429);
    } finally {
      await engine.stop();
    }
  }, 300_000);
});
