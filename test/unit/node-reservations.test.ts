import { describe, expect, it } from 'vitest';
import { capacityFor } from '../../shared/decisions/offerings.js';
import {
  defaultMaxPods,
  kubeletReservationFlags,
  kubeReservedMemoryMiB,
  kubeReservedMilliCpu,
  maxPodsFor,
  nodeReservations,
  reservationFormulaFor,
  vmVisibleMemoryKiB,
} from '../../shared/decisions/node-reservations.js';

// AKS's published node resource reservations (learn.microsoft.com, "Node resource reservations in AKS").
describe('AKS reservation tables', () => {
  it.each([
    [1, 60],
    [2, 100],
    [4, 140],
    [8, 180],
    [16, 260],
    [32, 420],
    [64, 740],
  ])('kube-reserved CPU for %i cores is %im', (cores, milli) => {
    expect(kubeReservedMilliCpu(cores)).toBe(milli);
  });

  // 1.29+: the lesser of 20 MB × max pods + 50 MB and 25% of the memory. The page's own examples are
  // 8 GB with 30 pods → 650 MB, and 4 GB with 70 pods → 25% of 4 GB.
  it.each([
    [8192, 30, 650],
    [4096, 70, 1024],
    [8192, 110, 2048],
    [65536, 110, 2250],
    [65536, 250, 5050],
  ])('1.29+: kube-reserved memory for %iMi with %i pods is %iMi', (memory, pods, reserved) => {
    expect(kubeReservedMemoryMiB(memory, pods, '1.29+')).toBe(reserved);
  });

  // Before 1.29: 25% of the first 4 GiB, 20% of the next 4, 10% of the next 8, 6% up to 128, 2% above.
  it.each([
    [4, 1024],
    [8, 1843],
    [16, 2662],
    [32, 3645],
    [64, 5611],
    [128, 9543],
    [256, 12165],
  ])('pre-1.29: kube-reserved memory for %i GiB is %iMi whatever the pod limit', (gib, reserved) => {
    expect(kubeReservedMemoryMiB(gib * 1024, 110, 'pre-1.29')).toBe(reserved);
    expect(kubeReservedMemoryMiB(gib * 1024, 30, 'pre-1.29')).toBe(reserved);
  });

  it.each([
    ['1.28.9', 'pre-1.29'],
    ['v1.27', 'pre-1.29'],
    ['1.29.0', '1.29+'],
    ['1.34.1', '1.29+'],
    ['2.0', '1.29+'],
    [undefined, '1.29+'],
    ['not a version', '1.29+'],
  ] as const)('Kubernetes %s uses the %s formula', (version, formula) => {
    expect(reservationFormulaFor(version)).toBe(formula);
  });
});

describe('max pods', () => {
  it.each([
    [{}, 250],
    [{ networkPlugin: 'azure', networkPluginMode: 'overlay' }, 250],
    [{ networkPlugin: 'azure' }, 30],
    [{ networkPlugin: 'azure', networkPluginMode: '' }, 30],
    [{ networkPlugin: 'none' }, 250],
  ] as const)('network plugin %o defaults to %i', (settings, pods) => {
    expect(defaultMaxPods(settings)).toBe(pods);
  });

  it("the AKSNodeClass's maxPods wins over the plugin default", () => {
    expect(maxPodsFor(40, { networkPlugin: 'azure' })).toBe(40);
    expect(maxPodsFor(undefined, { networkPlugin: 'azure' })).toBe(30);
  });
});

// Allocatable of sizes across families, as kubelet on an AKS node reports it: the guest sees 92.5% of
// the size's memory; kube-reserved and the eviction threshold come off that.
describe('allocatable across families', () => {
  it.each([
    // size, vCPUs, GiB, Kubernetes, max pods, allocatable cpu, allocatable memory (Ki)
    ['Standard_B2s', 2, 4, '1.33.2', 250, '1900m', 2728755],
    ['Standard_B2s', 2, 4, '1.33.2', 30, '1900m', 3111731],
    ['Standard_D2s_v5', 2, 8, '1.33.2', 250, '1900m', 5559910],
    ['Standard_D2s_v5', 2, 8, '1.33.2', 30, '1900m', 6991462],
    // The Azure provider's figure for an 8 GiB size (its pre-1.29 table): 4,985 Mi.
    ['Standard_D2s_v5', 2, 8, '1.28.5', 110, '1900m', 5104230],
    ['Standard_D2ps_v5', 2, 8, '1.33.2', 110, '1900m', 5559910],
    ['Standard_D4s_v5', 4, 16, '1.33.2', 110, '3860m', 13112524],
    ['Standard_D4s_v5', 4, 16, '1.28.5', 110, '3860m', 12025036],
    ['Standard_E8s_v5', 8, 64, '1.33.2', 250, '7820m', 56802099],
    ['Standard_E8s_v5', 8, 64, '1.28.5', 110, '7820m', 55562035],
    ['Standard_F16s_v2', 16, 32, '1.33.2', 250, '15740m', 25764249],
    ['Standard_F16s_v2', 16, 32, '1.28.5', 110, '15740m', 26537369],
    ['Standard_NC24ads_A100_v4', 24, 220, '1.33.2', 250, '23660m', 208111616],
    ['Standard_M128s', 128, 2048, '1.28.5', 110, '126620m', 1935616614],
  ])(
    '%s (%i vCPU, %i GiB) on %s with %i pods',
    (_size, cpu, gib, kubernetesVersion, maxPods, allocCpu, allocKi) => {
      const { capacity, allocatable } = capacityFor(
        { cpu, memoryMiB: gib * 1024 },
        { kubernetesVersion, maxPods },
      );
      expect(capacity.memory).toBe(`${vmVisibleMemoryKiB(gib * 1024)}Ki`);
      expect(allocatable).toMatchObject({ cpu: allocCpu, memory: `${allocKi}Ki`, pods: String(maxPods) });
    },
  );

  it('capacity memory is the size less 7.5% (rounded as kubelet reports KiB)', () => {
    expect(vmVisibleMemoryKiB(8192)).toBe(7759462);
  });
});

describe('kubelet flags', () => {
  it('carry exactly the reservations allocatable was computed with', () => {
    const reservations = nodeReservations({ cpu: 4, memoryMiB: 16384 }, { kubernetesVersion: '1.30.1' });
    expect(reservations).toEqual({
      formula: '1.29+',
      maxPods: 250,
      kubeReservedMilliCpu: 140,
      kubeReservedMemoryMiB: 4096,
      evictionHardMemoryMiB: 100,
    });
    expect(kubeletReservationFlags(reservations)).toEqual({
      'kube-reserved': 'cpu=140m,memory=4096Mi',
      'eviction-hard': 'memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%',
      'max-pods': '250',
    });
  });

  it('use the 750Mi eviction threshold before 1.29', () => {
    const flags = kubeletReservationFlags(
      nodeReservations(
        { cpu: 2, memoryMiB: 8192 },
        { kubernetesVersion: '1.28.3', networkPlugin: 'azure', networkPluginMode: '' },
      ),
    );
    expect(flags).toEqual({
      'kube-reserved': 'cpu=100m,memory=1843Mi',
      'eviction-hard': 'memory.available<750Mi,nodefs.available<10%,nodefs.inodesFree<5%',
      'max-pods': '30',
    });
  });
});
