// What the day plays, drawn from one seed: the NodePools, the workload's curve through the simulated
// hours, and the weather as a list of entries. Pure: the scenario applies the plan; the invariants and the
// picture read it. Node repair and spot preemption are entries like the others, played only when the
// function host runs with the feature gate they exercise (`requires`), and listed as not played otherwise.
import type { Random } from './prng.js';
import { seededRandom } from './prng.js';

export type PoolName = 'general' | 'batch' | 'arm';

export interface PoolPlan {
  name: PoolName;
  /** What the pool is for, for the summary. */
  purpose: string;
  arch: 'amd64' | 'arm64';
  capacityTypes: readonly ('on-demand' | 'spot')[];
  families: readonly string[];
  cpuBelow: number;
  consolidationPolicy: 'WhenEmpty' | 'WhenEmptyOrUnderutilized';
  /** Simulated hours. */
  consolidateAfterHours: number;
  /** Simulated hours, or undefined for Never. */
  expireAfterHours?: number;
  /** The budget for every reason outside a maintenance window. */
  budget: string;
}

export interface WorkloadPlan {
  name: string;
  pool: PoolName;
  cpu: string;
  memory: string;
  /** Replicas at each whole simulated hour 0…24 (the scenario scales at each hour). */
  replicasByHour: readonly number[];
  /** Spread across zones with maxSkew 1. */
  zoneSpread: boolean;
  /** karpenter.sh/do-not-disrupt on every pod. */
  doNotDisrupt: boolean;
  /** A PodDisruptionBudget over the pods. */
  pdb?: { maxUnavailable: number } | { minAvailable: number };
}

export type WeatherEntry =
  | {
      kind: 'zonalAllocationFailure';
      atHour: number;
      hours: number;
      zone: string;
      /** Only creations of this size fail (the capacity shortage); every size when absent. */
      vmSize?: string;
    }
  | { kind: 'familyQuota'; atHour: number; hours: number; family: string; sizes: readonly string[] }
  | {
      kind: 'throttleBurst';
      atHour: number;
      hours: number;
      requestKind: 'putVm' | 'getOperation' | 'deleteVm';
      requests: number;
    }
  | { kind: 'slowLro'; atHour: number; hours: number; factor: number }
  | { kind: 'drift'; atHour: number; hours: number; pool: PoolName; imageFamily: string; windowHours: number }
  | { kind: 'apiServerOutage'; atHour: number; hours: number; seconds: number }
  | { kind: 'hostKill'; atHour: number; hours: number; downSeconds: number }
  | {
      kind: 'nodeNotReady';
      atHour: number;
      hours: number;
      /**
       * The pool whose node goes NotReady at `atHour` (the node carrying the most pods): its kubelet dies
       * a node-monitor grace period of wall time before (weather.ts), as Kubernetes notices only then.
       */
      pool: PoolName;
      /** The fault outlives a VM restart (a broken disk): reboot does not help, the node is replaced. */
      survivesReboot: boolean;
      requires: 'NodeRepair';
    }
  | {
      kind: 'spotPreemption';
      atHour: number;
      hours: number;
      /** The pool whose spot node Azure preempts; played once it has one, within `hours`. */
      pool: PoolName;
      requires: 'NodeRepair';
    };

export type WeatherKind = WeatherEntry['kind'];

export interface DayPlan {
  seed: number;
  pools: readonly PoolPlan[];
  workloads: readonly WorkloadPlan[];
  /** In the order they happen. */
  weather: readonly WeatherEntry[];
}

export interface PlanOptions {
  seed: number;
  /** Wall seconds of the API server outage (real time: request timeouts and watches are real). */
  outageSeconds: number;
  /**
   * Adds a capacity shortage: from noon to the end of the day the general pool's cheapest size fails
   * ZonalAllocationFailed in every zone, so the launches after noon remember it and take a dearer size,
   * which consolidation would replace by the cheapest one in the evening if it did not see what launch
   * sees. Not part of a default day (which leaves the churn invariant little to judge); the evidence
   * that the invariant can fail (docs/day-in-the-life.md).
   */
  capacityShortage?: boolean;
}

/** The general pool's cheapest size in the emulator's catalog, which the capacity shortage takes away. */
export const SHORTAGE_SIZE = 'Standard_D2as_v5';

