// `npm run bench` provisioning table: one scheduling solve for 1,000 / 5,000 / 20,000 pending pods over
// a catalog of more than 400 instance types (provisioning-catalog.ts), for three workloads:
// - homogeneous: identical pods (1 vCPU, 2 GiB);
// - mixed: Karpenter's benchmark requests (CPU from {100m, 250m, 500m, 1, 1.5}, memory from
//   {100Mi … 4Gi}), no constraints;
// - mixed + topology: the same, split in fifths as Karpenter's makeDiversePods: none, zone spread,
//   hostname spread, zonal self-affinity, hostname self-anti-affinity.
// Each case runs in its own Node process capped at a 2 GB heap (a Flex Consumption instance), so a
// case that needs more fails instead of swapping, and heap figures do not mix.
//
// Price lower bound (local/scenarios/price-lower-bound.ts), over the catalog's on-demand sizes and their
// allocatable: the requests priced at the best $/vCPU or $/GiB, and, where hostname anti-affinity or
// spreads force N nodes, the cheapest N nodes that can hold the requests between them; the larger
// counts. The launch price is each NodeClaim's cheapest offering (what launch pays).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { solve } from '../../shared/decisions/scheduling/index.js';
import type {
  InstanceType,
  SchedulingPod,
  SchedulingResult,
} from '../../shared/decisions/scheduling/types.js';
import { parseMilliQuantity, parseWholeQuantity } from '../../shared/decisions/quantity.js';
import {
  nodesForcedByHostname,
  priceLowerBound,
  type PricedSize,
} from '../../local/scenarios/price-lower-bound.js';
import { benchCatalog } from './provisioning-catalog.js';

type Workload = 'homogeneous' | 'mixed' | 'mixed + topology';
const workloads: Workload[] = ['homogeneous', 'mixed', 'mixed + topology'];
const sizes = [1_000, 5_000, 20_000];
const HEAP_LIMIT_MB = 2048;
const GIB = 1024 ** 3;

export interface ProvisioningMeasurement {
  workload: Workload;
  pods: number;
  instanceTypes: number;
  ms: number;
  /** Peak resident memory of the whole process (Node itself included) by the end of the solve. */
  peakRssMb: number;
  /** Heap still in use right after the solve, less what was in use before it (result and state). */
  heapMb: number;
  nodeClaims: number;
  unschedulable: number;
  launchPrice: number;
  lowerBound: number;
}

/** A deterministic pseudo-random sequence, so every run solves the same pods. */
function sequence(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const CPU = ['100m', '250m', '500m', '1', '1500m'];
const MEMORY = ['100Mi', '256Mi', '512Mi', '1Gi', '2Gi', '4Gi'];

export function benchPods(workload: Workload, count: number): SchedulingPod[] {
  const random = sequence(count);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)] as T;
  return Array.from({ length: count }, (_, index) => {
    const name = `pod-${index}`;
    const requests =
      workload === 'homogeneous' ? { cpu: '1', memory: '2Gi' } : { cpu: pick(CPU), memory: pick(MEMORY) };
    const kind = workload === 'mixed + topology' ? index % 5 : 0;
    const app = `app-${kind}`;
    const selector = { matchLabels: { app } };
    const pod: SchedulingPod = {
      metadata: {
        name,
        namespace: 'bench',
        uid: `uid-${index}`,
        labels: { app },
        creationTimestamp: '2026-01-01T00:00:00Z',
      },
      spec: { containers: [{ name: 'main', resources: { requests } }] },
    };
    if (kind === 1) {
      pod.spec.topologySpreadConstraints = [
        {
          maxSkew: 1,
          topologyKey: 'topology.kubernetes.io/zone',
          whenUnsatisfiable: 'DoNotSchedule',
          labelSelector: selector,
        },
      ];
    } else if (kind === 2) {
      pod.spec.topologySpreadConstraints = [
        {
          maxSkew: 1,
          topologyKey: 'kubernetes.io/hostname',
          whenUnsatisfiable: 'DoNotSchedule',
          labelSelector: selector,
        },
      ];
    } else if (kind === 3) {
      pod.spec.affinity = {
        podAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            { topologyKey: 'topology.kubernetes.io/zone', labelSelector: selector },
          ],
        },
      };
    } else if (kind === 4) {
      pod.spec.affinity = {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            { topologyKey: 'kubernetes.io/hostname', labelSelector: selector },
          ],
        },
      };
    }
    return pod;
  });
}

function lowerBound(pods: readonly SchedulingPod[], catalog: readonly InstanceType[]): number {
  const sizes: PricedSize[] = catalog.map((it) => ({
    price: Math.min(...it.offerings.filter((o) => o.capacityType === 'on-demand').map((o) => o.price)),
    cpu: parseMilliQuantity(it.allocatable.cpu ?? '0') / 1000,
    memoryGiB: parseWholeQuantity(it.allocatable.memory ?? '0') / GIB,
  }));
  let cpu = 0;
  let memory = 0;
  for (const pod of pods) {
    const requests = pod.spec.containers[0]?.resources?.requests ?? {};
    cpu += parseMilliQuantity(requests.cpu ?? '0') / 1000;
    memory += parseWholeQuantity(requests.memory ?? '0') / GIB;
  }
  return priceLowerBound(sizes, { cpu, memoryGiB: memory, nodes: nodesForcedByHostname(pods) });
}

