import { describe, expect, it } from 'vitest';
import type { ResourceSku } from '@azure/arm-compute';
import type { NodeSelectorRequirement } from '../../shared/models/kube.js';
import {
  capacityFor,
  letterFamily,
  offeringKey,
  offeringLabels,
  offeringsFromSkus,
  placementScopeOf,
  selectOffering,
  type Offering,
  type SkuRecord,
} from '../../shared/decisions/offerings.js';
import { unsupportedSizeReason } from '../../shared/cloudprovider/azure/decisions/sku-support.js';
import type { OfferingBlock } from '../../shared/decisions/offering-blocks.js';
import { skuCatalog } from '../../local/arm-emulator/sku-catalog.js';
import { compareOfferingsByPrice } from '../../shared/decisions/prices/offering-order.js';
import { priceOf, staticPriceBook } from '../../shared/decisions/prices/price-book.js';
import { d2sV5Offering } from '../support/offering.js';

interface SkuOptions {
  name: string;
  family?: string;
  cpu: number;
  memoryGB: number;
  zones?: string[];
  location?: string;
  spot?: boolean;
  arch?: 'x64' | 'Arm64';
  generations?: string;
  restrictions?: SkuRecord['restrictions'];
}

function sku(options: SkuOptions): SkuRecord {
  const location = options.location ?? 'westus2';
  const capabilities = [
    { name: 'vCPUs', value: String(options.cpu) },
    { name: 'MemoryGB', value: String(options.memoryGB) },
    { name: 'LowPriorityCapable', value: options.spot === false ? 'False' : 'True' },
    { name: 'CpuArchitectureType', value: options.arch ?? 'x64' },
    { name: 'PremiumIO', value: 'True' },
    { name: 'AcceleratedNetworkingEnabled', value: 'True' },
    ...(options.generations !== undefined ? [{ name: 'HyperVGenerations', value: options.generations }] : []),
  ];
  return {
    resourceType: 'virtualMachines',
    name: options.name,
    family: options.family ?? 'standardDSv5Family',
    locations: [location],
    locationInfo: [{ location, zones: options.zones ?? ['1', '2', '3'] }],
    capabilities,
    restrictions: options.restrictions ?? [],
  };
}

const catalog: SkuRecord[] = [
  sku({ name: 'Standard_D4s_v5', cpu: 4, memoryGB: 16 }),
  sku({ name: 'Standard_D2s_v5', cpu: 2, memoryGB: 8 }),
  sku({ name: 'Standard_E2s_v5', family: 'standardESv5Family', cpu: 2, memoryGB: 16 }),
  sku({
    name: 'Standard_D2ps_v5',
    family: 'standardDPSv5Family',
    cpu: 2,
    memoryGB: 8,
    arch: 'Arm64',
    spot: false,
  }),
  sku({ name: 'Standard_B2s', family: 'standardBSFamily', cpu: 2, memoryGB: 4, spot: false, zones: ['1'] }),
];
const offerings = offeringsFromSkus(catalog, 'westus2');

describe('letterFamily', () => {
  it.each([
    ['Standard_D2s_v5', 'D'],
    ['Standard_DS2_v2', 'D'],
    ['Standard_NC24ads_A100_v4', 'N'],
    ['Standard_E2s_v5', 'E'],
    ['Basic_A1', 'A'],
  ])('%s → %s', (vmSize, family) => {
    expect(letterFamily(vmSize)).toBe(family);
  });
});

