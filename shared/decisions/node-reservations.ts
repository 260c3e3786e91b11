// What an AKS node keeps back from its VM size before pods get anything: the memory the hypervisor and
// the VM's own firmware take (the guest sees less than the size's nominal memory), kubelet's
// kube-reserved CPU and memory, the hard eviction threshold, and the pod limit. One pure source for both
// the figures the scheduler plans with (capacityFor) and the kubelet flags the node enforces
// (kubeletReservationFlags), so they cannot disagree.
import { atLeast, minorVersion } from './kubernetes-version.js';
import type { NetworkPlugin, NetworkPluginMode } from '../cloudprovider/azure/decisions/network-mode.js';

/**
 * The share of a size's nominal memory the guest kernel does not see: the Azure provider's default of
 * VM_MEMORY_OVERHEAD_PERCENT (7.5%, written as the fraction 0.075, as upstream writes it).
 */
export const VM_MEMORY_OVERHEAD_FRACTION = 0.075;

/**
 * AKS changed its memory reservation with Kubernetes 1.29:
 * - "1.29+": kube-reserved = min(20 MiB × max pods + 50 MiB, 25% of the size's memory); eviction at
 *   memory.available<100Mi;
 * - "pre-1.29": kube-reserved regressive by memory (25% of the first 4 GiB, 20% of the next 4, 10% of
 *   the next 8, 6% of the next 112, 2% above 128 GiB); eviction at memory.available<750Mi.
 * CPU reservation is the same in both.
 */
export type ReservationFormula = '1.29+' | 'pre-1.29';

/**
 * The formula for a cluster's Kubernetes version ("1.28.5", "v1.30", …). Without a readable version it
 * is "1.29+": every version AKS still supports is 1.29 or newer.
 */
export function reservationFormulaFor(kubernetesVersion: string | undefined): ReservationFormula {
  const version = minorVersion(kubernetesVersion ?? '');
  return version && !atLeast(version, 1, 29) ? 'pre-1.29' : '1.29+';
}

/** The cluster-wide facts reservations depend on; undefined fields take AKS's defaults. */
export interface ClusterNodeSettings {
  kubernetesVersion?: string;
  /** AKS's default for new clusters is Azure CNI Overlay (azure + overlay). */
  networkPlugin?: NetworkPlugin;
  /** "overlay" (Azure CNI Overlay) or empty (node-subnet), as networkProfile.networkPluginMode. */
  networkPluginMode?: NetworkPluginMode;
  /** VM_MEMORY_OVERHEAD_PERCENT as a fraction; VM_MEMORY_OVERHEAD_FRACTION when unset. */
  vmMemoryOverheadFraction?: number;
}

/**
 * AKS's default max pods per node: 250 with Azure CNI Overlay or with no AKS-managed CNI ("none"), 30
 * with Azure CNI node-subnet (every pod takes a VNet address from the node's subnet). Kubenet (110) is
 * not a supported network mode (network-mode.ts), so it has no branch here.
 */
export function defaultMaxPods(settings: ClusterNodeSettings): number {
  if (settings.networkPlugin === undefined || settings.networkPlugin === 'none') return 250;
  return settings.networkPluginMode === 'overlay' ? 250 : 30;
}

/** The node's pod limit: the AKSNodeClass's maxPods when set, else the network plugin's default. */
export function maxPodsFor(nodeClassMaxPods: number | undefined, settings: ClusterNodeSettings): number {
  return nodeClassMaxPods ?? defaultMaxPods(settings);
}

interface Bracket {
  /** Upper bound of the bracket, in the unit the brackets are applied to. */
  upTo: number;
  rate: number;
}

// Applies each rate to the part of `amount` that falls inside its bracket.
function regressive(brackets: readonly Bracket[], amount: number): number {
  let total = 0;
  let lower = 0;
  for (const { upTo, rate } of brackets) {
    if (amount <= lower) break;
    total += (Math.min(amount, upTo) - lower) * rate;
    lower = upTo;
  }
  return total;
}

const CPU_BRACKETS_CORES: readonly Bracket[] = [
  { upTo: 1, rate: 0.06 },
  { upTo: 2, rate: 0.04 },
  { upTo: 4, rate: 0.02 },
  { upTo: Infinity, rate: 0.01 },
];

