// Plays the plan's weather on the running stack, each entry through the control a person would use: the
// ARM emulator's faults, throttling and latencies, the AKSNodeClass and NodePool through the API server,
// kube-apiserver stopped and started, the function host killed and restarted, a node's kubelet stopped and
// a spot VM preempted (repair-weather.ts). An entry that needs a feature gate the function host runs
// without is reported as not played, never imitated.
import { defaultQuotaLimits } from '../../arm-emulator/index.js';
import type { Budget } from '../../../shared/models/index.js';
import type { LocalStack } from '../../stack/local-stack.js';
import type { Recorder } from '../../view/recorder.js';
import type { ChildHost } from './child-host.js';
import type { DayClock } from './day-clock.js';
import { describeWeather, type PoolName, type PoolPlan, type WeatherEntry } from './plan.js';
import { playNodeNotReady, playSpotPreemption, type RepairWeatherResult } from './repair-weather.js';
import { poolObjectName } from './workload.js';

export interface WeatherRecord {
  entry: WeatherEntry;
  /** Wall times it began and ended (undefined while it has not). */
  startedAt?: number;
  endedAt?: number;
  /** Why it was not played, when it was not. */
  notPlayed?: string;
  /** What happened, for the summary (the maintenance window's times, faults that fired). */
  outcome?: string;
}

export interface WeatherDependencies {
  stack: LocalStack;
  recorder: Recorder;
  host: ChildHost;
  clock: DayClock;
  runId: string;
  pools: readonly PoolPlan[];
  /** The budgets a pool has outside any maintenance window. */
  baseBudgets(pool: PoolPlan): Budget[];
  onBudgets(pool: PoolName, budgets: Budget[], at: number): void;
  onPoolChange(pool: PoolName, at: number): void;
  onDisturbance(from: number, to: number, what: string): void;
  /** A node's kubelet was stopped at this time (its pods cannot start until the node is repaired). */
  onBrokenNode(node: string, at: number): void;
  note(line: string): void;
  /** The DaemonSet's `app` label. */
  daemonSet: string;
  /** The `app` labels of the pods annotated karpenter.sh/do-not-disrupt. */
  doNotDisrupt: ReadonlySet<string>;
  /** Feature gates the function host runs with (as its settings read them): repair's entries need NodeRepair. */
  gates: ReadonlySet<string>;
}

export interface Weather {
  readonly records: readonly WeatherRecord[];
  /** Starts what is due and ends what is over at this wall time; entries that take time run on their own. */
  tick(now: number): void;
  /** Ends every entry still in force (faults removed, latencies restored) and waits for running ones. */
  clear(): Promise<void>;
  /** 429s the throttle faults answered. */
  injectedThrottles(): number;
}