describe('offeringsFromSkus', () => {
  it('creates one offering per zone and capacity type, spot only when LowPriorityCapable', () => {
    const d2 = offerings.filter((o) => o.vmSize === 'Standard_D2s_v5');
    expect(d2.map(offeringKey)).toEqual([
      'spot/Standard_D2s_v5/westus2-1',
      'spot/Standard_D2s_v5/westus2-2',
      'spot/Standard_D2s_v5/westus2-3',
      'spot/Standard_D2s_v5/0',
      'on-demand/Standard_D2s_v5/westus2-1',
      'on-demand/Standard_D2s_v5/westus2-2',
      'on-demand/Standard_D2s_v5/westus2-3',
      'on-demand/Standard_D2s_v5/0',
    ]);
    expect(
      offerings.filter((o) => o.vmSize === 'Standard_D2ps_v5').every((o) => o.capacityType === 'on-demand'),
    ).toBe(true);
    expect(d2[0]).toEqual({
      vmSize: 'Standard_D2s_v5',
      family: 'D',
      skuFamily: 'standardDSv5Family',
      cpu: 2,
      memoryMiB: 8192,
      arch: 'amd64',
      location: 'westus2',
      zone: 'westus2-1',
      zoneNumber: '1',
      capacityType: 'spot',
      premiumIO: true,
      acceleratedNetworking: true,
      hyperVGenerations: ['V1', 'V2'],
    });
  });

  it('reads the architecture', () => {
    expect(offerings.find((o) => o.vmSize === 'Standard_D2ps_v5')?.arch).toBe('arm64');
  });

  it('skips restricted locations and zones', () => {
    const result = offeringsFromSkus(
      [
        sku({
          name: 'Standard_A',
          cpu: 2,
          memoryGB: 4,
          restrictions: [
            {
              type: 'Location',
              values: ['westus2'],
              restrictionInfo: { locations: ['westus2'] },
              reasonCode: 'NotAvailableForSubscription',
            },
          ],
        }),
        sku({
          name: 'Standard_B',
          cpu: 2,
          memoryGB: 4,
          spot: false,
          restrictions: [
            {
              type: 'Zone',
              values: ['westus2'],
              restrictionInfo: { locations: ['westus2'], zones: ['1', '3'] },
              reasonCode: 'NotAvailableForSubscription',
            },
          ],
        }),
        sku({
          name: 'Standard_C',
          cpu: 2,
          memoryGB: 4,
          spot: false,
          zones: ['2'],
          restrictions: [{ type: 'Zone', restrictionInfo: { locations: ['westus2'], zones: ['2'] } }],
        }),
      ],
      'westus2',
    );
    expect(result.map(offeringKey)).toEqual(['on-demand/Standard_B/westus2-2', 'on-demand/Standard_B/0']);
  });

  it('ignores other locations, other resource types, incomplete entries and sizes without a known generation', () => {
    const result = offeringsFromSkus(
      [
        sku({ name: 'Standard_Elsewhere', cpu: 2, memoryGB: 4, location: 'eastus' }),
        { ...sku({ name: 'Premium_LRS', cpu: 2, memoryGB: 4 }), resourceType: 'disks' },
        { ...sku({ name: 'Standard_NoCaps', cpu: 2, memoryGB: 4 }), capabilities: [] },
        sku({ name: 'Standard_Gen3', cpu: 2, memoryGB: 4, generations: 'V3' }),
        sku({ name: 'Standard_Both', cpu: 2, memoryGB: 4, generations: 'V1,V2', spot: false, zones: ['1'] }),
      ],
      'WestUS2',
    );
    expect(result.map(offeringKey)).toEqual([
      'on-demand/Standard_Both/westus2-1',
      'on-demand/Standard_Both/0',
    ]);
  });

  it('offers Gen1-only sizes, to boot Generation 1 images', () => {
    const result = offeringsFromSkus(
      [sku({ name: 'Standard_D2_v3', cpu: 2, memoryGB: 8, generations: 'V1', spot: false, zones: ['1'] })],
      'westus2',
    );
    expect(result.map((o) => [offeringKey(o), o.hyperVGenerations])).toEqual([
      ['on-demand/Standard_D2_v3/westus2-1', ['V1']],
      ['on-demand/Standard_D2_v3/0', ['V1']],
    ]);
  });

  it('gives a regional SKU one zone-less offering per capacity type, labelled zone 0 as AKS does', () => {
    const result = offeringsFromSkus(
      [sku({ name: 'Standard_R', cpu: 2, memoryGB: 4, zones: [], spot: false })],
      'westus2',
    );
    expect(result).toHaveLength(1);
    expect(result[0]?.zone).toBe('0');
    expect(result[0]?.zoneNumber).toBeUndefined();
    expect(placementScopeOf(result[0] as Offering)).toBe('regional');
    expect(offeringLabels(result[0] as Offering)).toMatchObject({
      'topology.kubernetes.io/zone': '0',
      'karpenter.azure.com/placement-scope': 'regional',
    });
  });

  it('puts the regional offering after the zonal ones of the same size', () => {
    const keys = offeringsFromSkus(
      [sku({ name: 'Standard_Z', cpu: 2, memoryGB: 4, zones: ['2', '1'] })],
      'westus2',
    ).map(offeringKey);
    expect(keys).toEqual([
      'spot/Standard_Z/westus2-1',
      'spot/Standard_Z/westus2-2',
      'spot/Standard_Z/0',
      'on-demand/Standard_Z/westus2-1',
      'on-demand/Standard_Z/westus2-2',
      'on-demand/Standard_Z/0',
    ]);
  });

  it.each([
    ['Standard_B1s', 1, 1, 0, 'restricted by AKS'],
    ['Standard_A1_v2', 1, 2, 0, 'restricted by AKS'],
    ['Standard_B1ls', 1, 0.5, 0, 'fewer than 2 vCPUs'],
    ['Standard_B2ts_v2', 2, 1, 0, 'less than 3.5 GiB'],
    ['Standard_M8-2ms', 8, 218.75, 0, 'constrained vCPUs'],
    ['Standard_E16-4ds_v5', 16, 128, 0, 'constrained vCPUs'],
    ['Standard_DC2as_v5', 2, 8, 0, 'confidential'],
    ['Standard_EC4as_v5', 4, 32, 0, 'confidential'],
    ['Standard_NG8ads_V620_v1', 8, 16, 1, 'GPU without AKS driver support'],
  ])('does not offer %s (%s)', (name, cpu, memoryGB, gpus, reason) => {
    expect(unsupportedSizeReason({ vmSize: name, cpu, memoryGiB: memoryGB, gpus })).toContain(reason);
    const withGpus = sku({ name, cpu, memoryGB });
    const record =
      gpus > 0
        ? {
            ...withGpus,
            capabilities: [...(withGpus.capabilities ?? []), { name: 'GPUs', value: String(gpus) }],
          }
        : withGpus;
    expect(offeringsFromSkus([record], 'westus2')).toEqual([]);
  });

  it('gives supported NVIDIA sizes nvidia.com/gpu capacity and GPU labels', () => {
    const t4 = sku({ name: 'Standard_NC4as_T4_v3', cpu: 4, memoryGB: 28, zones: ['1'], spot: false });
    const [offering] = offeringsFromSkus(
      [{ ...t4, capabilities: [...(t4.capabilities ?? []), { name: 'GPUs', value: '1' }] }],
      'westus2',
    );
    expect(offering?.nvidiaGpus).toBe(1);
    expect(capacityFor(offering as Offering).allocatable['nvidia.com/gpu']).toBe('1');
    expect(offeringLabels(offering as Offering)).toMatchObject({
      'karpenter.azure.com/sku-gpu-count': '1',
      'karpenter.azure.com/sku-gpu-manufacturer': 'nvidia',
    });
    expect(
      selectOffering({
        requirements: [],
        requests: { 'nvidia.com/gpu': '1' },
        offerings: [offering as Offering],
      }).offering,
    ).toBe(offering);
    expect(
      selectOffering({
        requirements: [],
        requests: { 'nvidia.com/gpu': '2' },
        offerings: [offering as Offering],
      }),
    ).toMatchObject({ reason: expect.stringContaining('nvidia.com/gpu 2 > allocatable 1') });
  });

  it("filters the ARM emulator's eastus catalog as the provider would", () => {
    const sizes = new Set(offeringsFromSkus(skuCatalog, 'eastus').map((o) => o.vmSize));
    for (const excluded of [
      'Standard_B1s',
      'Standard_DC2as_v5',
      'Standard_M8-2ms',
      'Standard_NG8ads_V620_v1',
    ]) {
      expect(sizes).not.toContain(excluded);
    }
    const eastus = offeringsFromSkus(skuCatalog, 'eastus');
    const gen1 = eastus.filter((o) => o.vmSize === 'Standard_D2_v3');
    expect(gen1.map(offeringKey)).toEqual(['spot/Standard_D2_v3/0', 'on-demand/Standard_D2_v3/0']);
    expect(gen1.every((o) => o.hyperVGenerations?.join() === 'V1')).toBe(true);
    expect(eastus.find((o) => o.vmSize === 'Standard_NC4as_T4_v3')?.nvidiaGpus).toBe(1);
  });

  it('accepts the SDK ResourceSku type and fractional memory', () => {
    const sdkSku: ResourceSku = {
      resourceType: 'virtualMachines',
      name: 'Standard_A2_v2',
      family: 'standardAv2Family',
      locations: ['westus2'],
      locationInfo: [{ location: 'westus2', zones: ['1'] }],
      capabilities: [
        { name: 'vCPUs', value: '2' },
        { name: 'MemoryGB', value: '3.5' },
      ],
      restrictions: [],
    };
    expect(offeringsFromSkus([sdkSku], 'westus2')[0]?.memoryMiB).toBe(3584);
  });
});

