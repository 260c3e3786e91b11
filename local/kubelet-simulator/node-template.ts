// The Node a kubelet registers, and the status writes it makes afterwards, as plain functions of the VM,
// the AKSNodeConfig decoded from its custom data, and the time. Labels and taints come only from that
// configuration (what the kubelet on that VM would be started with), never from the NodeClaim.
import type { V1Node, V1NodeCondition } from '@kubernetes/client-node';
import type { KubeletRegistration } from '../../shared/cloudprovider/azure/decisions/aks-node-config.js';
import type { EmulatedVm } from '../arm-emulator/index.js';
import { kubeletReservations, nodeResources, type VmHardware } from './node-resources.js';

export interface RegistrationInput {
  nodeName: string;
  providerId: string;
  vm: Pick<EmulatedVm, 'vmId' | 'vmSize' | 'location' | 'zones'>;
  bootstrap: KubeletRegistration;
  hardware: VmHardware;
  kubeletVersion: string;
  /** Random per boot, as /proc/sys/kernel/random/boot_id is. */
  bootId: string;
  now: Date;
}

export const nodeLeaseNamespace = 'kube-node-lease';
/** kubelet's default --node-lease-duration-seconds. */
export const leaseDurationSeconds = 40;

/**
 * Labels in the order they are applied: kubelet's own, then what the cloud node controller adds for an
 * Azure VM (only where the kubelet flags did not already say), then --node-labels, which win as they do
 * in kubelet.
 */
export function nodeLabels(input: Pick<RegistrationInput, 'nodeName' | 'vm' | 'bootstrap' | 'hardware'>) {
  const { nodeName, vm, bootstrap, hardware } = input;
  const zone = vm.zones[0];
  return {
    'kubernetes.io/hostname': nodeName,
    'kubernetes.io/os': 'linux',
    'beta.kubernetes.io/os': 'linux',
    'kubernetes.io/arch': hardware.architecture,
    'beta.kubernetes.io/arch': hardware.architecture,
    'node.kubernetes.io/instance-type': vm.vmSize,
    'topology.kubernetes.io/region': vm.location,
    // Azure's zone label is "<region>-<zone>"; a VM without a zone reports fault domain "0".
    'topology.kubernetes.io/zone': zone === undefined ? '0' : `${vm.location}-${zone}`,
    ...bootstrap.nodeLabels,
  };
}

const pressureConditions: Array<Pick<V1NodeCondition, 'type' | 'reason' | 'message'>> = [
  {
    type: 'MemoryPressure',
    reason: 'KubeletHasSufficientMemory',
    message: 'kubelet has sufficient memory available',
  },
  { type: 'DiskPressure', reason: 'KubeletHasNoDiskPressure', message: 'kubelet has no disk pressure' },
  { type: 'PIDPressure', reason: 'KubeletHasSufficientPID', message: 'kubelet has sufficient PID available' },
];

/**
 * The Node as kubelet creates it: Ready=False until the network plugin is up. The
 * node.kubernetes.io/not-ready:NoSchedule taint is not written here: the API server's
 * TaintNodesByCondition admission plugin adds it to every new Node, as it does for a real kubelet.
 */
export function registrationNode(input: RegistrationInput): V1Node {
  const { nodeName, providerId, vm, bootstrap, hardware, now } = input;
  const resources = nodeResources(hardware, kubeletReservations(bootstrap.kubeletFlags));
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: nodeName,
      labels: nodeLabels(input),
      annotations: { 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' },
    },
    spec: {
      providerID: providerId,
      ...(bootstrap.registerWithTaints.length > 0
        ? {
            taints: bootstrap.registerWithTaints.map((t) =>
              t.value ? { key: t.key, value: t.value, effect: t.effect } : { key: t.key, effect: t.effect },
            ),
          }
        : {}),
    },
    status: {
      capacity: resources.capacity,
      allocatable: resources.allocatable,
      conditions: [
        ...pressureConditions.map((c) => ({
          ...c,
          status: 'False',
          lastHeartbeatTime: now,
          lastTransitionTime: now,
        })),
        {
          type: 'Ready',
          status: 'False',
          reason: 'KubeletNotReady',
          message:
            'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:cni plugin not initialized',
          lastHeartbeatTime: now,
          lastTransitionTime: now,
        },
      ],
      addresses: [{ type: 'Hostname', address: nodeName }],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: vm.vmId.replaceAll('-', ''),
        systemUUID: vm.vmId,
        bootID: input.bootId,
        // Nothing runs on a simulated node; these say so rather than pretend to be a real image.
        kernelVersion: 'simulated',
        osImage: 'kubelet-simulator',
        containerRuntimeVersion: 'simulated://0',
        kubeletVersion: input.kubeletVersion,
        kubeProxyVersion: '',
        operatingSystem: 'linux',
        architecture: hardware.architecture,
      },
    },
  };
}

interface StatusPatch {
  status: { conditions: Array<Record<string, string>> };
}

/** Strategic merge patch of the status subresource: Ready=True, as kubelet posts once the CNI is up. */
export function readyStatusPatch(now: Date): StatusPatch {
  const time = now.toISOString();
  return {
    status: {
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'KubeletReady',
          message: 'kubelet is posting ready status',
          lastHeartbeatTime: time,
          lastTransitionTime: time,
        },
      ],
    },
  };
}

/**
 * kubelet's periodic status report (every 5 minutes when Leases carry the heartbeat): fresh
 * lastHeartbeatTime on each condition it owns; conditions merge by type, so nothing else changes.
 */
export function heartbeatStatusPatch(conditionTypes: readonly string[], now: Date): StatusPatch {
  const time = now.toISOString();
  return { status: { conditions: conditionTypes.map((type) => ({ type, lastHeartbeatTime: time })) } };
}

/** The taints left once an agent has removed its startup taints (by key, any effect). */
export function withoutTaintKeys<T extends { key: string }>(
  taints: readonly T[],
  keys: readonly string[],
): T[] {
  return taints.filter((taint) => !keys.includes(taint.key));
}
