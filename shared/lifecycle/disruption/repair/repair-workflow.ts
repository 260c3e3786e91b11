// The repair workflow of one unhealthy NodeClaim (instance `repair-<uid>`), for the repairs that are more
// than a replacement: reboot before replace, and the spot preemption fast path. A plain replacement is
// the disruption executor's (methods/repair.ts decides which).
//
// Reboot: mark the NodeClaim (DisruptionReason=True, Unhealthy) and taint its Node, restart the VM
// through ARM (an LRO, polled like a create), then wait on durable timers for the condition to clear
// within REPAIR_REBOOT_RECOVERY_SECONDS: cleared → untaint and unmark; not cleared → reboot again while
// REPAIR_MAX_REBOOTS allows, else escalate: launch a replacement, wait until it is Initialized (or
// failed), delete the unhealthy NodeClaim. Every reboot and its time are in this orchestration's history
// (and its custom status), so a host killed anywhere replays to the same place: a reboot whose activity
// completed is never sent again, and an escalation that began goes on.
//
// Preemption: the spot offering is remembered as unavailable, a replacement launched at once (so it
// avoids that offering), and the old node drained when the replacement is Initialized or at the latest
// PREEMPTION_DRAIN_SECONDS after the notice, so its pods move before Azure evicts the VM.
//
// A restart's operation, a recovery wait or a replacement can each be polled for a long time: the
// workflow continues as new once an execution has yielded REPAIR_TASKS_PER_EXECUTION tasks, carrying its
// reboot record, when the repair began, its own reboots and the step it was polling (the restart's
// poller state, the reboot's time, or the replacement's time limit and why), and the next execution
// resumes that step without sending anything again, so its history stays bounded (../../durable/history-budget.ts).
import type * as df from 'durable-functions';
import type { RebootProgress, RebootStart } from '../../../cloudprovider/types.js';
import {
  afterReboot,
  rebootsLeftInRepair,
  type EscalationSettings,
  type FirstStep,
  type RebootRecord,
} from '../../../decisions/node-repair/escalation.js';
import type { RepairPolicy } from '../../../decisions/node-repair/policies.js';
import { RepairNames } from '../../../runtime/function-names.js';
import type { ReplacementCheck, ReplacementSpec } from '../replacements.js';
import { callThroughOutages, durableActivity, type DurableActivity } from '../../durable/durable-activity.js';
import { countingTasks, timerUntil, type TaskCount } from '../../durable/history-budget.js';

/**
 * One repair at a time per NodeClaim, `repair-<uid>`: this workflow and the executor's replacement for the
 * repair method share the key, so the disruption step tends both alike.
 */
export const REPAIR_WORKFLOW = { per: 'candidate', instancePrefix: 'repair' } as const;

export const repairInstanceId = (nodeClaimUid: string): string =>
  `${REPAIR_WORKFLOW.instancePrefix}-${nodeClaimUid}`;

export interface RepairInput {
  nodeClaim: { name: string; uid: string; nodePool: string };
  vmName: string;
  policy: RepairPolicy;
  /** The matched condition's type and status, checked again after a reboot. */
  condition: { type: string; status: string; reason?: string };
  /** The DisruptionReason message and the events' words: the policy and the condition. */
  detail: string;
  firstStep: Exclude<FirstStep, 'replace'>;
  /** Reboots a previous repair of this NodeClaim tried (from its output). */
  previous: RebootRecord;
  escalation: EscalationSettings;
  pollSeconds: number;
  /** Preemption: drain the old node at the latest at this time (RFC 3339). */
  drainBy?: string;
  /** The replacement, should the repair come to one. */
  replacement: ReplacementSpec;
  /** How long a replacement may take to be Initialized (REPLACEMENT_TIMEOUT_MINUTES). */
  replacementTimeoutMinutes: number;
  /** Where the previous execution left off; absent in the first one. */
  continued?: RepairProgress;
}

