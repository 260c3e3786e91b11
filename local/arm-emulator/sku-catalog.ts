// The emulated resource SKU catalog: the shape of `GET .../providers/Microsoft.Compute/skus` items,
// with a realistic (but small) choice of D, E and F sizes in three regions, some restricted zones, and in
// eastus only the sizes an AKS node may not be or needs special handling for (AKS-restricted,
// confidential, constrained vCPUs, Gen1-only and zone-less, supported and unsupported GPUs), so they
// exercise the SKU filter without changing which sizes westus2 launches choose.
// Exported as data so tests and other simulators can reason about the same offerings.

export interface SkuCapability {
  name: string;
  value: string;
}

export interface SkuRestriction {
  type: 'Location' | 'Zone';
  values: string[];
  restrictionInfo: { locations?: string[]; zones?: string[] };
  reasonCode: 'QuotaId' | 'NotAvailableForSubscription';
}

export interface ResourceSku {
  resourceType: 'virtualMachines';
  name: string;
  tier: 'Standard';
  size: string;
  family: string;
  locations: string[];
  locationInfo: Array<{ location: string; zones: string[]; zoneDetails: unknown[] }>;
  capabilities: SkuCapability[];
  restrictions: SkuRestriction[];
}

export const catalogLocations = ['westus2', 'eastus', 'westeurope'] as const;
const allZones = ['1', '2', '3'];

interface SeriesSpec {
  /** e.g. Standard_D{n}s_v5 */
  name: (vcpus: number) => string;
  family: string;
  memoryGbPerVcpu: number;
  architecture: 'x64' | 'Arm64';
  /** Temporary (resource) disk size per vCPU in MB; 0 for sizes without a local disk. */
  resourceDiskMbPerVcpu: number;
  hyperVGenerations: string;
  lowPriorityCapable: boolean;
  vcpus: number[];
}

const series: SeriesSpec[] = [
  {
    name: (n) => `Standard_D${n}s_v5`,
    family: 'standardDSv5Family',
    memoryGbPerVcpu: 4,
    architecture: 'x64',
    resourceDiskMbPerVcpu: 0,
    hyperVGenerations: 'V1,V2',
    lowPriorityCapable: true,
    vcpus: [2, 4, 8, 16],
  },
  {
    name: (n) => `Standard_D${n}ds_v5`,
    family: 'standardDDSv5Family',
    memoryGbPerVcpu: 4,
    architecture: 'x64',
    resourceDiskMbPerVcpu: 38400,
    hyperVGenerations: 'V1,V2',
    lowPriorityCapable: true,
    vcpus: [2, 4, 8, 16],
  },
  {
    name: (n) => `Standard_D${n}as_v5`,
    family: 'standardDASv5Family',
    memoryGbPerVcpu: 4,
    architecture: 'x64',
    resourceDiskMbPerVcpu: 0,
    hyperVGenerations: 'V1,V2',
    lowPriorityCapable: true,
    vcpus: [2, 4, 8, 16],
  },
  {
    name: (n) => `Standard_D${n}ps_v5`,
    family: 'standardDPSv5Family',
    memoryGbPerVcpu: 4,
    architecture: 'Arm64',
    resourceDiskMbPerVcpu: 0,
    hyperVGenerations: 'V2',
    lowPriorityCapable: true,
    vcpus: [2, 4, 8, 16],
  },
  {
    name: (n) => `Standard_E${n}s_v5`,
    family: 'standardESv5Family',
    memoryGbPerVcpu: 8,
    architecture: 'x64',
    resourceDiskMbPerVcpu: 0,
    hyperVGenerations: 'V1,V2',
    lowPriorityCapable: true,
    vcpus: [2, 4, 8, 16],
  },
  {
    name: (n) => `Standard_F${n}s_v2`,
    family: 'standardFSv2Family',
    memoryGbPerVcpu: 2,
    architecture: 'x64',
    resourceDiskMbPerVcpu: 8192,
    hyperVGenerations: 'V1,V2',
    lowPriorityCapable: true,
    vcpus: [2, 4, 8, 16],
  },
];

/**
 * Restrictions as the real API reports them for a subscription: a size unavailable in some zones
 * of a region, or in a whole region.
 */
