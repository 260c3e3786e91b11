// The Durable group's line in `npm run cost`: its Flex Consumption executions over one NodeClaim's life and
// how long each runs, in the shape of the orchestrations that ship (the second versions of the launch
// monitor and termination, which wait inside bounded activities rather than on durable timers). The cost
// model used to count the first versions' shape, about 60 short executions a launch; the second make 6 to
// 10, two or more of them long, and on Flex a sleeping activity is execution time like any other.
//
// The counts are measured, not estimated: MEASURED_ACTIONS_PER_NODECLAIM (shared/decisions/
// durable-backend-sizing.ts, re-measured by the command each case names). Every action the scheduler
// dispatches runs one execution on the app: an orchestration's start, an activity's result and a fired
// timer each run an orchestrator episode, an activity's scheduling runs the activity. So a NodeClaim's
// executions are its actions (Azure Storage may hand an episode several messages at once, so this is an
// upper bound), and an orchestration measured as a start and N activity calls (1 + 2N actions, no timer)
// is N + 1 episodes and N calls. Durations: an episode replays a short history and schedules the next
// task, well under Flex's 1 s minimum (EPISODE_SECONDS, an estimate); `awaitVmCreation` sleeps from the
// VM's PUT to the first poll after the creation ends (the creation time plus at most one poll interval,
// LAUNCH_POLL_DEFAULTS), at most ACTIVITY_WAIT_WINDOW_SECONDS a call; `advanceNodeClaimTermination` drains,
// deletes the VM and waits for it to go within one window a call, billed here at the whole window (the
// bench's VM deletion took 10 s; Azure's take longer, and a call never runs past the window).
//
// Overlap: Flex bills an instance's memory for the time it is executing, so waits that run at once on one
// instance share its billed seconds, up to maxConcurrentActivityFunctions of them (host.json, read here) per
// instance. The model says how many run at once from the launch rate: launches spread evenly over the month
// (as the cost scenario and the telemetry bench spread them) keep launchesPerSecond × waitSeconds of them
// running on average, and below one no two overlap, so each wait is billed alone. At 1,000 nodes replaced
// weekly a launch comes every ~10 minutes and its waits take ~2 minutes: alone, exactly. A burst of k
// launches at once would be billed ceil(k / 50) instances' time rather than k waits' (waitShare).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LAUNCH_POLL_DEFAULTS } from '../../shared/config/settings.js';
import {
  MEASURED_ACTIONS_PER_NODECLAIM,
  type MeasuredActionsPerNodeClaim,
} from '../../shared/decisions/durable-backend-sizing.js';
import {
  MINIMUM_BILLED_SECONDS,
  SECONDS_PER_MONTH,
  type ExecutionClass,
} from '../../shared/decisions/flex-cost.js';
import { ACTIVITY_WAIT_WINDOW_SECONDS } from '../../shared/lifecycle/durable/activity-wait.js';
import { LaunchMonitorNames, TerminationNames } from '../../shared/runtime/function-names.js';

/** One orchestrator episode's run time, an estimate (the first model's): billed as Flex's 1 s minimum. */
export const EPISODE_SECONDS = 0.3;

/**
 * A provisioning window's durable executions, an estimate kept from the first model: the batcher's start,
 * its signals and its solve (the bench's static NodePool does not use the batcher, so it is not measured).
 */
export const EXECUTIONS_PER_WINDOW = 5;

/** The measured case `npm run cost` bills by default: 90 s VM creation, the larger of the two counts. */
export const DEFAULT_MEASURED_CASE: MeasuredActionsPerNodeClaim = MEASURED_ACTIONS_PER_NODECLAIM.slowCreation;

/** An activity that waits, and how long each of its calls over one NodeClaim's life runs. */
export interface WaitingActivity {
  activity: string;
  /** Seconds of each call, in order; their count is the measured calls. */
  secondsPerCall: readonly number[];
  /** Where the durations come from. */
  source: string;
}

