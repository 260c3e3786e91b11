// The consolidation decision at scale, pure (no API server): 1,000 initialized nodes of one NodePool with
// 10,000 pods (10 per node, 25% of each node's CPU requested). First every node is judged as a candidate
// (blockers, emptiness), then the Underutilized command is searched for: multi-node by binary search over
// the first 100 candidates (the 10% budget), each step a scheduling simulation of their pods onto the
// other 900 nodes. Reports wall time and heap growth (after a full collection when --expose-gc is on).
import {
  evaluateCandidates,
  type ConsolidationNodeInput,
} from '../../shared/decisions/consolidation/candidates.js';
import type { ConsolidationPod } from '../../shared/decisions/consolidation/pods.js';
import {
  orderCandidates,
  underutilizedCommand,
  type UnderutilizedCandidate,
} from '../../shared/decisions/consolidation/underutilized.js';
import type { ExistingNode, InstanceType, SchedulingPod } from '../../shared/decisions/scheduling/types.js';
import type { NodeClaim, NodePool } from '../../shared/models/karpenter.js';
import type { Node } from '../../shared/models/kube.js';

const NODES = 1_000;
const PODS_PER_NODE = 10;
const NOW = new Date('2026-06-01T12:00:00Z');

const sizes: [string, number, number][] = [
  ['Standard_D2s_v5', 2, 0.096],
  ['Standard_D4s_v5', 4, 0.192],
  ['Standard_D8s_v5', 8, 0.384],
  ['Standard_D16s_v5', 16, 0.768],
];

const instanceTypes: InstanceType[] = sizes.map(([name, cpu, price]) => ({
  name,
  labels: {
    'node.kubernetes.io/instance-type': name,
    'kubernetes.io/arch': 'amd64',
    'kubernetes.io/os': 'linux',
  },
  capacity: { cpu: String(cpu), memory: `${cpu * 4}Gi`, pods: '110' },
  allocatable: { cpu: String(cpu), memory: `${cpu * 4 - 1}Gi`, pods: '110' },
  offerings: ['1', '2', '3'].map((zone) => ({
    zone: `westus2-${zone}`,
    capacityType: 'on-demand' as const,
    price,
    available: true,
  })),
}));

const nodePool: NodePool = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'general', uid: 'general' },
  spec: {
    disruption: { consolidateAfter: '30s', budgets: [{ nodes: '10%' }] },
    template: {
      spec: {
        nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
        requirements: [],
      },
    },
  },
};

interface Generated {
  inputs: ConsolidationNodeInput[];
  existing: ExistingNode[];
  podsByNode: Map<string, SchedulingPod[]>;
}