/** What one execution of the repair hands the next over continue-as-new. */
export interface RepairProgress {
  record: RebootRecord;
  /** When the repair began (RFC 3339): the reboots the previous repairs leave are judged at that time. */
  begunAt: string;
  /** Reboots this repair sent. */
  triedHere: number;
  continuations: number;
  /** The step that was being polled, resumed without sending its request again. */
  resume:
    | { step: 'polling-reboot'; pollerState: string }
    | { step: 'awaiting-recovery'; rebootedAt: string }
    | {
        step: 'replacing';
        until: number;
        why: string;
        /** The custom status shown ('replacing' when absent, as before it was carried). */
        phase?: 'replacing' | 'preempted';
      };
}

/**
 * Tasks one execution yields before the repair continues as new at the end of a poll. A poll is two tasks
 * (the wait, the activity), so this is 50 polls, about four minutes at the default 5 s: a reboot and its
 * recovery usually fit and never continue, while a replacement waited for up to its 30-minute default
 * timeout (360 polls, ~2,900 events) keeps each execution near 400 events.
 */
export const REPAIR_TASKS_PER_EXECUTION = 100;

/** What a resumable step answers when it has continued as new: the orchestrator then returns at once. */
const CONTINUED = Symbol('continued as new');

export type RepairOutput =
  | ({ outcome: 'Recovered' } & RebootRecord)
  | ({ outcome: 'Replaced'; replacement: string; replacementReady: boolean } & RebootRecord)
  | ({ outcome: 'Gone' } & RebootRecord);

export type RepairBegin = 'ok' | 'gone';
export type HealthCheck = 'healthy' | 'unhealthy' | 'gone';

/** The reboot as written on the NodeClaim (its annotations and event). */
export interface RecordedReboot {
  repair: RepairInput;
  record: RebootRecord;
}

/** One descriptor per activity: functions/repair.ts registers them, this workflow calls them. */
export const RepairActivities = {
  begin: durableActivity<RepairInput, RepairBegin>(RepairNames.begin),
  reboot: durableActivity<RepairInput, RebootStart>(RepairNames.reboot),
  pollReboot: durableActivity<string, RebootProgress>(RepairNames.pollReboot),
  recordReboot: durableActivity<RecordedReboot>(RepairNames.recordReboot),
  check: durableActivity<RepairInput, HealthCheck>(RepairNames.check),
  recover: durableActivity<RecordedReboot>(RepairNames.recover),
  learnPreemption: durableActivity<RepairInput>(RepairNames.learnPreemption),
  launchReplacement: durableActivity<ReplacementSpec, ReplacementCheck>(RepairNames.launchReplacement),
  checkReplacement: durableActivity<string, ReplacementCheck>(RepairNames.checkReplacement),
  replace: durableActivity<ReplaceOldInput>(RepairNames.replace),
};

export interface RepairStatus extends RebootRecord {
  phase: 'rebooting' | 'waiting-for-recovery' | 'replacing' | 'preempted';
}

export interface ReplaceOldInput {
  repair: RepairInput;
  /** Whether the replacement initialized: the event and log say so. */
  replacementReady: boolean;
  why: string;
}

