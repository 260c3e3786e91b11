// The cost packer (shared/decisions/scheduling/cost-packer.ts) re-packs the first fit's NodeClaims to
// cost less. These tests show it does, that it is deterministic, and, one table row per constraint
// family the simulation honours, that no pod ends on a NodeClaim one of whose instance-type options
// fails it. The oracle here is written from the pods' specs, independently of the simulation's code.
import { describe, expect, it } from 'vitest';
import { solve } from '../../../shared/decisions/scheduling/index.js';
import { parseMilliQuantity, parseWholeQuantity } from '../../../shared/decisions/quantity.js';
import type {
  DaemonSet,
  ExistingNode,
  InstanceType,
  NewNodeClaim,
  SchedulingInput,
  SchedulingPod,
  SchedulingResult,
} from '../../../shared/decisions/scheduling/types.js';
import type { Taint } from '../../../shared/models/kube.js';
import { instanceType, nodePool, pod, ZONES } from './fixtures.js';

const ZONE = 'topology.kubernetes.io/zone';
const HOST = 'kubernetes.io/hostname';
const ARCH = 'kubernetes.io/arch';

// Larger sizes are cheaper per vCPU up to 8 vCPUs, then dearer: the first fit fills one NodeClaim until
// only the 16-vCPU size holds it; packing in 8-vCPU sizes is cheaper.
const S2 = instanceType('s2', 2, 8, 0.1);
const M4 = instanceType('m4', 4, 16, 0.18);
const L8 = instanceType('l8', 8, 32, 0.32);
const X16 = instanceType('x16', 16, 64, 0.72);
const ARM8 = instanceType('arm8', 8, 32, 0.3, { labels: { [ARCH]: 'arm64' } });
const CATALOG = [S2, M4, L8, X16];

const SIZES = [
  { cpu: '250m', memory: '512Mi' },
  { cpu: '500m', memory: '1Gi' },
  { cpu: '1', memory: '2Gi' },
  { cpu: '1500m', memory: '1Gi' },
];

/** `count` pods of mixed sizes with the same spec and labels (deterministic). */
function mixed(
  count: number,
  spec: Partial<SchedulingPod['spec']> = {},
  labels?: Record<string, string>,
): SchedulingPod[] {
  return Array.from({ length: count }, (_, i) =>
    pod(SIZES[i % SIZES.length], spec, labels ? { labels } : {}),
  );
}

const launched = (result: SchedulingResult) => result.newNodeClaims.reduce((s, c) => s + c.cheapestPrice, 0);

function podsOf(input: SchedulingInput): Map<string, SchedulingPod> {
  return new Map(input.pods.map((p) => [p.metadata.uid, p]));
}

const cpuOf = (p: SchedulingPod) =>
  p.spec.containers.reduce((s, c) => s + parseMilliQuantity(c.resources?.requests?.cpu ?? '0'), 0);
const memoryOf = (p: SchedulingPod) =>
  p.spec.containers.reduce((s, c) => s + parseWholeQuantity(c.resources?.requests?.memory ?? '0'), 0);
const zoneOf = (claim: NewNodeClaim) => {
  const values = claim.requirements.find((r) => r.key === ZONE && r.operator === 'In')?.values;
  return values?.length === 1 ? values[0] : undefined;
};

function tolerates(p: SchedulingPod, taint: Taint): boolean {
  return (p.spec.tolerations ?? []).some(
    (t) =>
      (t.operator === 'Exists' && (t.key === undefined || t.key === taint.key)) ||
      (t.key === taint.key && t.value === taint.value && (!t.effect || t.effect === taint.effect)),
  );
}

/**
 * Everything wrong with the plan that holds for every workload: a pod on a NodeClaim with an option
 * that lacks room for the NodeClaim's pods (after DaemonSets), a label the pod selects, a zone the pod
 * requires, an offering in the NodeClaim's zone, or whose NodePool taints it does not tolerate; a pod
 * placed twice or lost.
 */
