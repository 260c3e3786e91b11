// Builders for scheduling-simulation tests: small instance types, NodePools and pods in plain data.
import type {
  InstanceType,
  SchedulingNodePool,
  SchedulingPod,
  SchedulingPodSpec,
} from '../../../shared/decisions/scheduling/types.js';

export const ZONES = ['westus2-1', 'westus2-2', 'westus2-3'];

export function instanceType(
  name: string,
  cpu: number,
  memoryGiB: number,
  price: number,
  options: { zones?: string[]; spot?: boolean; labels?: Record<string, string>; pods?: number } = {},
): InstanceType {
  const zones = options.zones ?? ZONES;
  return {
    name,
    labels: {
      'kubernetes.io/arch': 'amd64',
      'kubernetes.io/os': 'linux',
      'karpenter.azure.com/sku-cpu': String(cpu),
      ...options.labels,
    },
    capacity: { cpu: String(cpu), memory: `${memoryGiB}Gi`, pods: String(options.pods ?? 110) },
    allocatable: { cpu: String(cpu), memory: `${memoryGiB}Gi`, pods: String(options.pods ?? 110) },
    offerings: zones.flatMap((zone) => [
      { zone, capacityType: 'on-demand' as const, price, available: true },
      ...(options.spot ? [{ zone, capacityType: 'spot' as const, price: price / 5, available: true }] : []),
    ]),
  };
}

export const SMALL = instanceType('small', 2, 8, 0.1);
export const MEDIUM = instanceType('medium', 4, 16, 0.2);
export const LARGE = instanceType('large', 8, 32, 0.4);
export const CATALOG = [SMALL, MEDIUM, LARGE];

export function nodePool(name: string, overrides: Partial<SchedulingNodePool> = {}): SchedulingNodePool {
  return {
    name,
    requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
    instanceTypes: CATALOG,
    ...overrides,
  };
}

let counter = 0;

export function pod(
  requests: Record<string, string> = { cpu: '1', memory: '1Gi' },
  spec: Partial<SchedulingPodSpec> = {},
  metadata: { name?: string; labels?: Record<string, string>; namespace?: string } = {},
): SchedulingPod {
  counter++;
  const name = metadata.name ?? `pod-${counter}`;
  return {
    metadata: {
      name,
      namespace: metadata.namespace ?? 'default',
      uid: `uid-${name}`,
      ...(metadata.labels ? { labels: metadata.labels } : {}),
      creationTimestamp: '2026-01-01T00:00:00Z',
    },
    spec: { containers: [{ name: 'main', resources: { requests } }], ...spec },
  };
}

export function pods(count: number, ...args: Parameters<typeof pod>): SchedulingPod[] {
  return Array.from({ length: count }, () => pod(...args));
}
