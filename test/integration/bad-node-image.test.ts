// Bad node images on the real control plane: the ARM emulator publishes image versions at runtime with a
// behaviour, VMs are created from them through the real @azure/arm-compute client, and the kubelet
// simulator (at speed 10, so the image's minute is 6 s and a crash loop restarts every second) plays each
// version: kubelet never posts Ready=True; the Node goes Ready but its pods crash-loop (a DaemonSet's pod
// still runs); the node problem detector sets NodeHealthy=False after the minute. A VM of a healthy version
// behaves as every simulated node does, and a behaviour changed by version applies at the next boot.
import { randomBytes } from 'node:crypto';
import type { ComputeManagementClient, VirtualMachine } from '@azure/arm-compute';
import { AppsV1Api, CoreV1Api, KubeConfig, type V1Node, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AKS_COMMUNITY_GALLERIES } from '../../shared/cloudprovider/azure/decisions/node-image.js';
import { NODE_HEALTHY } from '../../shared/decisions/node-repair/policies.js';
import { kubeletReservationFlags, nodeReservations } from '../../shared/decisions/node-reservations.js';
import { isNotFound } from '../../shared/kube/errors.js';
import { startArmEmulator, type ArmEmulator } from '../../local/arm-emulator/index.js';
import { startKubeletSimulator, type KubeletSimulator } from '../../local/kubelet-simulator/index.js';
import { emulatorComputeClient, linuxVmParameters } from '../support/arm-client.js';
import { createBootstrapToken } from '../support/bootstrap-token.js';
import { devCa } from '../support/dev-ca.js';
import { exampleNodeConfigInput, nodeCustomData } from '../support/node-config.js';
import { pollUntilDefined } from '../support/poll.js';

const run = randomBytes(3).toString('hex');
const subscriptionId = '00000000-0000-0000-0000-00000000c0de';
// Unique per run, so the simulator never touches Nodes of other tests sharing the control plane.
const resourceGroup = `RG-Bad-Image-${run}`;
const location = 'westus2';
const namespace = 'default';
// Joining is a TLS bootstrap the real controller-manager signs: seconds when idle, longer under a full
// run; the deadlines only detect a stuck node.
const generous = 120_000;

const versions = {
  neverReady: '202612.06.0',
  podsCrash: '202612.13.0',
  unhealthy: '202612.20.0',
  healthy: '202608.20.0',
} as const;
const nodeOf = {
  neverReady: `bad-ready-${run}`,
  podsCrash: `bad-pods-${run}`,
  unhealthy: `bad-npd-${run}`,
  healthy: `good-${run}`,
} as const;

let emulator: ArmEmulator;
let compute: ComputeManagementClient;
let core: CoreV1Api;
let apps: AppsV1Api;
let simulator: KubeletSimulator | undefined;

const imageId = (version: string): string =>
  `/CommunityGalleries/${AKS_COMMUNITY_GALLERIES.ubuntu}/images/2404gen2containerd/versions/${version}`;

function vmFrom(name: string, version: string, customData: string): VirtualMachine {
  const body = linuxVmParameters({
    name,
    subscriptionId,
    resourceGroup,
    location,
    zone: '1',
    vmSize: 'Standard_D2s_v5',
    tags: {},
    customData,
  });
  return {
    ...body,
    storageProfile: { ...body.storageProfile, imageReference: { communityGalleryImageId: imageId(version) } },
  };
}