function violations(input: SchedulingInput, result: SchedulingResult): string[] {
  const found: string[] = [];
  const byUid = podsOf(input);
  const seen = new Set<string>();
  const daemons = (input.daemonSets ?? []).map((ds) => ({
    cpu: cpuOf({ metadata: { name: '', namespace: '', uid: '' }, spec: ds.template.spec }),
    memory: memoryOf({ metadata: { name: '', namespace: '', uid: '' }, spec: ds.template.spec }),
  }));
  for (const claim of result.newNodeClaims) {
    const pool = input.nodePools.find((p) => p.name === claim.nodePoolName);
    if (!pool) {
      found.push(`NodeClaim of unknown NodePool ${claim.nodePoolName}`);
      continue;
    }
    const onClaim = claim.pods.map((ref) => byUid.get(ref.uid) as SchedulingPod);
    const cpu = onClaim.reduce((s, p) => s + cpuOf(p), 0) + daemons.reduce((s, d) => s + d.cpu, 0);
    const memory = onClaim.reduce((s, p) => s + memoryOf(p), 0) + daemons.reduce((s, d) => s + d.memory, 0);
    const zone = zoneOf(claim);
    for (const name of claim.instanceTypeNames) {
      const it = pool.instanceTypes.find((t) => t.name === name) as InstanceType;
      if (!it) {
        found.push(`${name} is not an instance type of ${pool.name}`);
        continue;
      }
      if (cpu > parseMilliQuantity(it.allocatable.cpu ?? '0'))
        found.push(`${name} has no room for ${cpu}m cpu`);
      if (memory > parseWholeQuantity(it.allocatable.memory ?? '0'))
        found.push(`${name} has no room for ${memory} bytes`);
      if (onClaim.length > Number(it.allocatable.pods ?? '0')) found.push(`${name} has no room for the pods`);
      if (zone !== undefined && !it.offerings.some((o) => o.available && o.zone === zone))
        found.push(`${name} has no offering in ${zone}`);
      for (const p of onClaim) {
        for (const [key, value] of Object.entries(p.spec.nodeSelector ?? {})) {
          const label = key === ZONE ? zone : (it.labels[key] ?? claim.labels[key]);
          if (label !== value) found.push(`${p.metadata.name} selects ${key}=${value}, ${name} has ${label}`);
        }
      }
    }
    for (const p of onClaim) {
      if (seen.has(p.metadata.uid)) found.push(`${p.metadata.name} placed twice`);
      seen.add(p.metadata.uid);
      for (const taint of pool.taints ?? [])
        if (!tolerates(p, taint)) found.push(`${p.metadata.name} does not tolerate ${taint.key}`);
    }
  }
  for (const placement of result.existingPlacements) seen.add(placement.pod.uid);
  for (const u of result.unschedulable) seen.add(u.pod.uid);
  for (const uid of byUid.keys()) if (!seen.has(uid)) found.push(`${uid} lost`);
  return found;
}

/** How many pods with these labels each NodeClaim holds, and in which zone. */
function countsOf(input: SchedulingInput, result: SchedulingResult, app: string) {
  const byUid = podsOf(input);
  return result.newNodeClaims.map((claim) => ({
    zone: zoneOf(claim),
    count: claim.pods.filter((ref) => byUid.get(ref.uid)?.metadata.labels?.app === app).length,
  }));
}

const selector = (app: string) => ({ matchLabels: { app } });

/** `count` mixed pods labelled app=`app` with a required (anti-)affinity to their own app over `key`. */
const affineOver = (kind: 'podAffinity' | 'podAntiAffinity', key: string, app: string, count: number) =>
  mixed(
    count,
    {
      affinity: {
        [kind]: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            { topologyKey: key, labelSelector: selector(app) },
          ],
        },
      },
    },
    { app },
  );

/** `count` mixed pods labelled app=`app` with a DoNotSchedule spread of maxSkew 1 over `key`. */
const spreadOver = (key: string, app: string, count: number) =>
  mixed(
    count,
    {
      topologySpreadConstraints: [
        { maxSkew: 1, topologyKey: key, whenUnsatisfiable: 'DoNotSchedule', labelSelector: selector(app) },
      ],
    },
    { app },
  );