/** One NodeClaim's durable executions, launch through termination. */
export interface NodeClaimExecutions {
  /** The measured case it comes from. */
  measured: MeasuredActionsPerNodeClaim;
  /** Every execution: the orchestrator episodes and the activities' calls (= the measured actions). */
  executions: number;
  /** Orchestrator episodes, each EPISODE_SECONDS. */
  episodes: number;
  waits: readonly WaitingActivity[];
  /** Seconds the waits run, all calls together. */
  waitSeconds: number;
}

/** A start and `calls` activity calls, each its scheduling and its result: the measured actions' shape. */
function activityCalls(orchestration: string, actions: number | undefined): number {
  const calls = ((actions ?? 0) - 1) / 2;
  if (!Number.isInteger(calls) || calls < 1)
    throw new Error(
      `${orchestration}: ${actions} actions are not a start and whole activity calls; the model of its executions needs revisiting`,
    );
  return calls;
}

/** `total` seconds of waiting over `calls` calls of at most `window` seconds each, windows filled in order. */
export function waitPerCall(total: number, calls: number, window: number): number[] {
  if (calls * window < total)
    throw new Error(`${calls} calls of ${window} s cannot hold a wait of ${total} s`);
  return Array.from({ length: calls }, (_, i) => Math.min(window, Math.max(0, total - i * window)));
}

/** The executions of the second versions' shape for a measured case (MEASURED_ACTIONS_PER_NODECLAIM's). */
export function nodeClaimExecutions(
  measured: MeasuredActionsPerNodeClaim = DEFAULT_MEASURED_CASE,
  windowSeconds: number = ACTIVITY_WAIT_WINDOW_SECONDS,
  pollIntervalSeconds: number = LAUNCH_POLL_DEFAULTS.pollIntervalSeconds,
): NodeClaimExecutions {
  const monitor = LaunchMonitorNames.orchestrationV2;
  const termination = TerminationNames.orchestrationV2;
  const unknown = Object.keys(measured.byOrchestration).filter(
    (name) => name !== monitor && name !== termination,
  );
  if (unknown.length > 0)
    throw new Error(`the measured actions name ${unknown.join(', ')}, which this model does not know`);
  const monitorCalls = activityCalls(monitor, measured.byOrchestration[monitor]);
  const terminationCalls = activityCalls(termination, measured.byOrchestration[termination]);
  const waits: WaitingActivity[] = [
    {
      activity: LaunchMonitorNames.awaitVmCreation,
      secondsPerCall: waitPerCall(
        measured.vmCreationSeconds + pollIntervalSeconds,
        monitorCalls,
        windowSeconds,
      ),
      source: `the creation's ${measured.vmCreationSeconds} s and one poll interval, ${pollIntervalSeconds} s (LAUNCH_POLL_DEFAULTS), at most ${windowSeconds} s a call (ACTIVITY_WAIT_WINDOW_SECONDS)`,
    },
    {
      activity: TerminationNames.advance,
      secondsPerCall: Array.from({ length: terminationCalls }, () => windowSeconds),
      source: `the drain and the VM's deletion, billed at the whole ${windowSeconds} s window a call (ACTIVITY_WAIT_WINDOW_SECONDS)`,
    },
  ];
  const episodes = monitorCalls + 1 + terminationCalls + 1;
  return {
    measured,
    executions: episodes + monitorCalls + terminationCalls,
    episodes,
    waits,
    waitSeconds: waits.reduce((sum, w) => sum + w.secondsPerCall.reduce((a, s) => a + s, 0), 0),
  };
}

/**
 * The share of its own seconds each of `waitsAtOnce` concurrent waits is billed: they fill instances
 * `slotsPerInstance` at a time and Flex bills each instance's time once, so ceil(k / slots) / k. Fewer
 * than one at once (waits that never overlap) is each billed alone.
 */
export function waitShare(waitsAtOnce: number, slotsPerInstance: number): number {
  const k = Math.max(1, waitsAtOnce);
  return Math.ceil(k / slotsPerInstance) / k;
}