describe('offeringLabels', () => {
  it('produces the well-known labels', () => {
    expect(offeringLabels(d2sV5Offering({ capacityType: 'spot' }))).toEqual({
      'node.kubernetes.io/instance-type': 'Standard_D2s_v5',
      'topology.kubernetes.io/zone': 'westus2-1',
      'topology.kubernetes.io/region': 'westus2',
      'karpenter.sh/capacity-type': 'spot',
      'kubernetes.io/arch': 'amd64',
      'kubernetes.io/os': 'linux',
      'karpenter.azure.com/sku-family': 'D',
      'karpenter.azure.com/sku-cpu': '2',
      'karpenter.azure.com/sku-memory': '8192',
      'karpenter.azure.com/sku-name': 'Standard_D2s_v5',
      'karpenter.azure.com/placement-scope': 'zonal',
      'karpenter.azure.com/sku-gpu-count': '0',
    });
  });
});

describe('capacity', () => {
  it('reports capacity and allocatable with AKS defaults (Azure CNI Overlay: 250 pods, 1.29+ reservations)', () => {
    expect(capacityFor(d2sV5Offering({ cpu: 2, memoryMiB: 8192 }))).toEqual({
      capacity: { cpu: '2', memory: '7759462Ki', pods: '250', 'ephemeral-storage': '128Gi' },
      allocatable: { cpu: '1900m', memory: '5559910Ki', pods: '250', 'ephemeral-storage': '117964Mi' },
    });
    expect(
      capacityFor(d2sV5Offering({ cpu: 4, memoryMiB: 16384 }), { maxPods: 30, osDiskSizeGB: 64 }),
    ).toEqual({
      capacity: { cpu: '4', memory: '15518924Ki', pods: '30', 'ephemeral-storage': '64Gi' },
      allocatable: { cpu: '3860m', memory: '14750924Ki', pods: '30', 'ephemeral-storage': '58982Mi' },
    });
  });
});