export function* repairOrchestrator(
  context: df.OrchestrationContext,
): Generator<df.Task, RepairOutput | undefined, unknown> {
  const { continued, ...input } = context.df.getInput<RepairInput>();
  let record: RebootRecord = continued?.record ?? { ...input.previous };
  const begunAt = continued ? new Date(continued.begunAt) : context.df.currentUtcDateTime;
  let triedHere = continued?.triedHere ?? 0;
  const steps = resumableSteps(context, input, continued, () => ({
    record,
    begunAt: begunAt.toISOString(),
    triedHere,
  }));
  const { call } = steps;
  let resume = continued?.resume;

  if (!continued) {
    const begun = yield* call(RepairActivities.begin, input);
    if (begun === 'gone') return { outcome: 'Gone', ...record };
    if (input.firstStep === 'preempted') {
      context.df.setCustomStatus({ phase: 'preempted', ...record } satisfies RepairStatus);
      yield* call(RepairActivities.learnPreemption, input);
      const drainBy = Date.parse(input.drainBy ?? '') || context.df.currentUtcDateTime.getTime();
      return yield* replaceOld(steps, record, drainBy, 'spot eviction notice', false, 'preempted');
    }
  }
  if (resume?.step === 'replacing') {
    const phase = resume.phase ?? 'replacing';
    context.df.setCustomStatus({ phase, ...record } satisfies RepairStatus);
    return yield* replaceOld(steps, record, resume.until, resume.why, true, phase);
  }

  let why = '';
  // What the previous reboots leave is judged once, when the repair begins; this repair's own reboots
  // then count one by one, however long the checks between them take.
  while (
    resume !== undefined ||
    rebootsLeftInRepair(input.previous, triedHere, input.escalation, begunAt) > 0
  ) {
    let rebootedAt: string;
    if (resume?.step === 'awaiting-recovery') {
      // The reboot was sent, counted and recorded by an earlier execution.
      rebootedAt = resume.rebootedAt;
      context.df.setCustomStatus({ phase: 'waiting-for-recovery', ...record } satisfies RepairStatus);
    } else {
      context.df.setCustomStatus({ phase: 'rebooting', ...record } satisfies RepairStatus);
      const rebooted = yield* rebootOnce(
        steps,
        resume?.step === 'polling-reboot' ? resume.pollerState : undefined,
      );
      if (rebooted === CONTINUED) return undefined;
      if (rebooted === 'gone') return { outcome: 'Gone', ...record };
      if (typeof rebooted === 'object') {
        why = `the restart failed: ${rebooted.failed}`;
        break;
      }
      triedHere += 1;
      record = { rebootsTried: record.rebootsTried + 1, lastRebootAt: rebooted };
      context.df.setCustomStatus({ phase: 'waiting-for-recovery', ...record } satisfies RepairStatus);
      yield* call(RepairActivities.recordReboot, { repair: input, record });
      rebootedAt = rebooted;
    }
    resume = undefined;
    for (;;) {
      yield* steps.wait(input.pollSeconds * 1000);
      const health = yield* call(RepairActivities.check, input);
      if (health === 'gone') return { outcome: 'Gone', ...record };
      const next = afterReboot(
        health === 'healthy',
        new Date(rebootedAt),
        context.df.currentUtcDateTime,
        input.escalation,
      );
      if (next === 'recovered') {
        yield* call(RepairActivities.recover, { repair: input, record });
        return { outcome: 'Recovered', ...record };
      }
      if (next === 'escalate') break;
      if (steps.continuedAsNew({ step: 'awaiting-recovery', rebootedAt })) return undefined;
    }
    why = `${input.condition.type}=${input.condition.status} did not clear within ${input.escalation.recoveryMs / 1000} s of reboot ${record.rebootsTried}`;
  }
  if (!why) why = 'no reboot left';
  context.df.setCustomStatus({ phase: 'replacing', ...record } satisfies RepairStatus);
  // The replacement's time limit counts from the escalation, not from when the repair began.
  const until = context.df.currentUtcDateTime.getTime() + input.replacementTimeoutMinutes * 60_000;
  return yield* replaceOld(steps, record, until, why, false, 'replacing');
}

/** The repair's counted calls and waits, and its continuation once the execution's budget is used. */
interface ResumableSteps {
  context: df.OrchestrationContext;
  input: RepairInput;
  call<I, O>(activity: DurableActivity<I, O>, activityInput: I): Generator<df.Task, O, unknown>;
  wait(ms: number): Generator<df.Task, void, unknown>;
  /** Continues as new if the budget is used (the caller must then return CONTINUED at once). */
  continuedAsNew(resume: RepairProgress['resume']): boolean;
}

