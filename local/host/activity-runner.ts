// Runs one activity invocation and turns its outcome into the history event the orchestration will see.
import { randomUUID } from 'node:crypto';
import type { ActivityFunctionDefinition, HandlerContext } from '../../shared/runtime/definitions.js';
import type { HostEventBus } from './events.js';
import { fromJson, toJson, type InboxEvent } from './history.js';

export async function runActivity(input: {
  definition: ActivityFunctionDefinition | undefined;
  name: string;
  inputText: string | undefined;
  taskScheduledId: number;
  now: () => number;
  contextFor: (functionName: string, invocationId: string) => HandlerContext;
  events: HostEventBus;
}): Promise<InboxEvent> {
  const { definition, name, taskScheduledId } = input;
  const timestamp = (): string => new Date(input.now()).toISOString();
  if (definition === undefined) {
    return {
      type: 'TaskFailed',
      timestamp: timestamp(),
      taskScheduledId,
      failure: {
        errorType: 'Error',
        errorMessage: `The activity function '${name}' is not registered with the host.`,
      },
    };
  }
  const invocationId = randomUUID();
  const context = input.contextFor(name, invocationId);
  input.events.emit({ type: 'function.invoked', functionName: name, trigger: 'activity', invocationId });
  const startedAt = Date.now();
  try {
    const result = await definition.handler(fromJson(input.inputText), context);
    input.events.emit({
      type: 'function.succeeded',
      functionName: name,
      trigger: 'activity',
      invocationId,
      durationMs: Date.now() - startedAt,
    });
    // The replay engine JSON-parses results; an activity that returns nothing is seen as null.
    return {
      type: 'TaskCompleted',
      timestamp: timestamp(),
      taskScheduledId,
      result: toJson(result) ?? 'null',
    };
  } catch (error) {
    const failure =
      error instanceof Error
        ? { errorType: error.name, errorMessage: error.message, stackTrace: error.stack }
        : { errorType: 'Error', errorMessage: String(error) };
    context.log.warn('activity failed', { error: failure.errorMessage });
    input.events.emit({
      type: 'function.failed',
      functionName: name,
      trigger: 'activity',
      invocationId,
      durationMs: Date.now() - startedAt,
      error: failure.errorMessage,
    });
    return { type: 'TaskFailed', timestamp: timestamp(), taskScheduledId, failure };
  }
}
