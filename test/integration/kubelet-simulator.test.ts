// The kubelet simulator against the real control plane (kube-apiserver + kube-controller-manager from
// the global setup) and a real ARM emulator, with VMs created through the real @azure/arm-compute client.
// Nothing is mocked: the not-ready taint comes from the API server's admission plugin and is removed by
// the real node lifecycle controller; the simulator only does what kubelet, an agent DaemonSet and the
// cloud node lifecycle controller would, and its kubelets act as their nodes (system:node:<name>).
import { randomBytes } from 'node:crypto';
import type { ComputeManagementClient, VirtualMachine } from '@azure/arm-compute';
import {
  CertificatesV1Api,
  CoordinationV1Api,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  Watch,
  type V1Lease,
  type V1Node,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { kubeletReservationFlags, nodeReservations } from '../../shared/decisions/node-reservations.js';
import { capacityFor } from '../../shared/decisions/offerings.js';
import { exampleNodeConfigInput, nodeCustomData } from '../support/node-config.js';
import { providerIdFor } from '../../shared/cloudprovider/azure/decisions/vm-spec.js';
import { isNotFound } from '../../shared/kube/errors.js';
import type { Taint } from '../../shared/models/kube.js';
import { startArmEmulator, type ArmEmulator } from '../../local/arm-emulator/index.js';
import {
  startKubeletSimulator,
  type KubeletSimulator,
  type KubeletSimulatorOptions,
} from '../../local/kubelet-simulator/index.js';
import { emulatorComputeClient, linuxVmParameters } from '../support/arm-client.js';
import { pollUntilDefined } from '../support/poll.js';
import { createBootstrapToken } from '../support/bootstrap-token.js';
import { devCa } from '../support/dev-ca.js';

const run = randomBytes(3).toString('hex');
const subscriptionId = '00000000-0000-0000-0000-00000000c0de';
// Unique per run, so the simulator never touches Nodes of other tests sharing the control plane.
const resourceGroup = `RG-Kubelet-Sim-${run}`;
const location = 'westus2';
const startupTaintKey = 'node.cilium.io/agent-not-ready';
const heartbeatIntervalMs = 1_000;

let emulator: ArmEmulator;
let compute: ComputeManagementClient;
let core: CoreV1Api;
let coordination: CoordinationV1Api;
let kubeConfig: KubeConfig;
let simulator: KubeletSimulator | undefined;
const seenNodes = new Map<string, V1Node[]>();
let stopWatch: (() => void) | undefined;

function simulatorOptions(): KubeletSimulatorOptions {
  return {
    kubeconfigPath: inject('kubeconfigPath'),
    emulator,
    subscriptionId,
    resourceGroup,
    bootDelayMs: 400,
    readyDelayMs: 1_500,
    startupTaintRemoval: { keys: [startupTaintKey], delayMs: 3_000 },
    heartbeatIntervalMs,
  };
}

let validToken = '';

function bootstrapFor(
  _nodeName: string,
  taints: Taint[],
  labels: Record<string, string>,
  bootstrapToken = validToken,
): string {
  return nodeCustomData(
    exampleNodeConfigInput({
      bootstrapToken,
      registerWithTaints: taints,
      nodeLabels: labels,
      reservations: kubeletReservationFlags(nodeReservations({ cpu: 4, memoryMiB: 16384 }, { maxPods: 50 })),
    }),
  );
}

function vmParameters(name: string, customData: string | undefined, group = resourceGroup): VirtualMachine {
  const tags = { 'karpenter.sh/nodepool': 'general-purpose' };
  return linuxVmParameters({
    name,
    subscriptionId,
    resourceGroup: group,
    location,
    zone: '2',
    vmSize: 'Standard_D4s_v5',
    tags,
    customData,
  });
}

async function readNode(name: string): Promise<V1Node | undefined> {
  try {
    return await core.readNode({ name });
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

async function readLease(name: string): Promise<V1Lease | undefined> {
  try {
    return await coordination.readNamespacedLease({ name, namespace: 'kube-node-lease' });
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

const taintKeys = (node: V1Node | undefined): string[] =>
  (node?.spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`);
const readyStatus = (node: V1Node | undefined): string | undefined =>
  node?.status?.conditions?.find((c) => c.type === 'Ready')?.status;

/**
 * What the node lifecycle controller writes when it heard nothing for its grace period, e.g. while the
 * API server was away: a kubelet running all along corrects it as a real one does.
 */
async function markReadyUnknown(name: string): Promise<void> {
  await core.patchNodeStatus(
    {
      name,
      body: {
        status: {
          conditions: [
            {
              type: 'Ready',
              status: 'Unknown',
              reason: 'NodeStatusUnknown',
              message: 'Kubelet stopped posting node status.',
              lastHeartbeatTime: new Date(),
              lastTransitionTime: new Date(),
            },
          ],
        },
      },
    },
    setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
  );
}

async function readyAgain(name: string): Promise<void> {
  await pollUntilDefined(
    'Ready=True again',
    async () => (readyStatus(await readNode(name)) === 'True' ? true : undefined),
    10 * heartbeatIntervalMs,
  );
}

beforeAll(async () => {
  const ca = await devCa();
  emulator = await startArmEmulator({
    ca,
    latencies: { createMs: 300, deleteMs: 300, retryAfterSeconds: 1 },
  });
  compute = emulatorComputeClient(emulator, subscriptionId);
  kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(inject('kubeconfigPath'));
  core = kubeConfig.makeApiClient(CoreV1Api);
  coordination = kubeConfig.makeApiClient(CoordinationV1Api);
  // Every version of every Node, from before any VM exists: the ADDED event shows the Node exactly as
  // registered, whatever the controllers do to it a moment later.
  const controller = await new Watch(kubeConfig).watch(
    '/api/v1/nodes',
    {},
    (phase, object: V1Node) => {
      const name = object.metadata?.name ?? '';
      if (phase === 'ADDED' || phase === 'MODIFIED')
        seenNodes.set(name, [...(seenNodes.get(name) ?? []), object]);
    },
    () => undefined,
  );
  stopWatch = () => controller.abort();
  validToken = await createBootstrapToken(core, new Date(Date.now() + 20 * 60_000));
  simulator = await startKubeletSimulator(simulatorOptions());
});

afterAll(async () => {
  stopWatch?.();
  await simulator?.stop();
  await emulator?.stop();
});

describe('kubelet simulator', () => {
  const nodeName = `sim-${run}-a`;
  const vmName = nodeName;
  const providerId = providerIdFor({ subscriptionId, resourceGroup, vmName });
  const registerWithTaints: Taint[] = [
    { key: 'karpenter.sh/unregistered', effect: 'NoExecute' },
    { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' },
    { key: startupTaintKey, effect: 'NoExecute' },
  ];
  const bootstrapLabels = {
    'karpenter.sh/nodepool': 'general-purpose',
    'karpenter.sh/capacity-type': 'on-demand',
    'topology.kubernetes.io/zone': `${location}-2`,
    'example.com/team': 'blue',
  };

  it('registers a Node from the VM bootstrap data, with the providerID, labels, taints and capacity', async () => {
    await compute.virtualMachines.beginCreateOrUpdateAndWait(
      resourceGroup,
      vmName,
      vmParameters(vmName, bootstrapFor(nodeName, registerWithTaints, bootstrapLabels)),
    );
    await pollUntilDefined('the Node', () => readNode(nodeName));
    const registered = await pollUntilDefined('the ADDED event', async () => seenNodes.get(nodeName)?.[0]);

    expect(registered.spec?.providerID).toBe(providerId);
    expect(providerId).toContain(`/resourceGroups/${resourceGroup.toLowerCase()}/`);
    expect(registered.metadata?.labels).toMatchObject({
      ...bootstrapLabels,
      'kubernetes.io/hostname': nodeName,
      'kubernetes.io/os': 'linux',
      'kubernetes.io/arch': 'amd64',
      'node.kubernetes.io/instance-type': 'Standard_D4s_v5',
      'topology.kubernetes.io/region': location,
      // AKS's labels from the AKSNodeConfig: the networking DaemonSets select on them.
      'kubernetes.azure.com/cluster': 'MC_prod_prod_westus2',
      'kubernetes.azure.com/ebpf-dataplane': 'cilium',
    });
    expect(registered.status?.nodeInfo?.kubeletVersion).toBe('v1.34.4');
    // The bootstrap taints, in order, plus the API server's not-ready taint (TaintNodesByCondition).
    expect(taintKeys(registered)).toEqual(
      expect.arrayContaining([
        'karpenter.sh/unregistered:NoExecute',
        'dedicated:NoSchedule',
        `${startupTaintKey}:NoExecute`,
        'node.kubernetes.io/not-ready:NoSchedule',
      ]),
    );
    expect(registered.spec?.taints?.find((t) => t.key === 'dedicated')?.value).toBe('gpu');
    expect(readyStatus(registered)).toBe('False');
    // Standard_D4s_v5: 4 vCPUs, 16 GiB of which the guest sees 92.5%; the kubelet flags in the bootstrap
    // data reserve what launch plans with, so the Node reports exactly the planned allocatable.
    const planned = capacityFor({ cpu: 4, memoryMiB: 16384 }, { maxPods: 50 });
    expect(registered.status?.capacity).toMatchObject({
      cpu: '4',
      memory: planned.capacity.memory,
      pods: '50',
    });
    expect(registered.status?.allocatable).toMatchObject({
      cpu: planned.allocatable.cpu,
      memory: planned.allocatable.memory,
      pods: '50',
    });
    expect(planned.allocatable.memory).toBe('14341324Ki');
    expect(simulator?.nodes()).toContain(nodeName);
  });

  it('reports Ready, and the real node lifecycle controller lifts the not-ready taint', async () => {
    const ready = await pollUntilDefined('Ready=True without the not-ready taint', async () => {
      const node = await readNode(nodeName);
      return readyStatus(node) === 'True' &&
        !taintKeys(node).some((t) => t.startsWith('node.kubernetes.io/not-ready'))
        ? node
        : undefined;
    });
    expect(ready.status?.conditions?.find((c) => c.type === 'Ready')?.reason).toBe('KubeletReady');
    // Everything else the kubelet registered with is still there: only the controller touched not-ready.
    expect(taintKeys(ready)).toEqual(
      expect.arrayContaining(['karpenter.sh/unregistered:NoExecute', 'dedicated:NoSchedule']),
    );
  });

  it('keeps a Lease in kube-node-lease fresh, owned by the Node', async () => {
    const node = await pollUntilDefined('the Node', () => readNode(nodeName));
    const first = await pollUntilDefined('the Lease', () => readLease(nodeName));
    expect(first.spec?.holderIdentity).toBe(nodeName);
    expect(first.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: 'Node',
      name: nodeName,
      uid: node.metadata?.uid,
    });
    const firstRenew = new Date(first.spec?.renewTime ?? 0).getTime();
    const renewed = await pollUntilDefined(
      'a later renewTime',
      async () => {
        const lease = await readLease(nodeName);
        return new Date(lease?.spec?.renewTime ?? 0).getTime() > firstRenew ? lease : undefined;
      },
      10 * heartbeatIntervalMs,
    );
    expect(new Date(renewed.spec?.renewTime ?? 0).getTime()).toBeGreaterThan(firstRenew);
  });

  it('beats and posts status as the node itself, not as the admin: the Node authorizer and NodeRestriction judge it', async () => {
    // The identity the API server sees on the connection every heartbeat, status and pod write uses.
    expect(await simulator?.nodeIdentity(nodeName)).toEqual({
      username: `system:node:${nodeName}`,
      groups: expect.arrayContaining(['system:nodes', 'system:authenticated']) as string[],
    });
    expect(simulator?.stats().requests['renew lease']).toBeGreaterThan(0);
  });

  it('posts Ready again within a heartbeat when the Node was marked Unknown while kubelet runs (after an outage)', async () => {
    await pollUntilDefined('Ready=True', async () =>
      readyStatus(await readNode(nodeName)) === 'True' ? true : undefined,
    );
    await markReadyUnknown(nodeName);
    await readyAgain(nodeName);
  });

  it('removes the startup taint after the delay, with a guarded write, and again when it comes back', async () => {
    const cleared = await pollUntilDefined('the startup taint to go', async () => {
      const node = await readNode(nodeName);
      return node && !taintKeys(node).includes(`${startupTaintKey}:NoExecute`) ? node : undefined;
    });
    expect(taintKeys(cleared)).toEqual(
      expect.arrayContaining(['karpenter.sh/unregistered:NoExecute', 'dedicated:NoSchedule']),
    );
    // The Node registered with it: the agent, not the registration, took it off.
    const history = seenNodes.get(nodeName) ?? [];
    expect(
      history.some(
        (n) => taintKeys(n).includes(`${startupTaintKey}:NoExecute`) && readyStatus(n) === 'False',
      ),
    ).toBe(true);

    // Registration copies startup taints back onto the Node; the agent removes them again.
    await core.patchNode(
      {
        name: nodeName,
        body: [{ op: 'add', path: '/spec/taints/-', value: { key: startupTaintKey, effect: 'NoExecute' } }],
      },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
    await pollUntilDefined('the re-added startup taint to go', async () => {
      const node = await readNode(nodeName);
      return node && !taintKeys(node).includes(`${startupTaintKey}:NoExecute`) ? node : undefined;
    });
  });

  it('adopts existing Nodes after a restart without duplicates, and deletes Nodes whose VM went away meanwhile', async () => {
    const before = await pollUntilDefined('the Node', () => readNode(nodeName));
    const otherName = `sim-${run}-b`;
    await compute.virtualMachines.beginCreateOrUpdateAndWait(
      resourceGroup,
      otherName,
      vmParameters(otherName, bootstrapFor(otherName, registerWithTaints.slice(0, 1), {})),
    );
    await pollUntilDefined('the second Node', () => readNode(otherName));

    await simulator?.stop();
    // While the simulator is down, the second VM goes away.
    await compute.virtualMachines.beginDeleteAndWait(resourceGroup, otherName);
    simulator = await startKubeletSimulator(simulatorOptions());

    expect(simulator.nodes()).toEqual([nodeName]);
    await pollUntilDefined('the orphan Node to be deleted', async () =>
      (await readNode(otherName)) ? undefined : true,
    );
    const after = await readNode(nodeName);
    expect(after?.metadata?.uid).toBe(before.metadata?.uid);
    const nodes = await core.listNode();
    expect(
      nodes.items.filter((n) => n.spec?.providerID?.toLowerCase() === providerId.toLowerCase()),
    ).toHaveLength(1);

    const leaseBefore = new Date((await readLease(nodeName))?.spec?.renewTime ?? 0).getTime();
    await pollUntilDefined(
      "the adopted Node's Lease to be renewed",
      async () => {
        const lease = await readLease(nodeName);
        return new Date(lease?.spec?.renewTime ?? 0).getTime() > leaseBefore ? true : undefined;
      },
      10 * heartbeatIntervalMs,
    );
    // Renewed as the node: the restarted simulator's kubelet has the node's certificate again.
    expect((await simulator.nodeIdentity(nodeName)).username).toBe(`system:node:${nodeName}`);
  });

  it('does not register a VM without bootstrap data', async () => {
    const bareName = `sim-${run}-bare`;
    const witnessName = `sim-${run}-witness`;
    await compute.virtualMachines.beginCreateOrUpdateAndWait(
      resourceGroup,
      bareName,
      vmParameters(bareName, undefined),
    );
    // A VM created after it, with bootstrap data: once its Node exists, the bare VM's boot delay has passed too.
    await compute.virtualMachines.beginCreateOrUpdateAndWait(
      resourceGroup,
      witnessName,
      vmParameters(witnessName, bootstrapFor(witnessName, [], {})),
    );
    await pollUntilDefined('the witness Node', () => readNode(witnessName));
    expect(await readNode(bareName)).toBeUndefined();
    await compute.virtualMachines.beginDeleteAndWait(resourceGroup, bareName);
    await compute.virtualMachines.beginDeleteAndWait(resourceGroup, witnessName);
    await pollUntilDefined('the witness Node to go', async () =>
      (await readNode(witnessName)) ? undefined : true,
    );
  });

  it('joined the way kubelet does: its bootstrap token asked for a client certificate, the controller manager approved and signed it', async () => {
    const tokenId = validToken.split('.')[0];
    const csrs = await kubeConfig.makeApiClient(CertificatesV1Api).listCertificateSigningRequest();
    const mine = csrs.items.filter((csr) => csr.spec.username === `system:bootstrap:${tokenId}`);
    expect(mine.length).toBeGreaterThan(0);
    for (const csr of mine) {
      expect(csr.spec.signerName).toBe('kubernetes.io/kube-apiserver-client-kubelet');
      expect(csr.spec.groups).toContain('system:bootstrappers:nodeclaim-azure');
      expect(csr.status?.conditions?.map((c) => c.type)).toContain('Approved');
      expect(csr.status?.certificate).toBeTruthy();
    }
  });

  it('cannot join with an expired or a deleted token', async () => {
    const expired = await createBootstrapToken(core, new Date(Date.now() - 60_000));
    const deleted = await createBootstrapToken(core, new Date(Date.now() + 20 * 60_000));
    await core.deleteNamespacedSecret({
      name: `bootstrap-token-${deleted.split('.')[0]}`,
      namespace: 'kube-system',
    });
    const names = [`sim-${run}-expired`, `sim-${run}-deleted`];
    const witnessName = `sim-${run}-witness2`;
    await compute.virtualMachines.beginCreateOrUpdateAndWait(
      resourceGroup,
      names[0] as string,
      vmParameters(names[0] as string, bootstrapFor(names[0] as string, [], {}, expired)),
    );
    await compute.virtualMachines.beginCreateOrUpdateAndWait(
      resourceGroup,
      names[1] as string,
      vmParameters(names[1] as string, bootstrapFor(names[1] as string, [], {}, deleted)),
    );
    // A VM with a valid token, created after them: once its Node exists, theirs had their chance too.
    await compute.virtualMachines.beginCreateOrUpdateAndWait(
      resourceGroup,
      witnessName,
      vmParameters(witnessName, bootstrapFor(witnessName, [], {})),
    );
    await pollUntilDefined('the witness Node', () => readNode(witnessName));
    for (const name of names) expect(await readNode(name)).toBeUndefined();
    for (const name of [...names, witnessName])
      await compute.virtualMachines.beginDeleteAndWait(resourceGroup, name);
    await pollUntilDefined('the witness Node to go', async () =>
      (await readNode(witnessName)) ? undefined : true,
    );
  });

  it('deletes the Node when its VM is deleted', async () => {
    await compute.virtualMachines.beginDeleteAndWait(resourceGroup, vmName);
    await pollUntilDefined('the Node to be deleted', async () =>
      (await readNode(nodeName)) ? undefined : true,
    );
    expect(simulator?.nodes()).toEqual([]);
    // The garbage collector removes the Lease with its owner.
    await pollUntilDefined('the Lease to be collected', async () =>
      (await readLease(nodeName)) ? undefined : true,
    );
  });
});

describe('kubelet simulator with its Leases renewed from a process of their own (a scale stack)', () => {
  // Its own resource group: this simulator and the one above each handle only their own VMs.
  const group = `${resourceGroup}-leases`;
  const name = `sim-${run}-l`;
  let own: KubeletSimulator | undefined;
  const renewTimeOf = async (): Promise<number> =>
    new Date((await readLease(name))?.spec?.renewTime ?? 0).getTime();

  beforeAll(async () => {
    own = await startKubeletSimulator({ ...simulatorOptions(), resourceGroup: group, leaseProcess: true });
  });
  afterAll(async () => {
    await own?.stop();
  });

  it('renews the Lease as the node from the other process, and corrects a Ready=Unknown after a renewal', async () => {
    await compute.virtualMachines.beginCreateOrUpdateAndWait(
      group,
      name,
      vmParameters(name, bootstrapFor(name, [], {}), group),
    );
    const node = await pollUntilDefined('the Node Ready', async () => {
      const read = await readNode(name);
      return readyStatus(read) === 'True' ? read : undefined;
    });
    const first = await pollUntilDefined('the Lease', () => readLease(name));
    expect(first.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'Node', uid: node.metadata?.uid });
    const firstRenew = new Date(first.spec?.renewTime ?? 0).getTime();
    await pollUntilDefined(
      'a later renewTime',
      async () => ((await renewTimeOf()) > firstRenew ? true : undefined),
      10 * heartbeatIntervalMs,
    );
    // The renewer reports its requests; a Lease write by anyone but the node would be refused by the
    // Node authorizer (the admin's connection is never handed to it).
    await pollUntilDefined(
      'the renewer to report its renewals',
      async () => ((own?.stats().requests['renew lease'] ?? 0) > 0 ? true : undefined),
      10 * heartbeatIntervalMs,
    );
    await markReadyUnknown(name);
    await readyAgain(name);
  });

  it('stops renewing when kubelet stops', async () => {
    own?.stopKubelet(name);
    // A renewal already in flight may still land; after that, nothing more.
    await new Promise((resolve) => setTimeout(resolve, 2 * heartbeatIntervalMs));
    const after = await renewTimeOf();
    await new Promise((resolve) => setTimeout(resolve, 3 * heartbeatIntervalMs));
    expect(await renewTimeOf()).toBe(after);
    await compute.virtualMachines.beginDeleteAndWait(group, name);
    await pollUntilDefined('the Node to be deleted', async () => ((await readNode(name)) ? undefined : true));
  });
});