/** Families of the general pool's sizes, by the sizes the emulator's catalog has of each. */
const generalFamilies: Record<string, readonly string[]> = {
  standardDASv5Family: ['Standard_D2as_v5', 'Standard_D4as_v5', 'Standard_D8as_v5'],
  standardDSv5Family: ['Standard_D2s_v5', 'Standard_D4s_v5', 'Standard_D8s_v5'],
};

export const HOURS = 24;

/** 0 at night, rising from about 06:00 to a peak near `peak`, back to 0 by about 22:00. */
export function diurnal(hour: number, peak: number): number {
  const rise = peak - 7;
  const fall = 22 - peak;
  const phase = hour < peak ? (hour - (peak - rise)) / rise : (peak + fall - hour) / fall;
  if (phase <= 0) return 0;
  return Math.pow(Math.sin((Math.min(1, phase) * Math.PI) / 2), 1.5);
}

function curve(random: Random, low: number, high: number, peak: number): number[] {
  const top = Math.round(high * random.between(0.85, 1.15));
  return Array.from({ length: HOURS + 1 }, (_, hour) => Math.round(low + (top - low) * diurnal(hour, peak)));
}

/** The zones of the day's region: every pool may launch in each, and a zone spread reaches all three. */
export const DAY_ZONES: readonly string[] = ['1', '2', '3'];

export function dayPlan(options: PlanOptions): DayPlan {
  const random = seededRandom(options.seed);
  const peak = random.between(12, 14.5);
  const burstAt = Math.round(random.between(13, 15.5));
  const burstPods = random.integer(200, 300);
  const burstHours = 4;
  const zones = DAY_ZONES;
  const morningZone = random.pick(zones);
  const eveningZone = random.pick(zones);
  const family = random.pick(Object.keys(generalFamilies));
  const pools: PoolPlan[] = [
    {
      name: 'general',
      purpose: 'on-demand general purpose, zone spread',
      arch: 'amd64',
      capacityTypes: ['on-demand'],
      families: ['D'],
      cpuBelow: 9,
      consolidationPolicy: 'WhenEmptyOrUnderutilized',
      consolidateAfterHours: 0.5,
      budget: '20%',
    },
    {
      name: 'batch',
      purpose: 'spot allowed, batch',
      arch: 'amd64',
      capacityTypes: ['spot', 'on-demand'],
      families: ['D', 'F'],
      cpuBelow: 17,
      consolidationPolicy: 'WhenEmpty',
      consolidateAfterHours: 0.25,
      budget: '50%',
    },
    {
      name: 'arm',
      purpose: 'arm64, nodes expire after 6 h',
      arch: 'arm64',
      capacityTypes: ['on-demand'],
      families: ['D'],
      cpuBelow: 9,
      consolidationPolicy: 'WhenEmptyOrUnderutilized',
      consolidateAfterHours: 0.5,
      expireAfterHours: 6,
      budget: '1',
    },
  ];
  const steady = (replicas: number) => Array.from({ length: HOURS + 1 }, () => replicas);
  const workloads: WorkloadPlan[] = [
    {
      name: 'web',
      pool: 'general',
      cpu: '250m',
      memory: '512Mi',
      replicasByHour: curve(random, 4, 32, peak),
      zoneSpread: true,
      doNotDisrupt: false,
      pdb: { maxUnavailable: 2 },
    },
    {
      name: 'api',
      pool: 'general',
      cpu: '500m',
      memory: '1Gi',
      replicasByHour: steady(6),
      zoneSpread: true,
      doNotDisrupt: false,
      pdb: { minAvailable: 5 },
    },
    {
      name: 'pinned',
      pool: 'general',
      cpu: '250m',
      memory: '512Mi',
      replicasByHour: steady(2),
      zoneSpread: false,
      doNotDisrupt: true,
    },
    {
      name: 'arm-web',
      pool: 'arm',
      cpu: '500m',
      memory: '1Gi',
      replicasByHour: curve(random, 2, 10, peak),
      zoneSpread: false,
      doNotDisrupt: false,
      pdb: { maxUnavailable: 1 },
    },
    {
      name: 'batch',
      pool: 'batch',
      cpu: '100m',
      memory: '256Mi',
      replicasByHour: Array.from({ length: HOURS + 1 }, (_, hour) =>
        hour >= burstAt && hour < burstAt + burstHours ? burstPods : 0,
      ),
      zoneSpread: false,
      doNotDisrupt: false,
    },
  ];
  const throttleKinds = ['putVm', 'getOperation', 'deleteVm'] as const;
  const weather: WeatherEntry[] = [
    // Two hours each, in the morning ramp and the evening scale-down, so launches and replacements meet them.
    { kind: 'zonalAllocationFailure', atHour: random.between(6.5, 7.5), hours: 2, zone: morningZone },
    {
      kind: 'familyQuota',
      atHour: random.between(8, 9),
      hours: 1,
      family,
      sizes: generalFamilies[family] ?? [],
    },
    { kind: 'slowLro', atHour: random.between(9.5, 10.5), hours: 1.5, factor: 4 },
    {
      kind: 'drift',
      atHour: random.between(11, 12),
      hours: 0,
      pool: 'general',
      imageFamily: 'AzureLinux',
      windowHours: 2,
    },
    ...[random.between(6, 10), random.between(13, 16), random.between(18, 21)].map(
      (atHour): WeatherEntry => ({
        kind: 'throttleBurst',
        atHour,
        hours: 0,
        requestKind: random.pick(throttleKinds),
        requests: random.integer(10, 30),
      }),
    ),
    // In the evening scale-down, after the burst: 60 s of wall time is 7 simulated hours at CI's
    // compression, which would otherwise swallow the burst's spot preemption and the hours after it.
    { kind: 'apiServerOutage', atHour: random.between(19.5, 20.5), hours: 0, seconds: options.outageSeconds },
    { kind: 'hostKill', atHour: random.between(17, 18), hours: 0, downSeconds: 3 },
    { kind: 'zonalAllocationFailure', atHour: random.between(18.5, 19.5), hours: 2, zone: eveningZone },
    // The hour the node goes NotReady: its kubelet dies one node-monitor grace period of wall time earlier.
    {
      kind: 'nodeNotReady',
      atHour: random.between(10, 11),
      hours: 0,
      pool: 'general',
      survivesReboot: false,
      requires: 'NodeRepair',
    },
    // Within the burst, once the batch pool has a spot node (its launches may still be under way).
    {
      kind: 'spotPreemption',
      atHour: burstAt + 0.5,
      hours: burstHours - 1,
      pool: 'batch',
      requires: 'NodeRepair',
    },
  ];
  // Drawn last, so the draws above (and every seed's day recorded before) stay as they were.
  const notReady = weather.find((w) => w.kind === 'nodeNotReady');
  if (notReady) notReady.survivesReboot = random.next() < 0.5;
  if (options.capacityShortage)
    for (const zone of zones)
      weather.push({ kind: 'zonalAllocationFailure', atHour: 12, hours: 12, zone, vmSize: SHORTAGE_SIZE });
  weather.sort((a, b) => a.atHour - b.atHour);
  return { seed: options.seed, pools, workloads, weather };
}