interface Row {
  family: string;
  input: () => SchedulingInput;
  /** The family's own rule, checked over the plan (empty list: holds). */
  rule: (input: SchedulingInput, result: SchedulingResult) => string[];
  /**
   * The packer finds a plan cheaper than the first fit's alone (packing: FirstFit): the row then shows
   * the packer moved pods, not only that the first fit is sound.
   */
  cheaper?: boolean;
}

const rows: Row[] = [
  {
    family: 'resources (mixed requests, no constraint)',
    cheaper: true,
    input: () => ({ pods: mixed(40), nodePools: [nodePool('default', { instanceTypes: CATALOG })] }),
    rule: () => [],
  },
  {
    family: 'nodeSelector on a label only some instance types carry',
    input: () => ({
      pods: [...mixed(12, { nodeSelector: { [ARCH]: 'arm64' } }), ...mixed(12)],
      nodePools: [nodePool('default', { instanceTypes: [...CATALOG, ARM8] })],
    }),
    rule: () => [],
  },
  {
    family: 'nodeSelector on a zone',
    cheaper: true,
    input: () => ({
      pods: [...mixed(10, { nodeSelector: { [ZONE]: ZONES[1] as string } }), ...mixed(10)],
      nodePools: [nodePool('default', { instanceTypes: CATALOG })],
    }),
    rule: (input, result) => {
      const byUid = podsOf(input);
      return result.newNodeClaims.flatMap((claim) =>
        claim.pods
          .filter((ref) => byUid.get(ref.uid)?.spec.nodeSelector?.[ZONE] !== undefined)
          .filter(() => zoneOf(claim) !== ZONES[1])
          .map((ref) => `${ref.name} on a NodeClaim in ${zoneOf(claim) ?? 'any zone'}`),
      );
    },
  },
  {
    family: 'taints, tolerations and NodePool weights',
    cheaper: true,
    input: () => ({
      pods: [
        ...mixed(12, { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'batch' }] }),
        ...mixed(12),
      ],
      nodePools: [
        nodePool('dedicated', {
          weight: 10,
          instanceTypes: CATALOG,
          taints: [{ key: 'dedicated', value: 'batch', effect: 'NoSchedule' }],
        }),
        nodePool('plain', { instanceTypes: CATALOG }),
      ],
    }),
    rule: (input, result) => {
      const byUid = podsOf(input);
      // The heavier NodePool opens the first NodeClaim for the pods that tolerate it (the first fit may
      // then add them to NodeClaims of either, as Karpenter does); pods that do not tolerate it never
      // land there (checked for every row).
      const dedicated = result.newNodeClaims.filter((c) => c.nodePoolName === 'dedicated');
      const tolerating = dedicated
        .flatMap((c) => c.pods)
        .filter((ref) => byUid.get(ref.uid)?.spec.tolerations);
      return tolerating.length > 0 ? [] : ['no pod on the heavier NodePool'];
    },
  },
  {
    family: 'zone topology spread (maxSkew 1) beside unconstrained pods',
    cheaper: true,
    input: () => ({
      pods: [...spreadOver(ZONE, 'web', 13), ...mixed(20)],
      nodePools: [nodePool('default', { instanceTypes: CATALOG })],
    }),
    rule: (input, result) => {
      const perZone = new Map<string, number>(ZONES.map((z) => [z, 0]));
      for (const { zone, count } of countsOf(input, result, 'web')) {
        if (count === 0) continue;
        if (zone === undefined) return ['a spread pod on a NodeClaim without one zone'];
        perZone.set(zone, (perZone.get(zone) ?? 0) + count);
      }
      const counts = [...perZone.values()];
      return Math.max(...counts) - Math.min(...counts) > 1 ? [`zone counts ${counts.join('/')}`] : [];
    },
  },
  {
    family: 'hostname anti-affinity',
    cheaper: true,
    input: () => ({
      pods: [...affineOver('podAntiAffinity', HOST, 'db', 6), ...mixed(30)],
      nodePools: [nodePool('default', { instanceTypes: CATALOG })],
    }),
    rule: (input, result) =>
      countsOf(input, result, 'db')
        .filter((c) => c.count > 1)
        .map((c) => `${c.count} anti-affine pods share a NodeClaim`),
  },
  {
    family: 'hostname topology spread (maxSkew 1)',
    cheaper: true,
    input: () => ({
      pods: [...spreadOver(HOST, 'api', 6), ...mixed(30)],
      nodePools: [nodePool('default', { instanceTypes: CATALOG })],
    }),
    rule: (input, result) => {
      const counts = countsOf(input, result, 'api').map((c) => c.count);
      return Math.max(...counts) - Math.min(...counts) > 1 ? [`hostname counts ${counts.join('/')}`] : [];
    },
  },
  {
    family: 'zonal pod affinity',
    cheaper: true,
    input: () => ({
      pods: [...affineOver('podAffinity', ZONE, 'cache', 16), ...mixed(20)],
      nodePools: [nodePool('default', { instanceTypes: CATALOG })],
    }),
    rule: (input, result) => {
      const zones = new Set(
        countsOf(input, result, 'cache')
          .filter((c) => c.count > 0)
          .map((c) => c.zone ?? 'unpinned'),
      );
      return zones.size === 1 && !zones.has('unpinned') ? [] : [`affine pods in ${[...zones].join(', ')}`];
    },
  },
  {
    family: 'host ports',
    cheaper: true,
    input: () => ({
      pods: [
        ...Array.from({ length: 6 }, () => ({
          ...pod({ cpu: '250m', memory: '256Mi' }),
          spec: {
            containers: [
              {
                name: 'main',
                resources: { requests: { cpu: '250m', memory: '256Mi' } },
                ports: [{ containerPort: 80, hostPort: 8080 }],
              },
            ],
          },
        })),
        ...mixed(24),
      ],
      nodePools: [nodePool('default', { instanceTypes: CATALOG })],
    }),
    rule: (input, result) => {
      const byUid = podsOf(input);
      return result.newNodeClaims
        .map((claim) => claim.pods.filter((ref) => byUid.get(ref.uid)?.spec.containers[0]?.ports?.length))
        .filter((withPort) => withPort.length > 1)
        .map((withPort) => `${withPort.length} pods with host port 8080 share a NodeClaim`);
    },
  },
  {
    family: 'NodePool limits (cpu and nodes)',
    input: () => ({
      pods: mixed(40),
      nodePools: [nodePool('default', { instanceTypes: CATALOG, limits: { cpu: '40', nodes: '5' } })],
    }),
    rule: (input, result) => {
      // Each NodeClaim is charged with its largest option, as Karpenter charges it.
      const pool = input.nodePools[0]!;
      const charged = result.newNodeClaims.reduce(
        (sum, claim) =>
          sum +
          Math.max(
            ...claim.instanceTypeNames.map((n) =>
              Number(pool.instanceTypes.find((t) => t.name === n)?.capacity.cpu),
            ),
          ),
        0,
      );
      const found: string[] = [];
      if (charged > 40) found.push(`charged ${charged} cpu against a limit of 40`);
      if (result.newNodeClaims.length > 5)
        found.push(`${result.newNodeClaims.length} NodeClaims, nodes limit 5`);
      return found;
    },
  },
  {
    family: 'minValues on instance types',
    input: () => ({
      pods: mixed(40),
      nodePools: [
        nodePool('default', {
          instanceTypes: CATALOG,
          requirements: [
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
            { key: 'node.kubernetes.io/instance-type', operator: 'Exists', minValues: 2 },
          ],
        }),
      ],
    }),
    rule: (_input, result) =>
      result.newNodeClaims
        .filter((c) => c.instanceTypeNames.length < 2)
        .map((c) => `a NodeClaim with ${c.instanceTypeNames.length} instance type(s), minValues 2`),
  },
  {
    family: 'DaemonSet overhead',
    cheaper: true,
    input: () => ({
      pods: mixed(40),
      nodePools: [nodePool('default', { instanceTypes: CATALOG })],
      daemonSets: [
        {
          name: 'kube-system/agent',
          template: {
            spec: { containers: [{ name: 'a', resources: { requests: { cpu: '500m', memory: '1Gi' } } }] },
          },
        } satisfies DaemonSet,
      ],
    }),
    rule: () => [],
  },
  {
    family: 'existing capacity first',
    cheaper: true,
    input: () => ({
      pods: mixed(40),
      nodePools: [nodePool('default', { instanceTypes: CATALOG })],
      existingNodes: [
        {
          name: 'node-a',
          kind: 'Node',
          nodePoolName: 'default',
          labels: { [HOST]: 'node-a', 'karpenter.sh/nodepool': 'default' },
          allocatable: { cpu: '4', memory: '16Gi', pods: '110' },
        } satisfies ExistingNode,
      ],
    }),
    rule: (input, result) => {
      // No pod that got a new NodeClaim would have fitted the room left on the existing node.
      const byUid = podsOf(input);
      const onNode = result.existingPlacements.filter((p) => p.nodeName === 'node-a');
      const used = onNode.reduce((sum, p) => sum + cpuOf(byUid.get(p.pod.uid) as SchedulingPod), 0);
      const smallest = Math.min(
        ...result.newNodeClaims
          .flatMap((c) => c.pods)
          .map((ref) => cpuOf(byUid.get(ref.uid) as SchedulingPod)),
      );
      return onNode.length > 0 && used + smallest > 4000
        ? []
        : [`${onNode.length} pods (${used}m) on the existing node, a ${smallest}m pod got a new NodeClaim`];
    },
  },
];

