// One descriptor per durable activity: its name together with the types of its input and its answer.
// The activity's registration (functions/*.ts) and every call from its orchestrator take the same
// descriptor, so a handler and its callers cannot disagree on a type, the name is written once, and no
// orchestrator casts what an activity answered. Durable Functions itself hands activities and
// orchestrators plain JSON; the one assertion that JSON has the declared shape is made here, where the
// app's own orchestrators are the only callers.
import type * as df from 'durable-functions';
import { activity, type ActivityFunctionDefinition, type HandlerContext } from '../../runtime/definitions.js';
import { callActivityThroughOutages, outageTolerantActivity } from './outage-retry.js';

export interface DurableActivity<Input, Output> {
  readonly name: string;
  /** Never set: it only carries the two types for the compiler. */
  readonly shape?: (input: Input) => Output;
}

export function durableActivity<Input, Output = void>(name: string): DurableActivity<Input, Output> {
  return { name };
}

/** The registration of an activity whose transient errors its orchestration waits out (outage-retry.ts). */
export function outageTolerantRegistration<Input, Output>(
  descriptor: DurableActivity<Input, Output>,
  handler: (input: Input, context: HandlerContext) => Promise<Output>,
): ActivityFunctionDefinition {
  return outageTolerantActivity(descriptor.name, handler);
}

/** A typed call of an outage-tolerant activity, waiting out transient failures on durable timers. */
export function* callThroughOutages<Input, Output>(
  context: df.OrchestrationContext,
  descriptor: DurableActivity<Input, Output>,
  input: Input,
): Generator<df.Task, Output, unknown> {
  return yield* callActivityThroughOutages<Output>(context, descriptor.name, input);
}

/** The registration of an activity whose failures fail its call (retried by the caller's policy). */
export function plainRegistration<Input, Output>(
  descriptor: DurableActivity<Input, Output>,
  handler: (input: Input, context: HandlerContext) => Promise<Output>,
): ActivityFunctionDefinition {
  return activity(descriptor.name, handler);
}

/** A typed call of a plain activity under a Durable Functions retry policy. */
export function* callWithRetry<Input, Output>(
  context: df.OrchestrationContext,
  descriptor: DurableActivity<Input, Output>,
  retry: df.RetryOptions,
  input: Input,
): Generator<df.Task, Output, unknown> {
  return (yield context.df.callActivityWithRetry(descriptor.name, retry, input)) as Output;
}
