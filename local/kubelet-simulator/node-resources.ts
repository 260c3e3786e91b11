// What a simulated node reports as capacity and allocatable: the VM size's vCPUs and memory from the
// emulator's SKU catalog, minus the reservations an AKS node's kubelet is configured with, so schedulers
// and bin-packing see the same numbers they would on Azure. The reservations come from the kubelet flags
// in the VM's bootstrap data, never from the NodeClaim, so a disagreement between what launch planned and
// what the node enforces shows up as it would on Azure.
import { vmVisibleMemoryKiB } from '../../shared/decisions/node-reservations.js';
import { capabilityValue, type ResourceSku } from '../arm-emulator/index.js';

export type NodeArchitecture = 'amd64' | 'arm64';

export interface VmHardware {
  vcpus: number;
  memoryMi: number;
  architecture: NodeArchitecture;
  /** GPUs the NVIDIA device plugin would advertise (the size's GPUs capability on an N-series size). */
  nvidiaGpus: number;
}

export interface NodeResources {
  capacity: Record<string, string>;
  allocatable: Record<string, string>;
}

export const defaultMaxPods = 110;
/** AKS's default OS disk size; the emulator does not report disk sizes back. */
export const defaultOsDiskGi = 128;

/** The hardware of `vmSize` in `location`, or undefined when the catalog does not list it there. */
export function vmHardware(
  catalog: readonly ResourceSku[],
  vmSize: string,
  location: string,
): VmHardware | undefined {
  const size = vmSize.toLowerCase();
  const region = location.toLowerCase();
  const sku = catalog.find(
    (s) => s.name.toLowerCase() === size && s.locations.some((l) => l.toLowerCase() === region),
  );
  if (!sku) return undefined;
  const vcpus = Number(capabilityValue(sku, 'vCPUs'));
  const memoryGb = Number(capabilityValue(sku, 'MemoryGB'));
  if (!(vcpus > 0) || !(memoryGb > 0)) return undefined;
  return {
    vcpus,
    memoryMi: Math.round(memoryGb * 1024),
    architecture: capabilityValue(sku, 'CpuArchitectureType') === 'Arm64' ? 'arm64' : 'amd64',
    nvidiaGpus: /^standard_n/i.test(sku.name) ? Number(capabilityValue(sku, 'GPUs') ?? '0') || 0 : 0,
  };
}

/** What kubelet keeps back, read from its flags as kubelet would; kubelet's own defaults when absent. */
export interface KubeletReservations {
  maxPods: number;
  kubeReservedMilliCpu: number;
  kubeReservedMemoryMi: number;
  evictionMemoryMi: number;
}

/** kubelet's defaults: no kube-reserved, --max-pods=110, memory.available<100Mi. */
const kubeletDefaults: KubeletReservations = {
  maxPods: defaultMaxPods,
  kubeReservedMilliCpu: 0,
  kubeReservedMemoryMi: 0,
  evictionMemoryMi: 100,
};

function mebibytes(quantity: string | undefined): number | undefined {
  const match = /^(\d+)(Mi|Gi|Ki)?$/.exec(quantity ?? '');
  if (!match) return undefined;
  const value = Number(match[1]);
  return match[2] === 'Gi'
    ? value * 1024
    : match[2] === 'Ki'
      ? value / 1024
      : match[2] === 'Mi'
        ? value
        : value / 1048576;
}

/** Reads --max-pods, --kube-reserved (cpu=…m,memory=…Mi) and --eviction-hard (memory.available<…). */
export function kubeletReservations(flags: Readonly<Record<string, string>>): KubeletReservations {
  const maxPods = Number(flags['max-pods']);
  const reserved = Object.fromEntries(
    (flags['kube-reserved'] ?? '').split(',').map((pair) => pair.split('=') as [string, string]),
  );
  const cpu = /^(\d+)m$/.exec(reserved['cpu'] ?? '');
  const evictionMemory = /memory\.available<([^,]+)/.exec(flags['eviction-hard'] ?? '')?.[1];
  return {
    maxPods: Number.isInteger(maxPods) && maxPods > 0 ? maxPods : kubeletDefaults.maxPods,
    kubeReservedMilliCpu: cpu ? Number(cpu[1]) : kubeletDefaults.kubeReservedMilliCpu,
    kubeReservedMemoryMi: mebibytes(reserved['memory']) ?? kubeletDefaults.kubeReservedMemoryMi,
    evictionMemoryMi: mebibytes(evictionMemory) ?? kubeletDefaults.evictionMemoryMi,
  };
}

/**
 * Capacity as Azure's guest sees it (the size's memory less the VM overhead) and allocatable as kubelet
 * computes it from its flags: capacity − kube-reserved − the hard eviction threshold.
 */
export function nodeResources(
  hardware: VmHardware,
  reservations: KubeletReservations,
  osDiskGi = defaultOsDiskGi,
): NodeResources {
  const diskKi = osDiskGi * 1024 * 1024;
  const memoryKi = vmVisibleMemoryKiB(hardware.memoryMi);
  const reservedKi = Math.round((reservations.kubeReservedMemoryMi + reservations.evictionMemoryMi) * 1024);
  return {
    capacity: {
      cpu: String(hardware.vcpus),
      memory: `${memoryKi}Ki`,
      pods: String(reservations.maxPods),
      'ephemeral-storage': `${diskKi}Ki`,
      ...(hardware.nvidiaGpus > 0 ? { 'nvidia.com/gpu': String(hardware.nvidiaGpus) } : {}),
    },
    allocatable: {
      cpu: `${Math.max(0, hardware.vcpus * 1000 - reservations.kubeReservedMilliCpu)}m`,
      memory: `${Math.max(0, memoryKi - reservedKi)}Ki`,
      pods: String(reservations.maxPods),
      // kubelet's default nodefs.available<10% eviction threshold.
      'ephemeral-storage': `${Math.floor(diskKi * 0.9)}Ki`,
      ...(hardware.nvidiaGpus > 0 ? { 'nvidia.com/gpu': String(hardware.nvidiaGpus) } : {}),
    },
  };
}