const restrictionsBySku: Record<string, Array<{ location: string; zones?: string[] }>> = {
  Standard_D16s_v5: [{ location: 'westus2', zones: ['3'] }],
  Standard_E16s_v5: [{ location: 'eastus', zones: ['1'] }],
  Standard_D8ps_v5: [{ location: 'westus2', zones: ['2', '3'] }],
  Standard_F16s_v2: [{ location: 'westeurope' }],
};

function capabilities(spec: SeriesSpec, vcpus: number, extra: SizeExtras = {}): SkuCapability[] {
  const memoryGb = extra.memoryGb ?? spec.memoryGbPerVcpu * vcpus;
  const entries: Array<[string, string | number]> = [
    ['MaxResourceVolumeMB', spec.resourceDiskMbPerVcpu * vcpus],
    ['OSVhdSizeMB', 1047552],
    ['vCPUs', vcpus],
    ['MemoryPreservingMaintenanceSupported', 'True'],
    ['HyperVGenerations', spec.hyperVGenerations],
    ['MemoryGB', memoryGb],
    ['MaxDataDiskCount', Math.min(vcpus * 2, 32)],
    ['CpuArchitectureType', spec.architecture],
    ['LowPriorityCapable', spec.lowPriorityCapable ? 'True' : 'False'],
    ['PremiumIO', 'True'],
    ['VMDeploymentTypes', 'IaaS'],
    ['vCPUsAvailable', extra.vcpusAvailable ?? vcpus],
    ['vCPUsPerCore', spec.architecture === 'Arm64' ? 1 : 2],
    ['EphemeralOSDiskSupported', spec.resourceDiskMbPerVcpu > 0 ? 'True' : 'False'],
    ['EncryptionAtHostSupported', 'True'],
    ['AcceleratedNetworkingEnabled', 'True'],
    ['RdmaEnabled', 'False'],
    ['MaxNetworkInterfaces', vcpus <= 4 ? 2 : vcpus <= 8 ? 4 : 8],
    ...(extra.gpus !== undefined ? ([['GPUs', extra.gpus]] as Array<[string, number]>) : []),
  ];
  return entries.map(([name, value]) => ({ name, value: String(value) }));
}

interface SizeExtras {
  memoryGb?: number;
  /** Constrained-vCPU sizes report the parent size's vCPUs and fewer available. */
  vcpusAvailable?: number;
  gpus?: number;
}

interface SpecialSize {
  name: string;
  vcpus: number;
  spec: Omit<SeriesSpec, 'name' | 'vcpus' | 'memoryGbPerVcpu'>;
  extras: SizeExtras & { memoryGb: number };
  /** Listed without availability zones (a regional-only size). */
  zoneless?: boolean;
}

const x64 = { architecture: 'x64', resourceDiskMbPerVcpu: 0, lowPriorityCapable: true } as const;

/** Sizes the SKU filter must handle, listed in eastus only. */
const specialSizes: SpecialSize[] = [
  // AKS does not allow it in node pools (and it is below the minimum node size).
  {
    name: 'Standard_B1s',
    vcpus: 1,
    spec: { ...x64, family: 'standardBSFamily', hyperVGenerations: 'V1,V2' },
    extras: { memoryGb: 1 },
  },
  // Confidential (DC series).
  {
    name: 'Standard_DC2as_v5',
    vcpus: 2,
    spec: { ...x64, family: 'standardDCASv5Family', hyperVGenerations: 'V2' },
    extras: { memoryGb: 8 },
  },
  // Constrained vCPUs: an M8ms exposing 2 of its 8 vCPUs.
  {
    name: 'Standard_M8-2ms',
    vcpus: 8,
    spec: { ...x64, family: 'standardMSFamily', hyperVGenerations: 'V1,V2' },
    extras: { memoryGb: 218.75, vcpusAvailable: 2 },
  },
  // Generation 1 only, and offered without availability zones.
  {
    name: 'Standard_D2_v3',
    vcpus: 2,
    spec: { ...x64, family: 'standardDv3Family', hyperVGenerations: 'V1' },
    extras: { memoryGb: 8 },
    zoneless: true,
  },
  // An NVIDIA T4 size AKS installs drivers for.
  {
    name: 'Standard_NC4as_T4_v3',
    vcpus: 4,
    spec: { ...x64, family: 'standardNCASv3_T4Family', hyperVGenerations: 'V1,V2' },
    extras: { memoryGb: 28, gpus: 1 },
  },
  // A GPU size AKS has no driver for (AMD Radeon V620).
  {
    name: 'Standard_NG8ads_V620_v1',
    vcpus: 8,
    spec: { ...x64, family: 'standardNGADSV620v1Family', hyperVGenerations: 'V2' },
    extras: { memoryGb: 16, gpus: 1 },
  },
];

