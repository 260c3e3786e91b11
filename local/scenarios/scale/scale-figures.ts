// The scale scenario's arithmetic, kept pure so it can be read (and checked) apart from the stack: how
// N nodes' worth of pods is split over the pools and Deployments, what a drift at a percentage budget
// should take at best, how long each pod waited for the VM it ended on, and the sweep's duration read
// back from the stack's structured log.
import { percentile } from '../day/invariants/pending.js';
import type { ArmRequest, DayHistory } from '../day/invariants/history.js';
import { vmNameFor } from '../../../shared/cloudprovider/azure/decisions/vm-spec.js';

/** Requests small enough that about this many pods fill a 2-vCPU node (175m of its 1.9 allocatable vCPU). */
export const PODS_PER_NODE = 10;
export const POD_REQUESTS = { cpu: '175m', memory: '256Mi' } as const;

export interface ScaleWorkload {
  /** Short name; the Deployment is `<name>-<runId>`. */
  name: string;
  pool: string;
  /** Spread across zones with maxSkew 1 (DoNotSchedule). */
  zoneSpread: boolean;
  /** Share of all pods. */
  share: number;
}

/** Three pools, five Deployments: three of them zone-spread, two free to pack. */
export const SCALE_POOLS = ['web', 'api', 'jobs'] as const;
export const SCALE_WORKLOADS: readonly ScaleWorkload[] = [
  { name: 'frontend', pool: 'web', zoneSpread: true, share: 0.2 },
  { name: 'static', pool: 'web', zoneSpread: true, share: 0.2 },
  { name: 'api', pool: 'api', zoneSpread: true, share: 0.2 },
  { name: 'worker', pool: 'api', zoneSpread: false, share: 0.15 },
  { name: 'queue', pool: 'jobs', zoneSpread: false, share: 0.25 },
];

/** Each workload's replicas for `nodes` nodes' worth of pods (the rounding lands on the last one). */
export function replicasFor(nodes: number, workloads: readonly ScaleWorkload[] = SCALE_WORKLOADS): number[] {
  const total = nodes * PODS_PER_NODE;
  const replicas = workloads.map((w) => Math.max(1, Math.round(total * w.share)));
  const last = replicas.length - 1;
  replicas[last] = Math.max(1, (replicas[last] ?? 0) + total - replicas.reduce((sum, r) => sum + r, 0));
  return replicas;
}

/** Replicas after scaling to `fraction` (at least one each, so every Deployment keeps a pod). */
export const scaledReplicas = (replicas: readonly number[], fraction: number): number[] =>
  replicas.map((r) => Math.max(1, Math.round(r * fraction)));

/**
 * The fewest nodes the pods of each pool need at PODS_PER_NODE (a zone-spread pool at least one per
 * zone), summed over the pools: the scale-down's target.
 */
export function packingMinimum(podsByPool: ReadonlyMap<string, { pods: number; spread: boolean }>): number {
  let nodes = 0;
  for (const { pods, spread } of podsByPool.values())
    nodes += Math.max(spread ? 3 : 1, Math.ceil(pods / PODS_PER_NODE));
  return nodes;
}

/** A pool's disruption budget in nodes: a percentage rounds up, as upstream's does, and is at least one. */
export const budgetSlots = (budgetPercent: number, nodes: number): number =>
  Math.max(1, Math.ceil((budgetPercent * nodes) / 100));

/**
 * The drift makespan a perfect scheduler of replacements would reach: each pool replaces its nodes in
 * waves of its budget (a percentage rounds up, as upstream's does), pools in parallel, each wave one
 * replacement cycle long.
 */
export function idealDriftMakespanMs(
  nodesByPool: ReadonlyMap<string, number>,
  budgetPercent: number,
  cycleMs: number,
): { ms: number; waves: number } {
  let waves = 0;
  for (const nodes of nodesByPool.values()) {
    if (nodes === 0) continue;
    waves = Math.max(waves, Math.ceil(nodes / budgetSlots(budgetPercent, nodes)));
  }
  return { ms: waves * cycleMs, waves };
}

/**
 * How busy the drift kept its budgets: the node-seconds the drifted nodes spent disrupting (each one's
 * mark to its NodeClaim's deletion) over the node-seconds the pools' budgets allowed during the makespan.
 * 1 is a budget never idle. The makespan ratio above is about the inverse of this when the cycles vary
 * little, so the two together say whether a ratio over 1 comes from idle budget (a freed slot refilled
 * late, a budget read from a stale view) or from cycles that vary.
 */