function resumableSteps(
  context: df.OrchestrationContext,
  input: RepairInput,
  continued: RepairProgress | undefined,
  /** What the orchestrator carries besides the step, as it is when the execution continues. */
  progress: () => Omit<RepairProgress, 'resume' | 'continuations'>,
): ResumableSteps {
  const tasks: TaskCount = { tasks: 0 };
  return {
    context,
    input,
    call: (activity, activityInput) =>
      countingTasks(tasks, callThroughOutages(context, activity, activityInput)),
    wait: (ms) =>
      countingTasks(tasks, timerUntil(context, new Date(context.df.currentUtcDateTime.getTime() + ms))),
    continuedAsNew: (resume) => {
      if (tasks.tasks < REPAIR_TASKS_PER_EXECUTION) return false;
      const next: RepairInput = {
        ...input,
        continued: { ...progress(), resume, continuations: (continued?.continuations ?? 0) + 1 },
      };
      context.df.continueAsNew(next);
      return true;
    },
  };
}

/**
 * Sends the restart (unless resuming the poll of one with `pollerState`) and polls its operation; the
 * time it finished, 'gone', why it failed, or CONTINUED.
 */
function* rebootOnce(
  steps: ResumableSteps,
  resumePollerState: string | undefined,
): Generator<df.Task, string | 'gone' | { failed: string } | typeof CONTINUED, unknown> {
  const { context, input } = steps;
  let pollerState: string;
  if (resumePollerState === undefined) {
    const started = yield* steps.call(RepairActivities.reboot, input);
    if (started === 'gone' || 'failed' in started) return started;
    pollerState = started.pollerState;
  } else pollerState = resumePollerState;
  for (;;) {
    yield* steps.wait(input.pollSeconds * 1000);
    const polled: RebootProgress = yield* steps.call(RepairActivities.pollReboot, pollerState);
    if (polled.status === 'Succeeded') return context.df.currentUtcDateTime.toISOString();
    if (polled.status === 'Failed') return { failed: polled.error.message };
    pollerState = polled.pollerState;
    if (steps.continuedAsNew({ step: 'polling-reboot', pollerState })) return CONTINUED;
  }
}

/**
 * Launches the replacement (unless `resumed`: an earlier execution did) and waits until it is Initialized,
 * it failed, or `until`; then the unhealthy NodeClaim is deleted whatever became of the replacement: the
 * node is broken (or about to be evicted), and its pods are better pending, where provisioning sees
 * them, than on it.
 */
function* replaceOld(
  steps: ResumableSteps,
  record: RebootRecord,
  until: number,
  why: string,
  resumed: boolean,
  /** The custom status it shows (a spot eviction's replacement stays 'preempted'), carried on too. */
  phase: 'replacing' | 'preempted',
): Generator<df.Task, RepairOutput | undefined, unknown> {
  const { context, input } = steps;
  let check: ReplacementCheck = resumed
    ? { status: 'Pending' }
    : yield* steps.call(RepairActivities.launchReplacement, input.replacement);
  while (check.status !== 'Initialized' && check.status !== 'Failed') {
    const now = context.df.currentUtcDateTime.getTime();
    if (now >= until) break;
    yield* steps.wait(Math.min(until, now + input.pollSeconds * 1000) - now);
    check = yield* steps.call(RepairActivities.checkReplacement, input.replacement.name);
    if (check.status === 'NotLaunched') {
      check = yield* steps.call(RepairActivities.launchReplacement, input.replacement);
    }
    if (check.status !== 'Initialized' && check.status !== 'Failed') {
      if (steps.continuedAsNew({ step: 'replacing', until, why, phase })) return undefined;
    }
  }
  const replacementReady = check.status === 'Initialized';
  const detail = check.status === 'Failed' ? `${why}; ${check.why}` : why;
  yield* steps.call(RepairActivities.replace, {
    repair: input,
    replacementReady,
    why: detail,
  } satisfies ReplaceOldInput);
  return { outcome: 'Replaced', replacement: input.replacement.name, replacementReady, ...record };
}
