// The price lower bound the provisioning bench and the scale-up summary judge launches against: the
// resource bound alone, and the node-count bound when hostname constraints force nodes.
import { describe, expect, it } from 'vitest';
import { nodesForcedByHostname, priceLowerBound } from '../../local/scenarios/price-lower-bound.js';
import type { SchedulingPod } from '../../shared/decisions/scheduling/types.js';

const SIZES = [
  { price: 0.1, cpu: 2, memoryGiB: 8 },
  { price: 0.32, cpu: 8, memoryGiB: 32 },
];

function pod(name: string, app: string, spec: Partial<SchedulingPod['spec']> = {}): SchedulingPod {
  return {
    metadata: { name, namespace: 'default', uid: name, labels: { app } },
    spec: { containers: [{ name: 'main' }], ...spec },
  };
}

const antiAffine = (app: string, selected = app) => ({
  affinity: {
    podAntiAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: [
        { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: selected } } },
      ],
    },
  },
});
const hostnameSpread = (app: string, maxSkew: number) => ({
  topologySpreadConstraints: [
    {
      maxSkew,
      topologyKey: 'kubernetes.io/hostname',
      whenUnsatisfiable: 'DoNotSchedule' as const,
      labelSelector: { matchLabels: { app } },
    },
  ],
});

describe('priceLowerBound', () => {
  it('prices the requests at the best $/vCPU or $/GiB when no nodes are forced', () => {
    // $0.04 per vCPU and $0.01 per GiB (the 8-vCPU size): 10 vCPUs cost at least $0.40, 50 GiB $0.50.
    expect(priceLowerBound(SIZES, { cpu: 10, memoryGiB: 50, nodes: 0 })).toBeCloseTo(0.5, 9);
  });

  it('charges forced nodes at least the cheapest size each', () => {
    // 10 nodes for 10 vCPUs: each holds 1 vCPU and costs at least the 2-vCPU size's $0.10.
    expect(priceLowerBound(SIZES, { cpu: 10, memoryGiB: 10, nodes: 10 })).toBeCloseTo(1.0, 9);
  });

  it('interpolates on the convex hull of the sizes between forced nodes and their requests', () => {
    // 10 nodes for 50 vCPUs, 5 each: between (2, $0.10) and (8, $0.32), $0.21 a node; the resource
    // bound would be $2.00.
    expect(priceLowerBound(SIZES, { cpu: 50, memoryGiB: 10, nodes: 10 })).toBeCloseTo(2.1, 9);
  });

  it('takes memory into account the same way', () => {
    // 10 nodes for 200 GiB, 20 each: between (8 GiB, $0.10) and (32 GiB, $0.32), $0.21 a node.
    expect(priceLowerBound(SIZES, { cpu: 10, memoryGiB: 200, nodes: 10 })).toBeCloseTo(2.1, 9);
  });
});

describe('nodesForcedByHostname', () => {
  it('counts the largest set of pods that hostname anti-affinity or spreads keep apart', () => {
    const pods = [
      ...Array.from({ length: 5 }, (_, i) => pod(`db-${i}`, 'db', antiAffine('db'))),
      ...Array.from({ length: 3 }, (_, i) => pod(`web-${i}`, 'web', hostnameSpread('web', 1))),
      // maxSkew 2: two of them per node, so 7 need 4 nodes.
      ...Array.from({ length: 7 }, (_, i) => pod(`api-${i}`, 'api', hostnameSpread('api', 2))),
      // Anti-affinity to another app keeps these pods off db's nodes, not apart from each other.
      ...Array.from({ length: 9 }, (_, i) => pod(`job-${i}`, 'job', antiAffine('job', 'db'))),
    ];
    expect(nodesForcedByHostname(pods)).toBe(5);
    expect(nodesForcedByHostname(pods.filter((p) => p.metadata.labels?.app !== 'db'))).toBe(4);
    expect(nodesForcedByHostname(pods.filter((p) => p.metadata.labels?.app === 'job'))).toBe(0);
  });
});
