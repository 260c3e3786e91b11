// How a looping orchestration keeps its durable history bounded. Durable Functions stores every event of
// an execution and replays all of them on every episode, so a workflow that polls for hours (a drain a
// PodDisruptionBudget holds up, a VM that is slow to go) would grow its history, its storage and the cost
// of each replay without end. Such a workflow counts the durable tasks (activity calls, timers) it has
// yielded in this execution and, at a pass boundary once the count reaches its budget, continues as new
// carrying only the state it needs. The count is of the orchestrator's own yields, so it is the same on
// every replay (the history the engine shows it is not: on replay it already holds later events).
import type * as df from 'durable-functions';

/**
 * History events one yielded task adds when tasks are awaited one at a time: its scheduling event, its
 * completion (TaskCompleted, TimerFired, …) and the OrchestratorStarted/OrchestratorCompleted pair of the
 * episode that the completion wakes. An execution of N tasks thus holds about 4·N events.
 */
export const HISTORY_EVENTS_PER_TASK = 4;

/** The tasks this execution has yielded through `countingTasks`. */
export interface TaskCount {
  tasks: number;
}

/**
 * Runs `work`, yielding its tasks unchanged and adding each one to `count`. A task that fails is thrown
 * back into `work` exactly as a direct yield would, so wrapping changes nothing the engine sees.
 */
export function* countingTasks<T>(
  count: TaskCount,
  work: Generator<df.Task, T, unknown>,
): Generator<df.Task, T, unknown> {
  let step = work.next();
  for (;;) {
    if (step.done) return step.value;
    count.tasks += 1;
    let answer: unknown;
    try {
      answer = yield step.value;
    } catch (error) {
      step = work.throw(error);
      continue;
    }
    step = work.next(answer);
  }
}

/** A durable timer as a generator, so `countingTasks` can count it like an activity call. */
export function* timerUntil(context: df.OrchestrationContext, at: Date): Generator<df.Task, void, unknown> {
  yield context.df.createTimer(at);
}
