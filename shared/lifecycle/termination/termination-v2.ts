// Termination, second version: the same steps as termination.ts (drain, stop the launch monitor, delete
// the VM and wait until ARM no longer has it, delete the Node, remove the finalizer) for a fraction of the
// Durable actions. The first version calls one activity per drain pass and per VM-deletion check, each
// after a durable timer, and one for the finish; here one activity (advanceNodeClaimTermination) goes as
// far as it can within ACTIVITY_WAIT_WINDOW_SECONDS: drain passes at the drain's pace until the Node is
// drained, then the VM's deletion, a wait for it to go, and the finish in the call that sees it gone. A
// NodeClaim whose pods leave and whose VM goes within the window costs its termination a start and one
// activity. A drain still waiting when the window ends (a PodDisruptionBudget, pods still terminating)
// is called again after one drain interval on a durable timer, so a drain held up for hours is about
// three actions a window and leaves the activity slot free between windows; a VM still deleting is
// checked again by the next call at once, its wait already spent inside the activity.
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
  /** Drain passes that still left pods to wait for when the window ended: called again after a drain interval. */
  | { phase: 'Draining'; drain: DrainProgress; passes?: number }
  /** Drained (by this call, with its answer, or before), the VM still deleting when the window ended. */
  | { phase: 'DeletingVm'; drain?: DrainProgress; passes?: number }
  /** The VM gone, the Node deleted and the finalizer removed. */
  | { phase: 'Terminated'; drain?: DrainProgress; passes?: number };

export const TerminationV2Activities = {
  advance: durableActivity<AdvanceTerminationInput, AdvanceTerminationResult>(TerminationNames.advance),
};

/**
 * One call: drain passes while the Node is draining, then the VM's deletion, its wait and the finish, as
 * far as the window allows. `passes` counts the drain passes and VM checks this call made.
 */
export async function advanceNodeClaimTermination(
  deps: LifecycleDependencies,
  input: AdvanceTerminationInput,
  context: Pick<HandlerContext, 'orchestrations'>,
  timer: ActivityTimer = realActivityTimer(),
): Promise<AdvanceTerminationResult> {
  const { termination } = input;
  const windowMs = input.windowSeconds * 1000;
  let passes = 0;
  let drained: { drain?: DrainProgress } = {};
  if (input.phase === 'Draining') {
    const drainWaitMs = (termination.drainPollSeconds ?? 5) * 1000;
    for (;;) {
      const drain = await drainNodeClaim(deps, { nodeClaim: termination.nodeClaim });
      passes += 1;
      if (drain.status === 'Drained') {
        drained = { drain };
        break;
      }
      if (timer.elapsedMs() + drainWaitMs > windowMs) return { phase: 'Draining', drain, passes };
      await timer.sleep(drainWaitMs);
    }
  }
  const waitMs = termination.pollIntervalSeconds * 1000;
  for (;;) {
    passes += 1;
    if ((await deleteNodeClaimVm(deps, termination, context)) === 'Gone') {
      await finishNodeClaimTermination(deps, termination);
      return { phase: 'Terminated', ...drained, passes };
    }
    if (timer.elapsedMs() + waitMs > windowMs) return { phase: 'DeletingVm', ...drained, passes };
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
    progress.passes += answer.passes ?? 1;
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