const r = (
  key: string,
  operator: NodeSelectorRequirement['operator'],
  values?: string[],
  minValues?: number,
) => ({
  key,
  operator,
  ...(values ? { values } : {}),
  ...(minValues !== undefined ? { minValues } : {}),
});

const both = (where: OfferingBlock['where'], sizes: OfferingBlock['sizes']): OfferingBlock[] => [
  { capacityType: 'spot', where, sizes },
  { capacityType: 'on-demand', where, sizes },
];

describe('selectOffering', () => {
  const onDemandOnly = [r('karpenter.sh/capacity-type', 'In', ['on-demand'])];
  const anyCapacity = r('karpenter.sh/capacity-type', 'In', ['spot', 'on-demand']);

  it.each<[string, NodeSelectorRequirement[], Record<string, string>, readonly OfferingBlock[], string]>([
    [
      'prefers spot for the smallest shape when both are allowed',
      [
        r('karpenter.sh/capacity-type', 'In', ['spot', 'on-demand']),
        r('karpenter.azure.com/sku-memory', 'Gt', ['4096']),
      ],
      {},
      [],
      'spot/Standard_D2s_v5/westus2-1',
    ],
    [
      'smallest first: B2s has the least memory but is on-demand only, still smallest',
      [],
      {},
      [],
      'on-demand/Standard_B2s/westus2-1',
    ],
    [
      'respects on-demand',
      [...onDemandOnly, r('karpenter.azure.com/sku-memory', 'Gt', ['4096'])],
      {},
      [],
      'on-demand/Standard_D2ps_v5/westus2-1',
    ],
    [
      'arch narrows to amd64, then name order among equal shapes',
      [
        ...onDemandOnly,
        r('kubernetes.io/arch', 'In', ['amd64']),
        r('karpenter.azure.com/sku-memory', 'Gt', ['4096']),
      ],
      {},
      [],
      'on-demand/Standard_D2s_v5/westus2-1',
    ],
    [
      'zone requirement',
      [
        ...onDemandOnly,
        r('topology.kubernetes.io/zone', 'In', ['westus2-3']),
        r('karpenter.azure.com/sku-memory', 'Gt', ['4096']),
      ],
      {},
      [],
      'on-demand/Standard_D2ps_v5/westus2-3',
    ],
    [
      'deprecated zone key is normalized',
      [
        ...onDemandOnly,
        r('failure-domain.beta.kubernetes.io/zone', 'In', ['westus2-2']),
        r('kubernetes.io/arch', 'In', ['amd64']),
        r('karpenter.azure.com/sku-memory', 'Gt', ['4096']),
      ],
      {},
      [],
      'on-demand/Standard_D2s_v5/westus2-2',
    ],
    [
      'sku-family and sku-memory',
      [
        anyCapacity,
        r('karpenter.azure.com/sku-family', 'In', ['E']),
        r('karpenter.azure.com/sku-memory', 'Gte', ['16384']),
      ],
      {},
      [],
      'spot/Standard_E2s_v5/westus2-1',
    ],
    [
      'instance-type NotIn',
      [
        anyCapacity,
        r('node.kubernetes.io/instance-type', 'NotIn', [
          'Standard_B2s',
          'Standard_D2ps_v5',
          'Standard_D2s_v5',
        ]),
      ],
      {},
      [],
      'spot/Standard_E2s_v5/westus2-1',
    ],
    [
      'requests push to a bigger size',
      [anyCapacity, r('kubernetes.io/arch', 'In', ['amd64'])],
      { cpu: '2', memory: '4Gi' },
      [],
      'spot/Standard_D4s_v5/westus2-1',
    ],
    [
      'memory request picks the memory-rich shape',
      [anyCapacity, r('kubernetes.io/arch', 'In', ['amd64'])],
      { cpu: '1', memory: '10Gi' },
      [],
      'spot/Standard_E2s_v5/westus2-1',
    ],
    [
      'a request exactly at allocatable fits',
      [anyCapacity, r('kubernetes.io/arch', 'In', ['amd64'])],
      { cpu: '1900m', memory: '5559910Ki' },
      [],
      'spot/Standard_D2s_v5/westus2-1',
    ],
    [
      'skips an unavailable offering',
      [
        anyCapacity,
        r('karpenter.azure.com/sku-memory', 'Gt', ['4096']),
        r('kubernetes.io/arch', 'In', ['amd64']),
      ],
      {},
      [{ capacityType: 'spot', where: { zone: 'westus2-1' }, sizes: { vmSize: 'Standard_D2s_v5' } }],
      'spot/Standard_D2s_v5/westus2-2',
    ],
    [
      'skips a size unavailable in a zone for both capacity types',
      [
        anyCapacity,
        r('karpenter.azure.com/sku-memory', 'Gt', ['4096']),
        r('kubernetes.io/arch', 'In', ['amd64']),
        r('topology.kubernetes.io/zone', 'In', ['westus2-1']),
      ],
      {},
      both({ zone: 'westus2-1' }, { vmSize: 'Standard_D2s_v5' }),
      'spot/Standard_E2s_v5/westus2-1',
    ],
    [
      'skips a whole capacity type',
      [
        anyCapacity,
        r('karpenter.azure.com/sku-memory', 'Gt', ['4096']),
        r('kubernetes.io/arch', 'In', ['amd64']),
      ],
      {},
      [{ capacityType: 'spot', where: 'everywhere', sizes: { minCpu: 1 } }],
      'on-demand/Standard_D2s_v5/westus2-1',
    ],
    [
      'skips a quota family',
      [
        r('karpenter.azure.com/sku-memory', 'Gt', ['4096']),
        ...onDemandOnly,
        r('kubernetes.io/arch', 'In', ['amd64']),
      ],
      {},
      [
        {
          capacityType: 'on-demand',
          where: 'everywhere',
          sizes: { skuFamily: 'standardDSv5Family', minCpu: 1 },
        },
      ],
      'on-demand/Standard_E2s_v5/westus2-1',
    ],
    [
      'a smaller on-demand shape beats a larger spot one',
      [anyCapacity],
      {},
      [],
      'on-demand/Standard_B2s/westus2-1',
    ],
    [
      'on-demand when the requirements do not mention capacity type',
      [r('karpenter.azure.com/sku-memory', 'Gt', ['4096']), r('kubernetes.io/arch', 'In', ['amd64'])],
      {},
      [],
      'on-demand/Standard_D2s_v5/westus2-1',
    ],
    [
      'custom and nodepool labels do not constrain the machine',
      [r('karpenter.sh/nodepool', 'In', ['default']), r('team', 'In', ['a']), ...onDemandOnly],
      {},
      [],
      'on-demand/Standard_B2s/westus2-1',
    ],
  ])('%s', (_name, requirements, requests, unavailable, expectedKey) => {
    const result = selectOffering({ requirements, requests, offerings, unavailable });
    expect(result.offering ? offeringKey(result.offering) : result).toBe(expectedKey);
  });

  it('does not depend on the input order', () => {
    const reversed = [...offerings].reverse();
    const requirements = [r('kubernetes.io/arch', 'In', ['amd64'])];
    expect(selectOffering({ requirements, offerings: reversed }).offering).toEqual(
      selectOffering({ requirements, offerings }).offering,
    );
  });

  it('treats unmodelled provider properties as absent, and reads the GPU count', () => {
    const gpu = selectOffering({
      requirements: [r('karpenter.azure.com/sku-gpu-count', 'Gt', ['0'])],
      offerings,
    });
    expect(gpu.offering).toBeUndefined();
    const noGpu = selectOffering({
      requirements: [r('karpenter.azure.com/sku-gpu-name', 'DoesNotExist')],
      offerings,
    });
    expect(noGpu.offering?.vmSize).toBe('Standard_B2s');
  });

  it('explains why nothing fits', () => {
    const result = selectOffering({
      requirements: [r('kubernetes.io/arch', 'In', ['amd64'])],
      requests: { cpu: '64' },
      offerings,
      unavailable: [],
    });
    expect(result.offering).toBeUndefined();
    expect(result).toMatchObject({
      reason: expect.stringContaining('none of 30 offerings fits; 16 excluded by requirements'),
    });
    expect(result).toMatchObject({
      reason: expect.stringContaining(
        '14 too small for the requests (e.g. Standard_B2s: cpu 64000m > allocatable 1900m)',
      ),
    });
  });

  it('counts offerings marked unavailable in the reason', () => {
    const result = selectOffering({
      requirements: [r('node.kubernetes.io/instance-type', 'In', ['Standard_B2s'])],
      offerings,
      unavailable: both('everywhere', { vmSize: 'Standard_B2s' }),
    });
    expect(result).toEqual({
      offering: undefined,
      reason: expect.stringContaining('2 marked unavailable after recent launch failures'),
    });
  });

  it('refuses requests for resources no offering provides', () => {
    const result = selectOffering({ requirements: [], requests: { 'example.com/fpga': '1' }, offerings });
    expect(result).toMatchObject({
      offering: undefined,
      reason: expect.stringContaining('no offering provides example.com/fpga'),
    });
    expect(
      selectOffering({ requirements: [], requests: { 'nvidia.com/gpu': '1' }, offerings }),
    ).toMatchObject({ reason: expect.stringContaining('nvidia.com/gpu 1 > allocatable 0') });
    expect(
      selectOffering({ requirements: [], requests: { 'nvidia.com/gpu': '0' }, offerings }).offering,
    ).toBeDefined();
  });

  it('reports invalid request quantities', () => {
    expect(selectOffering({ requirements: [], requests: { cpu: 'lots' }, offerings })).toMatchObject({
      offering: undefined,
      reason: expect.stringContaining('invalid resource requests: request cpu: invalid quantity "lots"'),
    });
  });

  it('fits pods and ephemeral storage against allocatable', () => {
    expect(
      selectOffering({ requirements: [], requests: { pods: '31' }, offerings, networkPlugin: 'azure' })
        .offering,
    ).toBeUndefined();
    expect(
      selectOffering({ requirements: [], requests: { pods: '251' }, offerings }).offering,
    ).toBeUndefined();
    expect(
      selectOffering({ requirements: [], requests: { pods: '200' }, offerings, maxPods: 200 }).offering,
    ).toBeDefined();
    expect(
      selectOffering({
        requirements: [],
        requests: { 'ephemeral-storage': '100Gi' },
        offerings,
        osDiskSizeGB: 64,
      }).offering,
    ).toBeUndefined();
  });

  it('enforces minValues on the qualifying offerings', () => {
    const flexible = [r('node.kubernetes.io/instance-type', 'In', ['Standard_D2s_v5', 'Standard_D4s_v5'], 2)];
    expect(selectOffering({ requirements: flexible, offerings }).offering?.vmSize).toBe('Standard_D2s_v5');
    const result = selectOffering({
      requirements: flexible,
      offerings,
      unavailable: both('everywhere', { vmSize: 'Standard_D4s_v5' }),
    });
    expect(result).toMatchObject({
      offering: undefined,
      reason: expect.stringContaining('needs minValues 2 but only 1 qualifying value(s) are available'),
    });
  });

  it('rejects everything for contradictory requirements', () => {
    const result = selectOffering({
      requirements: [
        r('karpenter.sh/capacity-type', 'In', ['spot']),
        r('karpenter.sh/capacity-type', 'NotIn', ['spot']),
      ],
      offerings,
    });
    expect(result.offering).toBeUndefined();
  });
});