/** One line per weather entry, for the summary and the docs. */
export function describeWeather(entry: WeatherEntry): string {
  switch (entry.kind) {
    case 'zonalAllocationFailure':
      return `zone ${entry.zone}: every VM creation${entry.vmSize ? ` of ${entry.vmSize}` : ''} fails ZonalAllocationFailed for ${entry.hours} h`;
    case 'familyQuota':
      return `${entry.family} core quota exhausted for ${entry.hours} h (${entry.sizes.join(', ')})`;
    case 'throttleBurst':
      return `Compute throttles the next ${entry.requests} ${entry.requestKind} requests (429)`;
    case 'slowLro':
      return `VM creations take ${entry.factor}× as long for ${entry.hours} h`;
    case 'drift':
      return `the ${entry.pool} AKSNodeClass's imageFamily changes to ${entry.imageFamily}; drift may replace nodes only in a maintenance window of about ${entry.windowHours} h`;
    case 'apiServerOutage':
      return `kube-apiserver down for ${entry.seconds} s (wall time)`;
    case 'hostKill':
      return `the function host killed (SIGKILL), restarted ${entry.downSeconds} s later on the same durable history`;
    case 'nodeNotReady':
      return `a ${entry.pool} node goes NotReady, its kubelet dead (${entry.survivesReboot ? 'a reboot does not help' : 'a reboot brings it back'})`;
    case 'spotPreemption':
      return `Azure preempts a ${entry.pool} spot VM (eviction notice, then the eviction)`;
  }
}
