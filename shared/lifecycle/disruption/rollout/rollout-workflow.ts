// The rollout workflow of one NodePool change (docs/rollouts.md): begin (the canary's floor, or carry on
// with the rollout the NodePool's annotation already holds), then poll every ROLLOUT_POLL_SECONDS until
// the rollout has ended (rolled out, rolled back, halted by a gate, superseded by a newer target). Every
// decision is the activities' (rollout-activities.ts), made from a fresh read and written to the
// NodePool's annotation, so the orchestration carries nothing but its input: a host killed at any line,
// or an execution continued as new, resumes from the annotation. Each activity rides out outages
// (../../durable/outage-retry.ts). A rollout can soak and wait for hours (a paused NodePool, a budget of
// "0" for Drifted), so the workflow continues as new once an execution has yielded
// ROLLOUT_TASKS_PER_EXECUTION tasks, keeping its history bounded (../../durable/history-budget.ts). The
// drift method does the replacing; this workflow only moves the rollout's floor and its phase.
import type * as df from 'durable-functions';
import type { RolloutOutcome } from '../../../decisions/rollout.js';
import { RolloutNames } from '../../../runtime/function-names.js';
import { callThroughOutages, durableActivity, type DurableActivity } from '../../durable/durable-activity.js';
import { countingTasks, timerUntil, type TaskCount } from '../../durable/history-budget.js';

/**
 * Tasks one execution yields before the rollout continues as new at the end of a poll. A poll is two
 * tasks (the timer, the activity), so this is 50 polls, about eight minutes at the default 10 s: a
 * canary and its five-minute soak fit in one or two executions, and an hour-long rollout stays near 400
 * events per execution.
 */
export const ROLLOUT_TASKS_PER_EXECUTION = 100;

export interface RolloutInput {
  nodePool: { name: string; uid: string };
  /** The target rolled out (decisions/rollout.ts RolloutTarget.id): part of the instance ID. */
  target: string;
  pollSeconds: number;
  /**
   * Set by continue-as-new: how many executions came before, and when the last poll was answered (so a
   * gap across the continuation is still seen).
   */
  continued?: { continuations: number; answeredAt?: string; waitSeconds?: number };
  /**
   * A poll's input only: when the previous step judged the rollout (its answer's `judgedAt`, recorded in
   * the history, so replay-safe). The poll compares it with the time it runs: a host that was dead or an
   * API server that was away in between means the gates were not judged meanwhile. The step's own time,
   * not when the orchestration took its answer: a host killed between the two would hide the gap.
   */
  answeredAt?: string;
  /** A poll's input only: how long the workflow waited since that answer (the poll's own interval). */
  waitedSeconds?: number;
}

/**
 * What begin and each poll answer: the outcome once the rollout has ended, nothing while it goes on;
 * `quiet` when the poll changed nothing and no soak is running (replacements under way, a budget of
 * "0", a pause), so the next poll may wait longer.
 */
export interface RolloutStepAnswer {
  ended?: RolloutOutcome;
  quiet?: true;
  /** When the step read and judged the rollout (its clock). */
  judgedAt?: string;
}

/**
 * How far quiet polls back off: each doubles the wait, up to this many poll intervals (40 s at the 10 s
 * default). A rollout mostly waits (for replacements, soaks, budget windows, a resume), and each poll
 * costs three Durable actions, so an hour of waiting costs about a quarter of what polling every
 * interval would; a soak and the poll after a change go back to every interval, so a gate is judged at
 * most this much later while replacements are still coming up, and never later during a soak.
 */
export const QUIET_POLL_MAX_FACTOR = 4;

export interface RolloutOutput {
  outcome: RolloutOutcome;
}

/** One descriptor per activity: functions/rollout.ts registers them, the workflow calls them. */
export const RolloutActivities = {
  begin: durableActivity<RolloutInput, RolloutStepAnswer>(RolloutNames.begin),
  poll: durableActivity<RolloutInput, RolloutStepAnswer>(RolloutNames.poll),
};

export function* rolloutOrchestrator(
  context: df.OrchestrationContext,
): Generator<df.Task, RolloutOutput | undefined, unknown> {
  const { continued, ...input } = context.df.getInput<RolloutInput>();
  const tasks: TaskCount = { tasks: 0 };
  const call = <I, O>(activity: DurableActivity<I, O>, activityInput: I) =>
    countingTasks(tasks, callThroughOutages(context, activity, activityInput));
  let answeredAt = continued?.answeredAt;
  let waitSeconds = continued?.waitSeconds ?? input.pollSeconds;
  if (!continued) {
    const begun = yield* call(RolloutActivities.begin, input);
    if (begun.ended) return { outcome: begun.ended };
    answeredAt = begun.judgedAt ?? context.df.currentUtcDateTime.toISOString();
  }
  for (;;) {
    const at = new Date(context.df.currentUtcDateTime.getTime() + waitSeconds * 1000);
    yield* countingTasks(tasks, timerUntil(context, at));
    const polled = yield* call(RolloutActivities.poll, {
      ...input,
      ...(answeredAt ? { answeredAt } : {}),
      waitedSeconds: waitSeconds,
    });
    if (polled.ended) return { outcome: polled.ended };
    answeredAt = polled.judgedAt ?? context.df.currentUtcDateTime.toISOString();
    waitSeconds = polled.quiet
      ? Math.min(waitSeconds * 2, input.pollSeconds * QUIET_POLL_MAX_FACTOR)
      : input.pollSeconds;
    if (tasks.tasks >= ROLLOUT_TASKS_PER_EXECUTION) {
      const next: RolloutInput = {
        ...input,
        continued: { continuations: (continued?.continuations ?? 0) + 1, answeredAt, waitSeconds },
      };
      context.df.continueAsNew(next);
      return undefined;
    }
  }
}