describe('cost packer', () => {
  it('packs into the sizes with the best price per vCPU instead of the one size the first fit filled', () => {
    // 12 × 1 vCPU: the first fit puts all on one NodeClaim only x16 holds ($0.72); l8 + m4 cost $0.50.
    const input = {
      pods: Array.from({ length: 12 }, () => pod({ cpu: '1', memory: '1Gi' })),
      nodePools: [nodePool('default', { instanceTypes: CATALOG })],
    };
    const result = solve(input);
    expect(result.newNodeClaims.map((c) => c.instanceTypeNames[0]).sort()).toEqual(['l8', 'm4']);
    expect(launched(result)).toBeCloseTo(0.5, 6);
    expect(violations(input, result)).toEqual([]);
  });

  it('packs without more NodeClaims than the first fit when asked to, and not at all for FirstFit', () => {
    const input = {
      pods: Array.from({ length: 12 }, () => pod({ cpu: '1', memory: '1Gi' })),
      nodePools: [nodePool('default', { instanceTypes: CATALOG })],
    };
    for (const packing of ['CostWithoutMoreNodeClaims', 'FirstFit'] as const) {
      const result = solve({ ...input, options: { packing } });
      expect(result.newNodeClaims.map((c) => c.instanceTypeNames)).toEqual([['x16']]);
    }
  });

  it('keeps the first fit when re-packing would not be cheaper', () => {
    // 8 × 1 vCPU fill one l8 exactly: nothing to gain.
    const result = solve({
      pods: Array.from({ length: 8 }, () => pod({ cpu: '1', memory: '1Gi' })),
      nodePools: [nodePool('default', { instanceTypes: CATALOG })],
    });
    expect(result.newNodeClaims).toHaveLength(1);
    expect(result.newNodeClaims[0]?.instanceTypeNames).toEqual(['l8', 'x16']);
  });

  it('gives the same plan for the same input', () => {
    const input = rows[4]!.input();
    expect(solve(input)).toEqual(solve(input));
  });

  describe('never breaks a constraint the simulation honours', () => {
    it.each(rows)('$family', ({ input: make, rule, cheaper }) => {
      const input = make();
      const result = solve(input);
      const firstFit = solve({ ...input, options: { packing: 'FirstFit' } });
      if (cheaper) expect(launched(result)).toBeLessThan(launched(firstFit) - 1e-6);
      else expect(launched(result)).toBeLessThanOrEqual(launched(firstFit) + 1e-9);
      expect(result.unschedulable).toEqual([]);
      expect(violations(input, result)).toEqual([]);
      expect(rule(input, result)).toEqual([]);
    });
  });
});
