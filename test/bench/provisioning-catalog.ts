// A synthetic Azure-like catalog of more than 400 VM sizes for the provisioning bench: D/E series in
// several variants and generations, F, L and M series, 2 to 96 vCPUs, three zones, spot where the
// series allows it. Prices follow the shape of Azure's list prices (a rate per vCPU by series and
// variant, memory-heavy series dearer, spot about a fifth) with a small deterministic spread, so the
// cheapest-first ordering has real choices to make. Instance types go through the same conversion as
// the real catalog (instanceTypesFromOfferings, capacityFor).
import type { CapacityType } from '../../shared/models/karpenter.js';
import type { Offering } from '../../shared/decisions/offerings.js';
import { instanceTypesFromOfferings } from '../../shared/decisions/scheduling/catalog-instance-types.js';
import type { InstanceType } from '../../shared/decisions/scheduling/types.js';

interface Series {
  prefix: string;
  suffixes: { suffix: string; rate: number; arch?: 'arm64' }[];
  versions: string[];
  memoryPerVcpu: number;
  sizes: number[];
}

const SIZES = [2, 4, 8, 16, 32, 48, 64, 96];
const series: Series[] = [
  {
    prefix: 'D',
    memoryPerVcpu: 4,
    versions: ['v4', 'v5', 'v6'],
    sizes: SIZES,
    suffixes: [
      { suffix: 's', rate: 0.048 },
      { suffix: 'ds', rate: 0.057 },
      { suffix: 'as', rate: 0.043 },
      { suffix: 'ads', rate: 0.052 },
      { suffix: 'ps', rate: 0.039, arch: 'arm64' },
      { suffix: 'pds', rate: 0.045, arch: 'arm64' },
      { suffix: 'lds', rate: 0.05 },
      { suffix: 'ls', rate: 0.044 },
      { suffix: 'als', rate: 0.041 },
    ],
  },
  {
    prefix: 'E',
    memoryPerVcpu: 8,
    versions: ['v4', 'v5', 'v6'],
    sizes: SIZES,
    suffixes: [
      { suffix: 's', rate: 0.063 },
      { suffix: 'ds', rate: 0.072 },
      { suffix: 'as', rate: 0.057 },
      { suffix: 'ads', rate: 0.065 },
      { suffix: 'ps', rate: 0.05, arch: 'arm64' },
      { suffix: 'pds', rate: 0.058, arch: 'arm64' },
      { suffix: 'bs', rate: 0.07 },
    ],
  },
  {
    prefix: 'F',
    memoryPerVcpu: 2,
    versions: ['v2', 'v6'],
    sizes: [2, 4, 8, 16, 32, 48, 64, 72],
    suffixes: [
      { suffix: 's', rate: 0.0423 },
      { suffix: 'as', rate: 0.0405 },
    ],
  },
  {
    prefix: 'L',
    memoryPerVcpu: 8,
    versions: ['v3'],
    sizes: [8, 16, 32, 48, 64, 80],
    suffixes: [{ suffix: 's', rate: 0.078 }],
  },
  {
    prefix: 'M',
    memoryPerVcpu: 24,
    versions: ['v2'],
    sizes: [8, 16, 32, 64],
    suffixes: [{ suffix: 's', rate: 0.2 }],
  },
];

function spread(name: string): number {
  let hash = 0;
  for (const char of name) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  return 0.97 + (hash % 60) / 1000;
}

export const BENCH_ZONES = ['westus2-1', 'westus2-2', 'westus2-3'];

export function benchCatalog(): InstanceType[] {
  const offerings: Offering[] = [];
  const prices = new Map<string, number>();
  for (const s of series) {
    for (const version of s.versions) {
      for (const variant of s.suffixes) {
        for (const cpu of s.sizes) {
          const vmSize = `Standard_${s.prefix}${cpu}${variant.suffix}_${version}`;
          prices.set(vmSize, Number((variant.rate * cpu * spread(vmSize)).toFixed(4)));
          for (const [index, zone] of BENCH_ZONES.entries()) {
            for (const capacityType of ['spot', 'on-demand'] as CapacityType[]) {
              offerings.push({
                vmSize,
                family: s.prefix,
                skuFamily: `standard${s.prefix}${variant.suffix.toUpperCase()}${version}Family`,
                cpu,
                memoryMiB: cpu * s.memoryPerVcpu * 1024,
                arch: variant.arch ?? 'amd64',
                location: 'westus2',
                zone,
                zoneNumber: String(index + 1),
                capacityType,
                premiumIO: true,
                acceleratedNetworking: true,
              });
            }
          }
        }
      }
    }
  }
  return instanceTypesFromOfferings(offerings, {
    maxPods: 250,
    priceOf: (vmSize, capacityType) => {
      const price = prices.get(vmSize);
      return price === undefined
        ? undefined
        : capacityType === 'spot'
          ? Number((price * 0.2).toFixed(4))
          : price;
    },
  });
}
