// The kubelet simulator runs pods: against the real control plane and ARM emulator, a pod bound to a
// simulated Node reports Running and Ready, and a deleted pod goes away once its containers exit, never
// before they would (a pod that ignores SIGTERM takes its whole grace period), and a start whose write
// fails is made again.
import { randomBytes } from 'node:crypto';
import { CoreV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { kubeletReservationFlags, nodeReservations } from '../../shared/decisions/node-reservations.js';
import { isNotFound } from '../../shared/kube/errors.js';
import { startArmEmulator, type ArmEmulator } from '../../local/arm-emulator/index.js';
import { startKubeletSimulator, type KubeletSimulator } from '../../local/kubelet-simulator/index.js';
import { IGNORES_SIGTERM_ANNOTATION, startPodRunner } from '../../local/kubelet-simulator/pod-runner.js';
import { kubeRest, type KubeRequest } from '../../local/kubelet-simulator/kube-rest.js';
import { silentLogger } from '../../shared/observability/logger.js';
import { emulatorComputeClient, linuxVmParameters } from '../support/arm-client.js';
import { exampleNodeConfigInput, nodeCustomData } from '../support/node-config.js';
import { pollUntilDefined } from '../support/poll.js';
import { createBootstrapToken } from '../support/bootstrap-token.js';
import { devCa } from '../support/dev-ca.js';

const run = randomBytes(3).toString('hex');
const subscriptionId = '00000000-0000-0000-0000-00000000c0de';
const resourceGroup = `RG-Kubelet-Pods-${run}`;
const location = 'westus2';
const namespace = 'default';
const nodeName = `pods-${run}`;

let emulator: ArmEmulator;
let core: CoreV1Api;
let simulator: KubeletSimulator | undefined;

async function readPod(name: string): Promise<V1Pod | undefined> {
  try {
    return await core.readNamespacedPod({ name, namespace });
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

function boundPod(
  name: string,
  graceSeconds: number,
  annotations: Record<string, string> = {},
  node: string = nodeName,
): V1Pod {
  return {
    metadata: { name, namespace, annotations },
    spec: {
      nodeName: node,
      terminationGracePeriodSeconds: graceSeconds,
      initContainers: [{ name: 'setup', image: 'busybox' }],
      containers: [{ name: 'app', image: 'nginx' }],
    },
  };
}

beforeAll(async () => {
  emulator = await startArmEmulator({
    ca: await devCa(),
    latencies: { createMs: 200, deleteMs: 200, retryAfterSeconds: 1 },
  });
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(inject('kubeconfigPath'));
  core = kubeConfig.makeApiClient(CoreV1Api);
  simulator = await startKubeletSimulator({
    kubeconfigPath: inject('kubeconfigPath'),
    emulator,
    subscriptionId,
    resourceGroup,
    bootDelayMs: 200,
    readyDelayMs: 200,
    podStartDelayMs: 300,
    podShutdownDelayMs: 200,
  });
  const compute = emulatorComputeClient(emulator, subscriptionId);
  const customData = nodeCustomData(
    exampleNodeConfigInput({
      // The simulator joins as kubelet does, with a bootstrap token the API server knows.
      bootstrapToken: await createBootstrapToken(core, new Date(Date.now() + 3_600_000)),
      registerWithTaints: [],
      nodeLabels: {},
      reservations: kubeletReservationFlags(nodeReservations({ cpu: 2, memoryMiB: 8192 }, { maxPods: 30 })),
    }),
  );
  await compute.virtualMachines.beginCreateOrUpdateAndWait(
    resourceGroup,
    nodeName,
    linuxVmParameters({
      name: nodeName,
      subscriptionId,
      resourceGroup,
      location,
      zone: '1',
      vmSize: 'Standard_D2s_v5',
      tags: {},
      customData,
    }),
  );
  // Joining is a TLS bootstrap (a CSR the real controller-manager approves and signs): seconds when the
  // machine is idle, longer under a full test run; the deadline only detects a stuck join.
  await pollUntilDefined(
    'the simulated Node',
    async () => (simulator?.nodes().includes(nodeName) ? true : undefined),
    120_000,
  );
});

afterAll(async () => {
  await core
    ?.deleteCollectionNamespacedPod({
      namespace,
      fieldSelector: `spec.nodeName=${nodeName}`,
      gracePeriodSeconds: 0,
    })
    .catch(() => undefined);
  await simulator?.stop();
  await emulator?.stop();
  await core?.deleteNode({ name: nodeName }).catch(() => undefined);
});

describe('kubelet simulator pods', () => {
  it('a pod bound to a simulated Node becomes Running and Ready, its init container completed', async () => {
    const name = `runs-${run}`;
    await core.createNamespacedPod({ namespace, body: boundPod(name, 5) });
    const running = await pollUntilDefined('the pod Running and Ready', async () => {
      const pod = await readPod(name);
      const ready = pod?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
      return pod?.status?.phase === 'Running' && ready ? pod : undefined;
    });
    expect(running.status?.containerStatuses?.[0]).toMatchObject({ name: 'app', ready: true, started: true });
    expect(running.status?.initContainerStatuses?.[0]?.state?.terminated?.reason).toBe('Completed');
    expect(running.status?.podIP).toMatch(/^10\.244\./);
    expect(simulator?.stats().podsStarted).toBeGreaterThanOrEqual(1);
  });

  it('a deleted pod goes away once its containers exit after SIGTERM', async () => {
    const name = `stops-${run}`;
    await core.createNamespacedPod({ namespace, body: boundPod(name, 30) });
    await pollUntilDefined('the pod Running', async () =>
      (await readPod(name))?.status?.phase === 'Running' ? true : undefined,
    );
    await core.deleteNamespacedPod({ name, namespace });
    // Gone well before its 30 s grace period: the simulated containers exit 200 ms after SIGTERM.
    await pollUntilDefined('the pod removed', async () => ((await readPod(name)) ? undefined : true));
  });

  it('a pod that ignores SIGTERM is removed only when its grace period is over', async () => {
    const name = `grace-${run}`;
    const graceSeconds = 2;
    await core.createNamespacedPod({
      namespace,
      body: boundPod(name, graceSeconds, { [IGNORES_SIGTERM_ANNOTATION]: 'true' }),
    });
    await pollUntilDefined('the pod Running', async () =>
      (await readPod(name))?.status?.phase === 'Running' ? true : undefined,
    );
    await core.deleteNamespacedPod({ name, namespace });
    const terminating = await pollUntilDefined('the deletion timestamp', async () => {
      const pod = await readPod(name);
      return pod?.metadata?.deletionTimestamp !== undefined ? pod : undefined;
    });
    await pollUntilDefined('the pod removed', async () => ((await readPod(name)) ? undefined : true));
    // deletionTimestamp is the end of the grace period, in whole seconds: the pod outlived it.
    const graceEndsAt = new Date(terminating.metadata!.deletionTimestamp!).getTime();
    expect(Date.now()).toBeGreaterThanOrEqual(graceEndsAt - 1_000);
  });
});

describe('kubelet simulator pods, a write that fails', () => {
  it('a pod whose start write is reset is started again after a backoff, not left bound and Pending', async () => {
    // The runner alone, over a node name no other runner claims, with the admin standing in for the
    // node's kubelet: its first status write fails as a reset connection does, the next ones go through.
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(inject('kubeconfigPath'));
    const rest = await kubeRest(kubeConfig, 4);
    const flakyNode = `flaky-${run}`;
    const attempts: string[] = [];
    const flaky: KubeRequest = async <T>(...args: Parameters<KubeRequest>): Promise<T> => {
      attempts.push(args[0]);
      if (attempts.length === 1) throw new Error('socket hang up');
      return rest.request<T>(...args);
    };
    const runner = await startPodRunner({
      kubeConfig,
      rest,
      isRunningNode: (node) => node === flakyNode,
      kubeletOf: (node) => (node === flakyNode ? flaky : undefined),
      startDelayMs: 100,
      shutdownDelayMs: 100,
      crashesPods: () => false,
      crashRestartMs: 1_000,
      log: silentLogger,
    });
    const name = `reset-${run}`;
    try {
      await core.createNamespacedPod({
        namespace,
        body: boundPod(name, 0, {}, flakyNode),
      });
      await pollUntilDefined('the pod Running after the reset', async () =>
        (await readPod(name))?.status?.phase === 'Running' ? true : undefined,
      );
      expect(attempts).toEqual(['start pod', 'start pod']);
    } finally {
      await core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0 }).catch(() => undefined);
      await runner.stop();
      rest.close();
    }
  });
});