/** Seconds billed for one NodeClaim's executions: each at Flex's minimum, the waits at their share. */
export function billedSecondsPerNodeClaim(shape: NodeClaimExecutions, share: number): number {
  const billed = (seconds: number) => Math.max(MINIMUM_BILLED_SECONDS, seconds);
  const waits = shape.waits.reduce(
    (sum, w) => sum + w.secondsPerCall.reduce((a, seconds) => a + billed(seconds) * share, 0),
    0,
  );
  return shape.episodes * billed(EPISODE_SECONDS) + waits;
}

/** host.json's durableTask.maxConcurrentActivityFunctions: the waits one instance runs at once. */
export function activitySlotsPerInstance(
  hostJson: string = readFileSync(join(import.meta.dirname, '..', '..', 'host.json'), 'utf8'),
): number {
  const host = JSON.parse(hostJson) as {
    extensions?: { durableTask?: { maxConcurrentActivityFunctions?: number } };
  };
  // Unset, the extension takes 10 × the processor count: counted here for one processor.
  return host.extensions?.durableTask?.maxConcurrentActivityFunctions ?? 10;
}

export interface DurableLine {
  /** The line of the Flex bill: every durable execution, at its mean billed seconds. */
  execution: ExecutionClass;
  shape: NodeClaimExecutions;
  /** Waits running at once on average, and the share of its seconds each is billed. */
  waitsAtOnce: number;
  share: number;
}

/**
 * The Durable group's executions a month: `launchesPerMonth` NodeClaims' launches and terminations in the
 * measured shape, spread evenly over the month, and `windowsPerMonth` provisioning windows. One line, its
 * seconds the mean billed seconds of an execution, so the Flex bill (perMonth × seconds) is the sum of
 * every execution's billed time. (Were waits shared so far that the mean fell under 1 s, the Flex model's
 * 1 s minimum would round it up: an upper bound.)
 */
export function durableLine(options: {
  launchesPerMonth: number;
  windowsPerMonth: number;
  shape?: NodeClaimExecutions;
  slotsPerInstance?: number;
}): DurableLine {
  const shape = options.shape ?? nodeClaimExecutions();
  const waitsAtOnce = (options.launchesPerMonth / SECONDS_PER_MONTH) * shape.waitSeconds;
  const share = waitShare(waitsAtOnce, options.slotsPerInstance ?? activitySlotsPerInstance());
  const perMonth =
    options.launchesPerMonth * shape.executions + options.windowsPerMonth * EXECUTIONS_PER_WINDOW;
  const billed =
    options.launchesPerMonth * billedSecondsPerNodeClaim(shape, share) +
    options.windowsPerMonth * EXECUTIONS_PER_WINDOW * Math.max(MINIMUM_BILLED_SECONDS, EPISODE_SECONDS);
  const waits = shape.waits
    .map((w) => `${Math.round(w.secondsPerCall.reduce((a, s) => a + s, 0))}`)
    .join(' + ');
  return {
    execution: {
      name: `durable executions (${shape.executions} per launch, waits ${waits} s; ${EXECUTIONS_PER_WINDOW} per window)`,
      perMonth,
      seconds: perMonth > 0 ? billed / perMonth : EPISODE_SECONDS,
      alwaysReady: true,
    },
    shape,
    waitsAtOnce,
    share,
  };
}

/** The measured case whose VM creation took `seconds` (COST_VM_CREATION_SECONDS), or the default. */
export function measuredCase(seconds: string | undefined): MeasuredActionsPerNodeClaim {
  if (!seconds?.trim()) return DEFAULT_MEASURED_CASE;
  const cases: MeasuredActionsPerNodeClaim[] = Object.values(MEASURED_ACTIONS_PER_NODECLAIM);
  const found = cases.find((c) => c.vmCreationSeconds === Number(seconds));
  if (!found)
    throw new Error(
      `COST_VM_CREATION_SECONDS=${seconds}: measured cases are ${cases.map((c) => c.vmCreationSeconds).join(' and ')} s`,
    );
  return found;
}
