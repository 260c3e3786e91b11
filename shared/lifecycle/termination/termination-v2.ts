// Termination, second version: the same steps as termination.ts (drain, stop the launch monitor, delete
// the VM and wait until ARM no longer has it, delete the Node, remove the finalizer) for a fraction of the
// Durable actions. The first version calls one activity per drain pass, per VM-deletion check (each after
// a durable timer) and for the finish; here one activity (advanceNodeClaimTermination) goes as far as it
// can: a drain pass, and once the Node is drained the VM's deletion, a wait for it to go of up to
// ACTIVITY_WAIT_WINDOW_SECONDS, and the finish in the call that sees it gone. A NodeClaim with nothing to
// evict whose VM goes within the window costs its termination a start and one activity. A drain that
// waits (a PodDisruptionBudget, pods still terminating) still waits between passes on a durable timer,
// since it can last hours and an activity must not hold a slot that long; a VM still deleting when the
// window ends is checked again by the next call at once, its wait already spent inside the activity.
//
// It is a new orchestration beside the first, which stays registered, unchanged, for the terminations
// started before the upgrade (docs/design.md, "Names are history"); the instance ID is the same
// (terminationInstanceId), so reconcileTermination's "is it running" finds either version. Every step is
// idempotent and a VM already gone counts as deleted, so a call repeated after a crash or a transient
// error converges; a repeated drain pass of a drained Node answers Drained again (its pods were evicted
// and it is tainted NoSchedule). The history is bounded by continue-as-new exactly as the first version's
// (../durable/history-budget.ts), carrying the same progress, which is also the custom status.
import type * as df from 'durable-functions';
import { TerminationNames } from '../../runtime/function-names.js';
import type { HandlerContext } from '../../runtime/definitions.js';
import {
  ACTIVITY_WAIT_WINDOW_SECONDS,
  realActivityTimer,
  type ActivityTimer,
} from '../durable/activity-wait.js';
import { callThroughOutages, durableActivity } from '../durable/durable-activity.js';
import { countingTasks, timerUntil, type TaskCount } from '../durable/history-budget.js';
import type { LifecycleDependencies } from '../dependencies.js';
import { drainNodeClaim, type DrainProgress } from './drain.js';
import {
  deleteNodeClaimVm,
  finishNodeClaimTermination,
  TERMINATION_TASKS_PER_EXECUTION,
  type TerminationInput,
  type TerminationProgress,
} from './termination.js';

export interface AdvanceTerminationInput {
  /** The termination's input (without what continue-as-new carried). */
  termination: Omit<TerminationInput, 'continued'>;
  /** Where the termination stands: a Node drained once is not drained again. */
  phase: TerminationProgress['phase'];
  /** How long this call may wait for the VM to go. */
  windowSeconds: number;
}

export type AdvanceTerminationResult =
  /** A drain pass that left pods to wait for: called again after the drain's poll interval. */
  | { phase: 'Draining'; drain: DrainProgress }
  /** Drained (by this call, with its answer, or before), the VM still deleting when the window ended. */
  | { phase: 'DeletingVm'; drain?: DrainProgress }
  /** The VM gone, the Node deleted and the finalizer removed. */
  | { phase: 'Terminated'; drain?: DrainProgress };

export const TerminationV2Activities = {
  advance: durableActivity<AdvanceTerminationInput, AdvanceTerminationResult>(TerminationNames.advance),
};

/** One call: a drain pass if the Node is still draining, then the VM's deletion, its wait and the finish. */
export async function advanceNodeClaimTermination(
  deps: LifecycleDependencies,
  input: AdvanceTerminationInput,
  context: Pick<HandlerContext, 'orchestrations'>,
  timer: ActivityTimer = realActivityTimer(),
): Promise<AdvanceTerminationResult> {
  const { termination } = input;
  let drained: { drain?: DrainProgress } = {};
  if (input.phase === 'Draining') {
    const drain = await drainNodeClaim(deps, { nodeClaim: termination.nodeClaim });
    if (drain.status !== 'Drained') return { phase: 'Draining', drain };
    drained = { drain };
  }
  const windowMs = input.windowSeconds * 1000;
  const waitMs = termination.pollIntervalSeconds * 1000;
  for (;;) {
    if ((await deleteNodeClaimVm(deps, termination, context)) === 'Gone') {
      await finishNodeClaimTermination(deps, termination);
      return { phase: 'Terminated', ...drained };
    }
    if (timer.elapsedMs() + waitMs > windowMs) return { phase: 'DeletingVm', ...drained };
    await timer.sleep(waitMs);
  }
}

export function* terminationV2Orchestrator(
  context: df.OrchestrationContext,
): Generator<df.Task, string, unknown> {
  const { continued, ...input } = context.df.getInput<TerminationInput>();
  const progress: TerminationProgress = continued ?? {
    phase: 'Draining',
    passes: 0,
    continuations: 0,
    startedAt: context.df.currentUtcDateTime.toISOString(),
  };
  const count: TaskCount = { tasks: 0 };
  context.df.setCustomStatus(progress);
  for (;;) {
    const answer = yield* countingTasks(
      count,
      callThroughOutages(context, TerminationV2Activities.advance, {
        termination: input,
        phase: progress.phase,
        windowSeconds: ACTIVITY_WAIT_WINDOW_SECONDS,
      }),
    );
    progress.passes += 1;
    if (answer.drain) progress.lastDrain = answer.drain;
    if (answer.phase === 'Terminated') {
      progress.phase = 'DeletingVm';
      context.df.setCustomStatus(progress);
      return 'Terminated';
    }
    progress.phase = answer.phase;
    context.df.setCustomStatus(progress);
    if (answer.phase === 'Draining') {
      const next = new Date(context.df.currentUtcDateTime.getTime() + (input.drainPollSeconds ?? 5) * 1000);
      yield* countingTasks(count, timerUntil(context, next));
    }
    if (count.tasks >= TERMINATION_TASKS_PER_EXECUTION) {
      context.df.continueAsNew({
        ...input,
        continued: { ...progress, continuations: progress.continuations + 1 },
      } satisfies TerminationInput);
      return 'ContinuedAsNew';
    }
  }
}