export function driftBudgetBusy(
  nodesByPool: ReadonlyMap<string, number>,
  budgetPercent: number,
  cyclesMs: readonly number[],
  makespanMs: number,
): number {
  let slots = 0;
  for (const nodes of nodesByPool.values()) {
    if (nodes > 0) slots += budgetSlots(budgetPercent, nodes);
  }
  const busyMs = sum(cyclesMs);
  return slots > 0 && makespanMs > 0 ? busyMs / (slots * makespanMs) : Number.NaN;
}

const sum = (values: readonly number[]): number => values.reduce((total, value) => total + value, 0);

export const mean = (values: readonly number[]): number =>
  values.length === 0 ? Number.NaN : sum(values) / values.length;

export const median = (values: readonly number[]): number =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );

/**
 * For each pod first seen at or after `from` that ran: from its first version (pending, before any Node
 * could take it) to the successful VM PUT of the NodeClaim whose Node it ran on. Pods that ran on a node
 * launched before they were created (none in a scale-up from zero) are left out.
 */
export function pendingToVmPut(
  history: Pick<DayHistory, 'pods' | 'armRequests'>,
  claimOfNode: ReadonlyMap<string, string>,
  from: number,
  to: number,
): number[] {
  const putAt = new Map<string, number>();
  for (const request of history.armRequests as readonly ArmRequest[])
    if (request.kind === 'putVm' && request.method === 'PUT' && request.status >= 200 && request.status < 300)
      if (request.vmName && !putAt.has(request.vmName)) putAt.set(request.vmName, request.at);
  const firstSeen = new Map<string, number>();
  const ranOn = new Map<string, string>();
  for (const { object, at } of history.pods) {
    if (at < from || at > to) continue;
    const name = object.metadata.name;
    if (!firstSeen.has(name)) firstSeen.set(name, at);
    if (object.status?.phase === 'Running' && object.spec?.nodeName && !ranOn.has(name))
      ranOn.set(name, object.spec.nodeName);
  }
  const waits: number[] = [];
  for (const [pod, node] of ranOn) {
    const claim = claimOfNode.get(node);
    const put = claim === undefined ? undefined : putAt.get(vmNameFor(claim));
    const seen = firstSeen.get(pod);
    if (put === undefined || seen === undefined || put < seen) continue;
    waits.push(put - seen);
  }
  return waits.sort((a, b) => a - b);
}

export interface SweepSample {
  at: number;
  durationMs: number;
  nodes: number;
  nodeClaims: number;
  /** The snapshot read and each step, from the sweep's own `timingsMs`. */
  timingsMs: Record<string, number>;
}

/** The lifecycle sweep's own report lines ("lifecycle sweep finished", JSON per line) in a log's text. */
export function sweepSamples(logText: string, from: number, to: number): SweepSample[] {
  const samples: SweepSample[] = [];
  for (const line of logText.split('\n')) {
    if (!line.includes('"lifecycle sweep finished"')) continue;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch {
      continue;
    }
    const entry = record as {
      time?: string;
      durationMs?: number;
      counts?: { nodes?: number; nodeClaims?: number };
      timingsMs?: Record<string, number>;
    };
    const at = Date.parse(entry.time ?? '');
    if (!(at >= from && at <= to) || typeof entry.durationMs !== 'number') continue;
    samples.push({
      at,
      durationMs: entry.durationMs,
      nodes: entry.counts?.nodes ?? 0,
      nodeClaims: entry.counts?.nodeClaims ?? 0,
      timingsMs: entry.timingsMs ?? {},
    });
  }
  return samples;
}

export interface SweepPart {
  /** `read` (the snapshot) or a step's name. */
  part: string;
  p50Ms: number;
  maxMs: number;
}

/**
 * p50 and max of the sweeps that saw at least `nodes` Nodes (the cluster at its full size), and the parts
 * that took the longest in them (by their slowest sweep), so a slow sweep says where its time went.
 */
export function sweepAtSize(
  samples: readonly SweepSample[],
  nodes: number,
): { sweeps: number; p50Ms: number; maxMs: number; slowestParts: SweepPart[] } {
  const atSize = samples.filter((s) => s.nodes >= nodes);
  const durations = atSize.map((s) => s.durationMs).sort((a, b) => a - b);
  const byPart = new Map<string, number[]>();
  for (const sample of atSize)
    for (const [part, ms] of Object.entries(sample.timingsMs))
      byPart.set(part, [...(byPart.get(part) ?? []), ms]);
  const slowestParts = [...byPart]
    .map(([part, ms]) => {
      const sorted = [...ms].sort((a, b) => a - b);
      return { part, p50Ms: percentile(sorted, 50), maxMs: sorted.at(-1) ?? 0 };
    })
    .sort((a, b) => b.maxMs - a.maxMs || a.part.localeCompare(b.part))
    .slice(0, 4);
  return {
    sweeps: durations.length,
    p50Ms: percentile(durations, 50),
    maxMs: durations.at(-1) ?? 0,
    slowestParts,
  };
}