async function readNode(name: string): Promise<V1Node | undefined> {
  try {
    return await core.readNode({ name });
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

async function readPod(name: string): Promise<V1Pod | undefined> {
  try {
    return await core.readNamespacedPod({ name, namespace });
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

const condition = (node: V1Node | undefined, type: string) =>
  node?.status?.conditions?.find((c) => c.type === type);
const podCondition = (pod: V1Pod | undefined, type: string) =>
  pod?.status?.conditions?.find((c) => c.type === type)?.status;

/** The Node once `test` holds for it. */
const nodeWhen = (name: string, what: string, test: (node: V1Node) => boolean): Promise<V1Node> =>
  pollUntilDefined(
    `${name}: ${what}`,
    async () => {
      const node = await readNode(name);
      return node && test(node) ? node : undefined;
    },
    generous,
  );

const podWhen = (name: string, what: string, test: (pod: V1Pod) => boolean): Promise<V1Pod> =>
  pollUntilDefined(
    `${name}: ${what}`,
    async () => {
      const pod = await readPod(name);
      return pod && test(pod) ? pod : undefined;
    },
    generous,
  );

const isReady = (node: V1Node): boolean => condition(node, 'Ready')?.status === 'True';
/** The fewest restarts among the pod's containers (0 before it has any status). */
const restarts = (pod: V1Pod): number => {
  const statuses = pod.status?.containerStatuses ?? [];
  return statuses.length === 0 ? 0 : Math.min(...statuses.map((s) => s.restartCount));
};

function boundPod(name: string, nodeName: string): V1Pod {
  return {
    metadata: { name, namespace },
    spec: {
      nodeName,
      terminationGracePeriodSeconds: 0,
      initContainers: [{ name: 'setup', image: 'busybox' }],
      containers: [
        { name: 'app', image: 'nginx' },
        { name: 'sidecar', image: 'envoy' },
      ],
    },
  };
}

beforeAll(async () => {
  emulator = await startArmEmulator({
    ca: await devCa(),
    latencies: { createMs: 200, deleteMs: 200, restartMs: 300, retryAfterSeconds: 1 },
  });
  emulator.controls.publishNodeImageVersion({ version: versions.neverReady, behavior: 'kubeletNeverReady' });
  emulator.controls.publishNodeImageVersion({ version: versions.podsCrash, behavior: 'podsCrash' });
  emulator.controls.publishNodeImageVersion({
    version: versions.unhealthy,
    behavior: 'unhealthyAfterAMinute',
  });
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(inject('kubeconfigPath'));
  core = kubeConfig.makeApiClient(CoreV1Api);
  apps = kubeConfig.makeApiClient(AppsV1Api);
  simulator = await startKubeletSimulator({
    kubeconfigPath: inject('kubeconfigPath'),
    emulator,
    subscriptionId,
    resourceGroup,
    // Boot 300 ms, Ready 200 ms after registration, pods 100 ms; the image's minute 6 s, restarts 1 s.
    speed: 10,
  });
  compute = emulatorComputeClient(emulator, subscriptionId);
  const customData = nodeCustomData(
    exampleNodeConfigInput({
      bootstrapToken: await createBootstrapToken(core, new Date(Date.now() + 3_600_000)),
      registerWithTaints: [],
      nodeLabels: {},
      reservations: kubeletReservationFlags(nodeReservations({ cpu: 2, memoryMiB: 8192 }, { maxPods: 30 })),
    }),
  );
  await Promise.all(
    (Object.keys(nodeOf) as (keyof typeof nodeOf)[]).map((key) =>
      compute.virtualMachines.beginCreateOrUpdateAndWait(
        resourceGroup,
        nodeOf[key],
        vmFrom(nodeOf[key], versions[key], customData),
        { updateIntervalInMs: 100 },
      ),
    ),
  );
  await pollUntilDefined(
    'every simulated Node',
    async () => (Object.values(nodeOf).every((n) => simulator?.nodes().includes(n)) ? true : undefined),
    generous,
  );
});

afterAll(async () => {
  await apps?.deleteNamespacedDaemonSet({ name: `agent-${run}`, namespace }).catch(() => undefined);
  for (const nodeName of Object.values(nodeOf)) {
    await core
      ?.deleteCollectionNamespacedPod({
        namespace,
        fieldSelector: `spec.nodeName=${nodeName}`,
        gracePeriodSeconds: 0,
      })
      .catch(() => undefined);
  }
  await simulator?.stop();
  await emulator?.stop();
  for (const nodeName of Object.values(nodeOf))
    await core?.deleteNode({ name: nodeName }).catch(() => undefined);
});

describe('bad node images', () => {
  it('the VMs carry the image version they were created from', () => {
    const byName = new Map(emulator.controls.vms().map((vm) => [vm.name, vm.communityGalleryImageId]));
    expect(byName.get(nodeOf.podsCrash)).toBe(imageId(versions.podsCrash));
    expect(emulator.controls.nodeImageBehavior(byName.get(nodeOf.podsCrash))).toBe('podsCrash');
    expect(emulator.controls.nodeImageBehavior(byName.get(nodeOf.healthy))).toBe('healthy');
  });

  it('unhealthyAfterAMinute: the Node goes Ready, then the node problem detector sets NodeHealthy=False', async () => {
    const ready = await nodeWhen(nodeOf.unhealthy, 'Ready=True', isReady);
    const unhealthy = await nodeWhen(
      nodeOf.unhealthy,
      `${NODE_HEALTHY}=False`,
      (node) => condition(node, NODE_HEALTHY)?.status === 'False',
    );
    expect(condition(unhealthy, NODE_HEALTHY)).toMatchObject({
      reason: 'NodeProblemDetected',
      message: expect.stringContaining(`simulated bad node image ${versions.unhealthy}`),
    });
    // Ready first, the problem after; kubelet's Ready is untouched by it.
    expect(
      new Date(condition(unhealthy, NODE_HEALTHY)?.lastTransitionTime ?? 0).getTime(),
    ).toBeGreaterThanOrEqual(new Date(condition(ready, 'Ready')?.lastTransitionTime ?? 0).getTime());
    expect(condition(unhealthy, 'Ready')?.status).toBe('True');
  });

  it('kubeletNeverReady: the Node registers, Ready stays False with kubelet’s reason naming the image', async () => {
    const notReady = await nodeWhen(nodeOf.neverReady, 'Ready=False naming the image', (node) =>
      (condition(node, 'Ready')?.message ?? '').includes(`simulated bad node image ${versions.neverReady}`),
    );
    expect(condition(notReady, 'Ready')).toMatchObject({ status: 'False', reason: 'KubeletNotReady' });
    // By the time a VM booted with it has gone Ready and then unhealthy (its image's minute), this one is
    // still not Ready, and the node lifecycle controller keeps it unschedulable.
    await nodeWhen(
      nodeOf.unhealthy,
      `${NODE_HEALTHY}=False`,
      (n) => condition(n, NODE_HEALTHY)?.status === 'False',
    );
    const later = await readNode(nodeOf.neverReady);
    expect(condition(later, 'Ready')?.status).toBe('False');
    expect((later?.spec?.taints ?? []).map((t) => t.key)).toContain('node.kubernetes.io/not-ready');
  });

  it('podsCrash: the Node goes Ready, its pods crash-loop (restartCount grows, never Ready)', async () => {
    await nodeWhen(nodeOf.podsCrash, 'Ready=True', isReady);
    const name = `crashes-${run}`;
    await core.createNamespacedPod({ namespace, body: boundPod(name, nodeOf.podsCrash) });
    const looping = await podWhen(name, 'restartCount ≥ 3', (pod) => restarts(pod) >= 3);
    expect(looping.status?.phase).toBe('Running');
    expect(podCondition(looping, 'Ready')).toBe('False');
    expect(podCondition(looping, 'ContainersReady')).toBe('False');
    expect(looping.status?.containerStatuses?.map((s) => s.name)).toEqual(['app', 'sidecar']);
    for (const status of looping.status?.containerStatuses ?? []) {
      expect(status.ready).toBe(false);
      expect(status.state?.waiting?.reason).toBe('CrashLoopBackOff');
      expect(status.lastState?.terminated?.exitCode).toBe(1);
    }
    expect(looping.status?.initContainerStatuses?.[0]?.state?.terminated?.reason).toBe('Completed');
    const more = await podWhen(name, 'one more restart', (pod) => restarts(pod) > restarts(looping));
    expect(podCondition(more, 'Ready')).toBe('False');
  });

  it('podsCrash: a DaemonSet’s pod on that Node still runs and goes Ready', async () => {
    const dsName = `agent-${run}`;
    await apps.createNamespacedDaemonSet({
      namespace,
      body: {
        metadata: { name: dsName },
        spec: {
          selector: { matchLabels: { app: dsName } },
          template: {
            metadata: { labels: { app: dsName } },
            spec: {
              nodeSelector: { 'kubernetes.io/hostname': nodeOf.podsCrash },
              tolerations: [{ operator: 'Exists' }],
              terminationGracePeriodSeconds: 0,
              containers: [{ name: 'agent', image: 'cilium' }],
            },
          },
        },
      },
    });
    const pod = await pollUntilDefined(
      'the DaemonSet pod Running and Ready',
      async () => {
        const pods = await core.listNamespacedPod({ namespace, labelSelector: `app=${dsName}` });
        return pods.items.find(
          (p) => p.spec?.nodeName === nodeOf.podsCrash && podCondition(p, 'Ready') === 'True',
        );
      },
      generous,
    );
    expect(pod.status?.containerStatuses?.[0]).toMatchObject({ ready: true, restartCount: 0 });
  });

  it('a healthy version behaves as before: Ready=True, pods Running and Ready, no NodeHealthy', async () => {
    await nodeWhen(nodeOf.healthy, 'Ready=True', isReady);
    const name = `runs-${run}`;
    await core.createNamespacedPod({ namespace, body: boundPod(name, nodeOf.healthy) });
    const running = await podWhen(name, 'Running and Ready', (pod) => podCondition(pod, 'Ready') === 'True');
    expect(running.status?.phase).toBe('Running');
    expect(running.status?.containerStatuses?.every((s) => s.ready && s.restartCount === 0)).toBe(true);
    // Past the bad image's minute, the healthy node still has no problem.
    await nodeWhen(
      nodeOf.unhealthy,
      `${NODE_HEALTHY}=False`,
      (n) => condition(n, NODE_HEALTHY)?.status === 'False',
    );
    expect(condition(await readNode(nodeOf.healthy), NODE_HEALTHY)).toBeUndefined();
  });

  it('unhealthyAfterAMinute: a restart clears NodeHealthy (the detector starts over), a minute later it fails again', async () => {
    await nodeWhen(
      nodeOf.unhealthy,
      `${NODE_HEALTHY}=False`,
      (n) => condition(n, NODE_HEALTHY)?.status === 'False',
    );
    await compute.virtualMachines.beginRestartAndWait(resourceGroup, nodeOf.unhealthy, {
      updateIntervalInMs: 100,
    });
    const recovered = await nodeWhen(
      nodeOf.unhealthy,
      `${NODE_HEALTHY}=True after the restart`,
      (n) => condition(n, NODE_HEALTHY)?.status === 'True',
    );
    expect(condition(recovered, NODE_HEALTHY)?.reason).toBe('Recovered');
    const again = await nodeWhen(
      nodeOf.unhealthy,
      `${NODE_HEALTHY}=False again`,
      (n) => condition(n, NODE_HEALTHY)?.status === 'False',
    );
    expect(condition(again, NODE_HEALTHY)?.reason).toBe('NodeProblemDetected');
  });

  it('a behaviour changed by version applies at the next boot: the never-Ready node restarts Ready', async () => {
    emulator.controls.setNodeImageBehavior(versions.neverReady, 'healthy');
    await compute.virtualMachines.beginRestartAndWait(resourceGroup, nodeOf.neverReady, {
      updateIntervalInMs: 100,
    });
    const ready = await nodeWhen(nodeOf.neverReady, 'Ready=True after the restart', isReady);
    expect(condition(ready, 'Ready')?.reason).toBe('KubeletReady');
  });
});