/** Runs one case in this process (the child side). */
export function measureCase(workload: Workload, count: number): ProvisioningMeasurement {
  const catalog = benchCatalog();
  const pods = benchPods(workload, count);
  const nodePools = [
    {
      name: 'default',
      requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In' as const, values: ['on-demand'] }],
      limits: { cpu: '10000000', memory: '10000000Gi' },
      instanceTypes: catalog,
    },
  ];
  // Warm-up on a small batch so JIT compilation is not charged to the measured solve.
  solve({ pods: benchPods(workload, 1_000), nodePools });
  globalThis.gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  const started = performance.now();
  const result: SchedulingResult = solve({ pods, nodePools });
  const ms = performance.now() - started;
  const heapMb = (process.memoryUsage().heapUsed - heapBefore) / 1024 / 1024;
  const peakRssMb = process.resourceUsage().maxRSS / 1024;
  return {
    workload,
    pods: count,
    instanceTypes: catalog.length,
    ms,
    peakRssMb,
    heapMb,
    nodeClaims: result.newNodeClaims.length,
    unschedulable: result.unschedulable.length,
    launchPrice: result.newNodeClaims.reduce((sum, claim) => sum + claim.cheapestPrice, 0),
    lowerBound: lowerBound(pods, catalog),
  };
}

function runChild(workload: Workload, count: number): Promise<ProvisioningMeasurement | string> {
  const script = fileURLToPath(import.meta.url);
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        ...process.execArgv,
        `--max-old-space-size=${HEAP_LIMIT_MB}`,
        '--expose-gc',
        script,
        workload,
        String(count),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('close', (code) => {
      if (code === 0) resolve(JSON.parse(out) as ProvisioningMeasurement);
      else resolve(`exit ${code}: ${err.trim().split('\n').slice(-3).join(' ')}`);
    });
  });
}

const goals = {
  seconds5k: 5,
  podsPerSecond: 1_000,
  heapMb: HEAP_LIMIT_MB,
  priceRatio: { homogeneous: 1.03, mixed: 1.06, 'mixed + topology': 1.1 } satisfies Record<Workload, number>,
};

function row(m: ProvisioningMeasurement): string[] {
  const podsPerSecond = m.pods / (m.ms / 1000);
  const ratio = m.launchPrice / m.lowerBound;
  const verdicts: string[] = [];
  if (m.pods === 5_000) verdicts.push(m.ms / 1000 < goals.seconds5k ? '<5 s ✔' : '<5 s ✘');
  verdicts.push(podsPerSecond >= goals.podsPerSecond ? '≥1k/s ✔' : '≥1k/s ✘');
  if (m.pods === 20_000) verdicts.push(m.peakRssMb <= goals.heapMb ? '≤2 GB ✔' : '≤2 GB ✘');
  const priceGoal = goals.priceRatio[m.workload];
  verdicts.push(`≤${priceGoal.toFixed(2)}× ${ratio <= priceGoal ? '✔' : '✘'}`);
  return [
    m.workload,
    m.pods.toLocaleString('en-US'),
    String(m.instanceTypes),
    (m.ms / 1000).toFixed(2),
    Math.round(podsPerSecond).toLocaleString('en-US'),
    m.peakRssMb.toFixed(0),
    m.heapMb.toFixed(0),
    String(m.nodeClaims),
    String(m.unschedulable),
    `$${m.launchPrice.toFixed(2)}`,
    `$${m.lowerBound.toFixed(2)}`,
    `${ratio.toFixed(3)}×`,
    verdicts.join(' '),
  ];
}

export function provisioningTable(
  rows: readonly (ProvisioningMeasurement | { workload: Workload; pods: number; error: string })[],
): string {
  const header = [
    'workload',
    'pods',
    'types',
    's',
    'pods/s',
    'peak MB',
    'heap MB',
    'NodeClaims',
    'unsched.',
    '$/h launched',
    '$/h bound',
    'ratio',
    'goals',
  ];
  const lines = rows.map((r) =>
    'error' in r
      ? [r.workload, String(r.pods), '', '', '', '', '', '', '', '', '', '', `✘ ${r.error}`]
      : row(r),
  );
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const format = (cells: string[]) =>
    cells
      .map((c, i) =>
        i === 0 || i === cells.length - 1 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0),
      )
      .join('  ');
  return [format(header), format(widths.map((w) => '-'.repeat(w))), ...lines.map(format)].join('\n');
}

export async function runProvisioningBench(
  selected: readonly number[] = sizes,
  log: (line: string) => void = (line) => process.stderr.write(`[bench] ${line}\n`),
): Promise<void> {
  const rows: Parameters<typeof provisioningTable>[0][number][] = [];
  for (const workload of workloads) {
    for (const count of selected) {
      const measured = await runChild(workload, count);
      if (typeof measured === 'string') {
        log(`provisioning ${workload} ${count}: ${measured}`);
        rows.push({ workload, pods: count, error: measured });
      } else {
        log(`provisioning ${workload} ${count}: ${(measured.ms / 1000).toFixed(2)} s`);
        rows.push(measured);
      }
    }
  }
  process.stdout.write(
    '\nProvisioning: one scheduling solve (each case in its own process, heap capped at 2 GB)\n',
  );
  process.stdout.write(`${provisioningTable(rows)}\n`);
  process.stdout.write(
    `\nGoals: 5,000 pods in under ${goals.seconds5k} s; ≥ ${goals.podsPerSecond.toLocaleString('en-US')} pods/s; 20,000 pods within a ${goals.heapMb} MB heap; launch price at most ${workloads.map((w) => `${goals.priceRatio[w]}× (${w})`).join(', ')} the lower bound. Peak MB = the process's peak resident memory (Node and the catalog included), judged against the 2 GB; heap MB = heap in use after the solve less before it.\n`,
  );
}

// Child side: `tsx provisioning-bench.ts <workload> <pods>` prints one measurement as JSON.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [workload, count] = process.argv.slice(2);
  if (workload && count) {
    process.stdout.write(JSON.stringify(measureCase(workload as Workload, Number(count))));
  } else {
    await runProvisioningBench();
  }
}