const specialSizesLocation = 'eastus';

function restrictionsFor(name: string, location: string): SkuRestriction[] {
  return (restrictionsBySku[name] ?? [])
    .filter((r) => r.location === location)
    .map((r) =>
      r.zones
        ? {
            type: 'Zone' as const,
            values: [location],
            restrictionInfo: { locations: [location], zones: r.zones },
            reasonCode: 'NotAvailableForSubscription' as const,
          }
        : {
            type: 'Location' as const,
            values: [location],
            restrictionInfo: { locations: [location] },
            reasonCode: 'NotAvailableForSubscription' as const,
          },
    );
}

function buildCatalog(): ResourceSku[] {
  const skus: ResourceSku[] = [];
  // The real API returns one item per (size, location), each with its own restrictions.
  for (const location of catalogLocations) {
    for (const spec of series) {
      for (const vcpus of spec.vcpus) {
        const name = spec.name(vcpus);
        skus.push({
          resourceType: 'virtualMachines',
          name,
          tier: 'Standard',
          size: name.replace(/^Standard_/, ''),
          family: spec.family,
          locations: [location],
          locationInfo: [{ location, zones: [...allZones], zoneDetails: [] }],
          capabilities: capabilities(spec, vcpus),
          restrictions: restrictionsFor(name, location),
        });
      }
    }
  }
  for (const special of specialSizes) {
    const location = specialSizesLocation;
    const spec: SeriesSpec = {
      ...special.spec,
      name: () => special.name,
      memoryGbPerVcpu: special.extras.memoryGb / special.vcpus,
      vcpus: [special.vcpus],
    };
    skus.push({
      resourceType: 'virtualMachines',
      name: special.name,
      tier: 'Standard',
      size: special.name.replace(/^Standard_/, ''),
      family: special.spec.family,
      locations: [location],
      locationInfo: [{ location, zones: special.zoneless ? [] : [...allZones], zoneDetails: [] }],
      capabilities: capabilities(spec, special.vcpus, special.extras),
      restrictions: restrictionsFor(special.name, location),
    });
  }
  return skus;
}

export const skuCatalog: readonly ResourceSku[] = buildCatalog();

export function capabilityValue(sku: ResourceSku, name: string): string | undefined {
  return sku.capabilities.find((c) => c.name === name)?.value;
}

export function skuVcpus(sku: ResourceSku): number {
  return Number(capabilityValue(sku, 'vCPUs') ?? '0');
}

/** The catalog item for `vmSize` in `location` (size names are case-insensitive in ARM). */
export function findSku(
  catalog: readonly ResourceSku[],
  vmSize: string,
  location: string,
): ResourceSku | undefined {
  const size = vmSize.toLowerCase();
  const loc = location.toLowerCase();
  return catalog.find(
    (s) => s.name.toLowerCase() === size && s.locations.some((l) => l.toLowerCase() === loc),
  );
}

export function isKnownSize(catalog: readonly ResourceSku[], vmSize: string): boolean {
  const size = vmSize.toLowerCase();
  return catalog.some((s) => s.name.toLowerCase() === size);
}

/** Why a size cannot be placed in `location` / `zone` for this subscription, if it cannot. */
export function placementRestriction(sku: ResourceSku, zone: string | undefined): SkuRestriction | undefined {
  return sku.restrictions.find(
    (r) => r.type === 'Location' || (zone !== undefined && (r.restrictionInfo.zones ?? []).includes(zone)),
  );
}

/**
 * Supports the one filter the real API supports, `location eq 'westus2'`; undefined for any other
 * filter expression.
 */
export function filterSkus(
  catalog: readonly ResourceSku[],
  filter: string | undefined,
): ResourceSku[] | undefined {
  if (filter === undefined || filter.trim() === '') return [...catalog];
  const match = /^\s*location\s+eq\s+'([^']*)'\s*$/i.exec(filter);
  if (!match) return undefined;
  const location = (match[1] ?? '').toLowerCase();
  return catalog.filter((s) => s.locations.some((l) => l.toLowerCase() === location));
}