const MEMORY_BRACKETS_GIB_PRE_129: readonly Bracket[] = [
  { upTo: 4, rate: 0.25 },
  { upTo: 8, rate: 0.2 },
  { upTo: 16, rate: 0.1 },
  { upTo: 128, rate: 0.06 },
  { upTo: Infinity, rate: 0.02 },
];

/** AKS's kube-reserved CPU: 6% of the first core, 4% of the second, 2% of cores 3–4, 1% of the rest. */
export function kubeReservedMilliCpu(cores: number): number {
  return Math.round(1000 * regressive(CPU_BRACKETS_CORES, cores));
}

/** AKS's kube-reserved memory for a size with `memoryMiB` nominal memory (see ReservationFormula). */
export function kubeReservedMemoryMiB(
  memoryMiB: number,
  maxPods: number,
  formula: ReservationFormula,
): number {
  if (formula === 'pre-1.29')
    return Math.floor(1024 * regressive(MEMORY_BRACKETS_GIB_PRE_129, memoryMiB / 1024));
  return Math.min(20 * maxPods + 50, Math.floor(memoryMiB * 0.25));
}

/** kubelet's hard memory eviction threshold AKS configures (memory.available<…). */
export function evictionHardMemoryMiB(formula: ReservationFormula): number {
  return formula === 'pre-1.29' ? 750 : 100;
}

/** The node's root filesystem eviction thresholds AKS configures beside the memory one. */
export const EVICTION_HARD_NODEFS_FRACTION = 0.1;
const EVICTION_HARD_NODEFS_INODES = '5%';

/**
 * Memory the guest sees for a size with `memoryMiB` nominal memory, in KiB (what kubelet reports), with
 * `overheadFraction` of it taken by the hypervisor (VM_MEMORY_OVERHEAD_PERCENT).
 */
export function vmVisibleMemoryKiB(
  memoryMiB: number,
  overheadFraction: number = VM_MEMORY_OVERHEAD_FRACTION,
): number {
  const nominalKiB = memoryMiB * 1024;
  return nominalKiB - Math.ceil(nominalKiB * overheadFraction);
}

export interface NodeReservations {
  formula: ReservationFormula;
  maxPods: number;
  kubeReservedMilliCpu: number;
  kubeReservedMemoryMiB: number;
  evictionHardMemoryMiB: number;
}

/** Everything a node of this shape keeps back, for the cluster's version and network plugin. */
export function nodeReservations(
  size: { cpu: number; memoryMiB: number },
  options: { maxPods?: number } & ClusterNodeSettings = {},
): NodeReservations {
  const formula = reservationFormulaFor(options.kubernetesVersion);
  const maxPods = maxPodsFor(options.maxPods, options);
  return {
    formula,
    maxPods,
    kubeReservedMilliCpu: kubeReservedMilliCpu(size.cpu),
    kubeReservedMemoryMiB: kubeReservedMemoryMiB(size.memoryMiB, maxPods, formula),
    evictionHardMemoryMiB: evictionHardMemoryMiB(formula),
  };
}

/** kubelet's --kube-reserved, --eviction-hard and --max-pods values for these reservations. */
export interface KubeletReservationFlags {
  'kube-reserved': string;
  'eviction-hard': string;
  'max-pods': string;
}

/**
 * The kubelet flags that make the node enforce what capacityFor plans with. --eviction-hard replaces
 * kubelet's whole default set, so the filesystem thresholds AKS keeps are repeated beside the memory one.
 */
export function kubeletReservationFlags(reservations: NodeReservations): KubeletReservationFlags {
  return {
    'kube-reserved': `cpu=${reservations.kubeReservedMilliCpu}m,memory=${reservations.kubeReservedMemoryMiB}Mi`,
    'eviction-hard': [
      `memory.available<${reservations.evictionHardMemoryMiB}Mi`,
      `nodefs.available<${EVICTION_HARD_NODEFS_FRACTION * 100}%`,
      `nodefs.inodesFree<${EVICTION_HARD_NODEFS_INODES}`,
    ].join(','),
    'max-pods': String(reservations.maxPods),
  };
}
