// What a simulated node reports as capacity and allocatable: the VM size's vCPUs and memory from the
// emulator's SKU catalog, minus the reservations an AKS node's kubelet is configured with, so schedulers
// and bin-packing see the same numbers they would on Azure.
import { capabilityValue, type ResourceSku } from '../arm-emulator/index.js';

export type NodeArchitecture = 'amd64' | 'arm64';

export interface VmHardware {
  vcpus: number;
  memoryMi: number;
  architecture: NodeArchitecture;
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
  };
}

/**
 * AKS's kube-reserved CPU: 60m for the first core, 40m for the second, 20m each for the third and
 * fourth, 10m for every further core (1 → 60m, 2 → 100m, 4 → 140m, 8 → 180m, 16 → 260m).
 */
export function kubeReservedMilliCpu(vcpus: number): number {
  let reserved = 0;
  for (let core = 1; core <= vcpus; core++) {
    reserved += core === 1 ? 60 : core === 2 ? 40 : core <= 4 ? 20 : 10;
  }
  return reserved;
}

/** AKS (1.29+) kube-reserved memory is 20Mi per pod plus 50Mi; the hard eviction threshold is 100Mi. */
export function reservedMemoryMi(maxPods: number): number {
  return 20 * maxPods + 50 + 100;
}

export function nodeResources(
  hardware: VmHardware,
  maxPods: number,
  osDiskGi = defaultOsDiskGi,
): NodeResources {
  const diskKi = osDiskGi * 1024 * 1024;
  return {
    capacity: {
      cpu: String(hardware.vcpus),
      memory: `${hardware.memoryMi * 1024}Ki`,
      pods: String(maxPods),
      'ephemeral-storage': `${diskKi}Ki`,
    },
    allocatable: {
      cpu: `${hardware.vcpus * 1000 - kubeReservedMilliCpu(hardware.vcpus)}m`,
      memory: `${Math.max(0, hardware.memoryMi - reservedMemoryMi(maxPods)) * 1024}Ki`,
      pods: String(maxPods),
      // kubelet's default nodefs.available<10% eviction threshold.
      'ephemeral-storage': `${Math.floor(diskKi * 0.9)}Ki`,
    },
  };
}