describe('selectOffering in price order', () => {
  // The shipped westus2 table (D2ps_v5 0.077, D2s_v5 0.096, E2s_v5 0.126, D4s_v5 0.192; no B2s) plus the
  // spot prices a case gives: what launch passes once prices are known.
  const byPrice = (spot: Record<string, number> = {}): ((a: Offering, b: Offering) => number) => {
    const book = staticPriceBook('westus2');
    const withSpot = { ...book, spot: new Map(Object.entries(spot)) };
    return compareOfferingsByPrice((o) => priceOf(withSpot, o.vmSize, o.capacityType));
  };
  const amd64 = r('kubernetes.io/arch', 'In', ['amd64']);
  const anyCapacity = r('karpenter.sh/capacity-type', 'In', ['spot', 'on-demand']);
  const spotOnD2s = { Standard_D2s_v5: 0.02 };

  it.each<[string, NodeSelectorRequirement[], Record<string, number>, readonly OfferingBlock[], string]>([
    [
      'the cheapest on-demand offering, whatever its shape or arch',
      [],
      {},
      [],
      'on-demand/Standard_D2ps_v5/westus2-1',
    ],
    [
      'a size without a known price comes last, though smaller (B2s)',
      [amd64],
      {},
      [],
      'on-demand/Standard_D2s_v5/westus2-1',
    ],
    [
      'spot where allowed, at its own price',
      [amd64, anyCapacity],
      spotOnD2s,
      [],
      'spot/Standard_D2s_v5/westus2-1',
    ],
    [
      'spot without a spot price costs what on-demand does, and wins the tie',
      [amd64, anyCapacity],
      {},
      [],
      'spot/Standard_D2s_v5/westus2-1',
    ],
    [
      'a cheap spot offering never replaces on-demand the NodeClaim asked for',
      [amd64],
      { Standard_E2s_v5: 0.01 },
      [],
      'on-demand/Standard_D2s_v5/westus2-1',
    ],
    [
      'the cheapest spot size beats a cheaper-looking shape order',
      [amd64, anyCapacity],
      { Standard_E2s_v5: 0.01, ...spotOnD2s },
      [],
      'spot/Standard_E2s_v5/westus2-1',
    ],
    [
      'blocked offerings are skipped: the next cheapest size',
      [amd64],
      {},
      [{ capacityType: 'on-demand', where: 'everywhere', sizes: { vmSize: 'Standard_D2s_v5' } }],
      'on-demand/Standard_E2s_v5/westus2-1',
    ],
    [
      'zonal before regional at one price; regional once the zones are blocked',
      [amd64, r('node.kubernetes.io/instance-type', 'In', ['Standard_D2s_v5'])],
      {},
      [{ capacityType: 'on-demand', where: { scope: 'zonal' }, sizes: { vmSize: 'Standard_D2s_v5' } }],
      'on-demand/Standard_D2s_v5/0',
    ],
    [
      'a size without a price is still chosen when nothing priced qualifies',
      [r('node.kubernetes.io/instance-type', 'In', ['Standard_B2s'])],
      {},
      [],
      'on-demand/Standard_B2s/westus2-1',
    ],
  ])('%s', (_name, requirements, spot, unavailable, expectedKey) => {
    const result = selectOffering({ requirements, offerings, unavailable, order: byPrice(spot) });
    expect(result.offering ? offeringKey(result.offering) : result).toBe(expectedKey);
  });

  it('keeps the reasons and minValues of the shape order', () => {
    const order = byPrice();
    const flexible = [r('node.kubernetes.io/instance-type', 'In', ['Standard_D2s_v5', 'Standard_D4s_v5'], 2)];
    expect(selectOffering({ requirements: flexible, offerings, order }).offering?.vmSize).toBe(
      'Standard_D2s_v5',
    );
    expect(
      selectOffering({
        requirements: flexible,
        offerings,
        order,
        unavailable: both('everywhere', { vmSize: 'Standard_D4s_v5' }),
      }),
    ).toMatchObject({ offering: undefined, reason: expect.stringContaining('needs minValues 2') });
    expect(
      selectOffering({ requirements: [amd64], requests: { cpu: '64' }, offerings, order }),
    ).toMatchObject({ offering: undefined, reason: expect.stringContaining('too small for the requests') });
  });

  it('does not depend on the input order', () => {
    const order = byPrice(spotOnD2s);
    const requirements = [anyCapacity];
    expect(selectOffering({ requirements, offerings: [...offerings].reverse(), order }).offering).toEqual(
      selectOffering({ requirements, offerings, order }).offering,
    );
  });
});