export function startWeather(entries: readonly WeatherEntry[], deps: WeatherDependencies): Weather {
  const controls = deps.stack.emulator.controls;
  const baseCreateMs = controls.latencies().createMs;
  const records: WeatherRecord[] = entries.map((entry) => ({ entry }));
  const faultIds = new Map<WeatherRecord, string[]>();
  /** The request log's last entry when each quota hour began, to count the PUTs it refused. */
  const quotaSince = new Map<WeatherRecord, number>();
  const lastRequestSeq = (): number => controls.requests().at(-1)?.seq ?? 0;
  const throttleRules: { id: string; times: number }[] = [];
  const running: Promise<void>[] = [];
  const objects = deps.stack.admin.objects;

  const begin = (record: WeatherRecord, now: number): void => {
    const entry = record.entry;
    record.startedAt = now;
    deps.note(`weather: ${describeWeather(entry)}`);
    switch (entry.kind) {
      case 'zonalAllocationFailure':
        faultIds.set(record, [
          controls.injectFault({
            match: { zone: entry.zone, ...(entry.vmSize ? { vmSize: entry.vmSize } : {}) },
            effect: { type: 'ZonalAllocationFailed' },
          }).id,
        ]);
        return;
      case 'familyQuota': {
        // Quota as Azure keeps it: the family's limit lowered to what it uses, so the usages API shows no
        // room and a PUT is refused with the real figures, until the hour ends.
        const used = controls
          .quotaUsages(deps.stack.appSettings['LOCATION'] ?? 'westus2')
          .find((u) => u.name.value?.toLowerCase() === entry.family.toLowerCase());
        controls.setQuotaLimit({ name: entry.family, limit: used?.currentValue ?? 0 });
        quotaSince.set(record, lastRequestSeq());
        return;
      }
      case 'throttleBurst': {
        const rule = controls.injectFault({
          effect: { type: 'throttle', requestKind: entry.requestKind, retryAfterSeconds: 1 },
          times: entry.requests,
        });
        throttleRules.push({ id: rule.id, times: entry.requests });
        record.endedAt = now;
        return;
      }
      case 'slowLro':
        controls.setLatencies({ createMs: baseCreateMs * entry.factor });
        return;
      case 'drift':
        running.push(drift(record, entry));
        return;
      case 'apiServerOutage':
        running.push(outage(record, entry.seconds));
        return;
      case 'hostKill':
        running.push(hostKill(record, entry.downSeconds));
        return;
      case 'nodeNotReady':
        running.push(repair(record, playNodeNotReady(entry, repairDeps)));
        return;
      case 'spotPreemption':
        running.push(
          repair(
            record,
            playSpotPreemption(entry, {
              ...repairDeps,
              lastChance: deps.clock.wallAt(entry.atHour + entry.hours),
            }),
          ),
        );
        return;
    }
  };

  const repairDeps = {
    stack: deps.stack,
    recorder: deps.recorder,
    runId: deps.runId,
    daemonSet: deps.daemonSet,
    doNotDisrupt: deps.doNotDisrupt,
    until: deps.clock.wallAt(24),
    note: deps.note,
    onBrokenNode: deps.onBrokenNode,
  };
  async function repair(record: WeatherRecord, played: Promise<RepairWeatherResult>): Promise<void> {
    const result = await played;
    record.endedAt = result.endedAt;
    if (result.notPlayed) record.notPlayed = result.notPlayed;
    if (result.outcome) record.outcome = result.outcome;
  }

  const end = (record: WeatherRecord, now: number): void => {
    record.endedAt = now;
    const ids = new Set(faultIds.get(record) ?? []);
    if (ids.size > 0) {
      const hits = controls.faults().reduce((sum, rule) => sum + (ids.has(rule.id) ? rule.hits : 0), 0);
      record.outcome = `fired ${hits} time(s)`;
    }
    for (const id of ids) controls.removeFault(id);
    faultIds.delete(record);
    if (record.entry.kind === 'slowLro') controls.setLatencies({ createMs: baseCreateMs });
    if (record.entry.kind === 'familyQuota') {
      controls.setQuotaLimit({ name: record.entry.family, limit: defaultQuotaLimits.family });
      const since = quotaSince.get(record) ?? 0;
      const refused = controls
        .requests({ kind: 'putVm', method: 'PUT', afterSeq: since })
        .filter((r) => r.errorCode === 'OperationNotAllowed' || r.errorCode === 'QuotaExceeded').length;
      record.outcome = `${refused} PUT(s) refused for quota`;
      quotaSince.delete(record);
    }
  };

  async function drift(
    record: WeatherRecord,
    entry: Extract<WeatherEntry, { kind: 'drift' }>,
  ): Promise<void> {
    const pool = deps.pools.find((p) => p.name === entry.pool);
    if (!pool) return;
    const name = poolObjectName(pool.name, deps.runId);
    // The maintenance window is a real budget schedule (cron in UTC, whole minutes): drift is blocked by a
    // "0" budget except for whole minutes that stand for about `windowHours` of the day, from the next
    // minute on.
    const windowMinutes = Math.max(1, Math.round((entry.windowHours * deps.clock.msPerHour) / 60_000));
    const opens = new Date(Math.ceil((Date.now() + 10_000) / 60_000) * 60_000);
    const closes = new Date(opens.getTime() + windowMinutes * 60_000);
    const budgets: Budget[] = [
      ...deps.baseBudgets(pool),
      {
        nodes: '0',
        reasons: ['Drifted'],
        schedule: `${closes.getUTCMinutes()} ${closes.getUTCHours()} * * *`,
        duration: `${24 * 60 - windowMinutes}m`,
      },
      { nodes: '2', reasons: ['Drifted'] },
    ];
    await retrying(() => objects.nodePools.mergePatch(name, { spec: { disruption: { budgets } } }));
    deps.onBudgets(pool.name, budgets, Date.now());
    await retrying(() => objects.nodeClasses.mergePatch(name, { spec: { imageFamily: entry.imageFamily } }));
    deps.onPoolChange(pool.name, Date.now());
    record.outcome = `maintenance window ${opens.toISOString().slice(11, 16)}–${closes.toISOString().slice(11, 16)} UTC (budget "2" for Drifted, "0" outside)`;
    deps.note(`drift: ${record.outcome}`);
    record.endedAt = closes.getTime();
  }

  async function outage(record: WeatherRecord, seconds: number): Promise<void> {
    const controlPlane = deps.stack.controlPlane;
    if (!controlPlane) {
      record.notPlayed = 'the stack shares its control plane with others';
      return;
    }
    const from = Date.now();
    await controlPlane.apiServer.stop();
    await sleep(seconds * 1_000);
    await controlPlane.apiServer.start();
    const to = Date.now();
    record.endedAt = to;
    record.outcome = `down ${((to - from) / 1000).toFixed(1)} s (stop to ready)`;
    deps.onDisturbance(from, to, 'API server down');
    deps.note(`API server back after ${record.outcome}`);
  }

  async function hostKill(record: WeatherRecord, downSeconds: number): Promise<void> {
    const from = Date.now();
    await deps.host.kill();
    await sleep(downSeconds * 1_000);
    await deps.host.start();
    const to = Date.now();
    record.endedAt = to;
    record.outcome = `dead ${((to - from) / 1000).toFixed(1)} s (kill to ready)`;
    deps.onDisturbance(from, to, 'function host dead');
    deps.note(`function host restarted: ${record.outcome}`);
  }

  for (const record of records) {
    const entry = record.entry;
    if (
      (entry.kind === 'nodeNotReady' || entry.kind === 'spotPreemption') &&
      !deps.gates.has(entry.requires)
    ) {
      record.notPlayed = `the function host runs without FEATURE_GATES ${entry.requires}=true`;
    }
  }

  return {
    records,
    tick(now) {
      for (const record of records) {
        if (record.notPlayed) continue;
        const { atHour, hours } = record.entry;
        if (record.startedAt === undefined) {
          if (now >= deps.clock.wallAt(atHour) - leadMs(record.entry)) begin(record, now);
        } else if (
          lasts(record) &&
          record.endedAt === undefined &&
          now >= deps.clock.wallAt(atHour + hours)
        ) {
          end(record, now);
        }
      }
    },
    async clear() {
      await Promise.all(running);
      const now = Date.now();
      for (const record of records)
        if (lasts(record) && record.startedAt !== undefined && record.endedAt === undefined) end(record, now);
    },
    injectedThrottles() {
      const left = new Map(controls.faults().map((f) => [f.id, f.hits]));
      // A rule that fired all its times is gone from the registry.
      return throttleRules.reduce((sum, rule) => sum + (left.get(rule.id) ?? rule.times), 0);
    },
  };
}

/**
 * kube-controller-manager's --node-monitor-grace-period (50 s since v1.32; the local control plane keeps
 * the default): a dead kubelet's Node goes Ready=Unknown that long after its last heartbeat, in wall time.
 */
export const NODE_MONITOR_GRACE_MS = 50_000;

/** How long before its hour an entry begins: a NotReady node's kubelet dies one grace period before. */
const leadMs = (entry: WeatherEntry): number => (entry.kind === 'nodeNotReady' ? NODE_MONITOR_GRACE_MS : 0);

/** Entries in force for a while (ended by the tick), as opposed to ones that happen at once or run alone. */
const lasts = (record: WeatherRecord): boolean =>
  record.entry.kind === 'zonalAllocationFailure' ||
  record.entry.kind === 'familyQuota' ||
  record.entry.kind === 'slowLro';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A write the weather must make even if the API server is away for a while (the outage). */
async function retrying<T>(write: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (attempt >= 60) throw error;
      await sleep(2_000);
    }
  }
}