function generate(): Generated {
  const inputs: ConsolidationNodeInput[] = [];
  const existing: ExistingNode[] = [];
  const podsByNode = new Map<string, SchedulingPod[]>();
  const type = instanceTypes[1] as InstanceType;
  for (let n = 0; n < NODES; n++) {
    const name = `node-${n}`;
    const zone = `westus2-${(n % 3) + 1}`;
    const labels = {
      ...type.labels,
      'kubernetes.io/hostname': name,
      'topology.kubernetes.io/zone': zone,
      'karpenter.sh/capacity-type': 'on-demand',
      'karpenter.sh/nodepool': 'general',
    };
    const nodeClaim: NodeClaim = {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: { name: `claim-${n}`, uid: `claim-${n}`, labels: { 'karpenter.sh/nodepool': 'general' } },
      spec: {
        nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
        requirements: [],
      },
      status: {
        providerID: `azure:///vm/${name}`,
        nodeName: name,
        lastPodEventTime: '2026-06-01T10:00:00Z',
        conditions: [
          {
            type: 'Initialized',
            status: 'True',
            reason: 'Initialized',
            message: '',
            lastTransitionTime: '2026-06-01T09:00:00Z',
          },
        ],
      },
    };
    const node: Node = { metadata: { name, labels }, spec: { providerID: `azure:///vm/${name}` } };
    const pods: ConsolidationPod[] = [];
    const scheduling: SchedulingPod[] = [];
    for (let p = 0; p < PODS_PER_NODE; p++) {
      const podName = `web-${n}-${p}`;
      const podLabels = { app: `app-${p % 20}` };
      pods.push({
        namespace: 'apps',
        name: podName,
        uid: podName,
        labels: podLabels,
        annotations: {},
        ownerKinds: ['ReplicaSet'],
        tolerations: [],
        phase: 'Running',
        nodeName: name,
        ready: true,
        requests: { cpu: 0.1, memory: 256 * 2 ** 20 },
      });
      scheduling.push({
        metadata: { name: podName, namespace: 'apps', uid: podName, labels: podLabels },
        spec: { containers: [{ name: 'app', resources: { requests: { cpu: '100m', memory: '256Mi' } } }] },
      });
    }
    inputs.push({ nodeClaim, node, pods, disrupting: false });
    podsByNode.set(name, scheduling);
    existing.push({
      name,
      kind: 'Node',
      nodePoolName: 'general',
      labels,
      allocatable: type.allocatable,
      pods: scheduling.map((s) => ({
        namespace: 'apps',
        name: s.metadata.name,
        requests: { cpu: '100m', memory: '256Mi' },
      })),
      initialized: true,
    });
  }
  return { inputs, existing, podsByNode };
}

const heapMb = () => {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed / 2 ** 20;
};

export async function runConsolidationBench(): Promise<void> {
  const generated = generate();
  const heapBefore = heapMb();
  const started = performance.now();
  const verdicts = evaluateCandidates(generated.inputs, {
    nodePool,
    pdbs: new Map(),
    nominatedNodes: new Set(),
    now: NOW,
  });
  const candidatesMs = performance.now() - started;
  const candidates: UnderutilizedCandidate[] = verdicts.flatMap((v) =>
    v.kind === 'candidate'
      ? [
          {
            name: v.name,
            nodeName: v.input.node?.metadata.name ?? '',
            price: 0.192,
            capacityType: 'on-demand' as const,
            instanceType: 'Standard_D4s_v5',
            pods: generated.podsByNode.get(v.input.node?.metadata.name ?? '') ?? [],
            disruptionCost: 1 + v.reschedulable.length,
          },
        ]
      : [],
  );
  const decisionStarted = performance.now();
  const command = underutilizedCommand({
    candidates: orderCandidates(candidates),
    cluster: {
      nodePools: [{ name: 'general', requirements: [], instanceTypes }],
      existingNodes: generated.existing,
    },
    pendingPods: [],
    allowed: Math.ceil(NODES * 0.1),
    spotToSpot: false,
  });
  const decisionMs = performance.now() - decisionStarted;
  const heapGrowth = heapMb() - heapBefore;
  const what = command
    ? `${command.decision} ${command.candidates.length}${command.decision === 'replace' ? ' → 1' : ''}`
    : 'none';
  const header = [
    'nodes',
    'pods',
    'candidates',
    'judge candidates ms',
    'underutilized decision ms',
    'command',
    'heap growth MB',
  ];
  const row = [
    String(NODES),
    String(NODES * PODS_PER_NODE),
    String(candidates.length),
    candidatesMs.toFixed(0),
    decisionMs.toFixed(0),
    what,
    heapGrowth.toFixed(1),
  ];
  const widths = header.map((h, i) => Math.max(h.length, (row[i] ?? '').length));
  const format = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i] ?? 0)).join('  ');
  process.stdout.write(
    `\nConsolidation decision (pure; ${PODS_PER_NODE} pods of 100m per 4-CPU node, budget 10%: multi-node over the first 100 candidates, then single-node)\n`,
  );
  process.stdout.write(
    `${[format(header), format(widths.map((w) => '-'.repeat(w))), format(row)].join('\n')}\n`,
  );
}
