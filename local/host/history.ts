// An orchestration instance's history as the host stores it (plain JSON, one file per instance), and its
// conversion into durable-functions' own history event classes for replay. The stored form carries a few
// host-only fields (retry bookkeeping, which action an event answers) that the replay engine never sees.
import { EventRaisedEvent } from 'durable-functions/lib/src/history/EventRaisedEvent.js';
import { ExecutionStartedEvent } from 'durable-functions/lib/src/history/ExecutionStartedEvent.js';
import { HistoryEventOptions } from 'durable-functions/lib/src/history/HistoryEventOptions.js';
import { OrchestratorCompletedEvent } from 'durable-functions/lib/src/history/OrchestratorCompletedEvent.js';
import { OrchestratorStartedEvent } from 'durable-functions/lib/src/history/OrchestratorStartedEvent.js';
import { SubOrchestrationInstanceCompletedEvent } from 'durable-functions/lib/src/history/SubOrchestrationInstanceCompletedEvent.js';
import { SubOrchestrationInstanceCreatedEvent } from 'durable-functions/lib/src/history/SubOrchestrationInstanceCreatedEvent.js';
import { SubOrchestrationInstanceFailedEvent } from 'durable-functions/lib/src/history/SubOrchestrationInstanceFailedEvent.js';
import { TaskCompletedEvent } from 'durable-functions/lib/src/history/TaskCompletedEvent.js';
import { TaskFailedEvent } from 'durable-functions/lib/src/history/TaskFailedEvent.js';
import { TaskScheduledEvent } from 'durable-functions/lib/src/history/TaskScheduledEvent.js';
import { TimerCreatedEvent } from 'durable-functions/lib/src/history/TimerCreatedEvent.js';
import { TimerFiredEvent } from 'durable-functions/lib/src/history/TimerFiredEvent.js';
import type { OrchestrationRuntimeStatus } from '../../shared/runtime/definitions.js';

/** Retry settings copied from the orchestrator's RetryOptions (callActivityWithRetry). */
export interface RetryPolicy {
  firstRetryIntervalMs: number;
  maxNumberOfAttempts: number;
  backoffCoefficient: number;
  maxRetryIntervalMs?: number;
}

export interface RetryState {
  policy: RetryPolicy;
  /** 1 for the first attempt. */
  attempt: number;
}

export interface FailureDetails {
  errorType: string;
  errorMessage: string;
  stackTrace?: string;
}

/** Timestamps are ISO strings; payloads (input, result) are JSON text, as the Durable extension keeps them. */
export type StoredEvent =
  | { type: 'OrchestratorStarted'; timestamp: string }
  | { type: 'OrchestratorCompleted'; timestamp: string }
  | { type: 'ExecutionStarted'; timestamp: string; name: string; input?: string }
  | {
      type: 'TaskScheduled';
      timestamp: string;
      eventId: number;
      name: string;
      input?: string;
      /** Index of the orchestrator action this answers; absent for automatic retry attempts. */
      actionIndex?: number;
      retry?: RetryState;
    }
  | { type: 'TaskCompleted'; timestamp: string; taskScheduledId: number; result: string }
  | { type: 'TaskFailed'; timestamp: string; taskScheduledId: number; failure: FailureDetails }
  | {
      type: 'TimerCreated';
      timestamp: string;
      eventId: number;
      fireAt: string;
      actionIndex?: number;
      /** Set when this timer is the wait between attempts of a retried activity. */
      retryOf?: { name: string; input?: string; retry: RetryState };
    }
  | { type: 'TimerFired'; timestamp: string; timerId: number; fireAt: string }
  | {
      type: 'SubOrchestrationInstanceCreated';
      timestamp: string;
      eventId: number;
      name: string;
      instanceId: string;
      input?: string;
      actionIndex: number;
    }
  | { type: 'SubOrchestrationInstanceCompleted'; timestamp: string; taskScheduledId: number; result: string }
  | {
      type: 'SubOrchestrationInstanceFailed';
      timestamp: string;
      taskScheduledId: number;
      failure: FailureDetails;
    }
  /** An external event (raiseEvent); waiters match it by name, and it takes no sequence number. */
  | { type: 'EventRaised'; timestamp: string; name: string; input?: string };

/** Events that arrive from outside an episode (results, fired timers, raised events); the rest are written by episodes. */
export type InboxEvent = Extract<
  StoredEvent,
  {
    type:
      | 'TaskCompleted'
      | 'TaskFailed'
      | 'TimerFired'
      | 'SubOrchestrationInstanceCompleted'
      | 'SubOrchestrationInstanceFailed'
      | 'EventRaised';
  }
>;

export interface InstanceRecord {
  instanceId: string;
  name: string;
  /** Changes on every start and continue-as-new, so late results of an earlier execution are dropped. */
  executionId: string;
  runtimeStatus: OrchestrationRuntimeStatus;
  /** JSON text of the current execution's input. */
  input?: string;
  /** JSON text of the output (or, when Failed/Terminated, of the reason). */
  output?: string;
  customStatus?: string;
  createdTime: string;
  lastUpdatedTime: string;
  /** Events already shown to the orchestrator. */
  history: StoredEvent[];
  /** Events received but not yet replayed; one is consumed per episode, oldest first. */
  inbox: InboxEvent[];
  /** How many of the orchestrator's actions have been turned into scheduling events. */
  actionsConsumed: number;
  /** The next sequence number, mirroring the replay engine's own counter. */
  nextEventId: number;
  parent?: { instanceId: string; executionId: string; taskScheduledId: number };
}

export function toJson(value: unknown): string | undefined {
  return value === undefined ? undefined : JSON.stringify(value);
}

export function fromJson(text: string | undefined): unknown {
  return text === undefined ? undefined : JSON.parse(text);
}

function options(eventId: number, timestamp: string, isPlayed: boolean, fields: object): HistoryEventOptions {
  return Object.assign(new HistoryEventOptions(eventId, new Date(timestamp), isPlayed), fields);
}

function failurePayload(failure: FailureDetails): object {
  return {
    reason: failure.errorMessage,
    details: failure.stackTrace ?? '',
    failureDetails: {
      ErrorType: failure.errorType,
      ErrorMessage: failure.errorMessage,
      StackTrace: failure.stackTrace,
    },
  };
}

/** Builds the library's event object for one stored event (completion events carry EventId -1, as DTFx's do). */
export function toLibraryEvent(event: StoredEvent, isPlayed: boolean): unknown {
  switch (event.type) {
    case 'OrchestratorStarted':
      return new OrchestratorStartedEvent(options(-1, event.timestamp, isPlayed, {}));
    case 'OrchestratorCompleted':
      return new OrchestratorCompletedEvent(options(-1, event.timestamp, isPlayed, {}));
    case 'ExecutionStarted':
      return new ExecutionStartedEvent(
        options(-1, event.timestamp, isPlayed, { name: event.name, input: event.input }),
      );
    case 'TaskScheduled':
      return new TaskScheduledEvent(
        options(event.eventId, event.timestamp, isPlayed, { name: event.name, input: event.input }),
      );
    case 'TaskCompleted':
      return new TaskCompletedEvent(
        options(-1, event.timestamp, isPlayed, {
          taskScheduledId: event.taskScheduledId,
          result: event.result,
        }),
      );
    case 'TaskFailed':
      return new TaskFailedEvent(
        options(-1, event.timestamp, isPlayed, {
          taskScheduledId: event.taskScheduledId,
          ...failurePayload(event.failure),
        }),
      );
    case 'TimerCreated':
      return new TimerCreatedEvent(
        options(event.eventId, event.timestamp, isPlayed, { fireAt: new Date(event.fireAt) }),
      );
    case 'TimerFired':
      return new TimerFiredEvent(
        options(-1, event.timestamp, isPlayed, { timerId: event.timerId, fireAt: new Date(event.fireAt) }),
      );
    case 'SubOrchestrationInstanceCreated':
      return new SubOrchestrationInstanceCreatedEvent(
        options(event.eventId, event.timestamp, isPlayed, {
          name: event.name,
          instanceId: event.instanceId,
          input: event.input,
        }),
      );
    case 'SubOrchestrationInstanceCompleted':
      return new SubOrchestrationInstanceCompletedEvent(
        options(-1, event.timestamp, isPlayed, {
          taskScheduledId: event.taskScheduledId,
          result: event.result,
        }),
      );
    case 'SubOrchestrationInstanceFailed':
      return new SubOrchestrationInstanceFailedEvent(
        options(-1, event.timestamp, isPlayed, {
          taskScheduledId: event.taskScheduledId,
          ...failurePayload(event.failure),
        }),
      );
    case 'EventRaised':
      return new EventRaisedEvent(
        options(-1, event.timestamp, isPlayed, { name: event.name, input: event.input }),
      );
  }
}

/** What the history says is still outstanding: activities without a result, timers not yet fired. */
export function outstandingWork(record: InstanceRecord): {
  activities: Extract<StoredEvent, { type: 'TaskScheduled' }>[];
  timers: Extract<StoredEvent, { type: 'TimerCreated' }>[];
  subOrchestrations: Extract<StoredEvent, { type: 'SubOrchestrationInstanceCreated' }>[];
} {
  const answered = new Set<number>();
  for (const event of [...record.history, ...record.inbox]) {
    if ('taskScheduledId' in event) answered.add(event.taskScheduledId);
    if (event.type === 'TimerFired') answered.add(event.timerId);
  }
  const activities: Extract<StoredEvent, { type: 'TaskScheduled' }>[] = [];
  const timers: Extract<StoredEvent, { type: 'TimerCreated' }>[] = [];
  const subOrchestrations: Extract<StoredEvent, { type: 'SubOrchestrationInstanceCreated' }>[] = [];
  for (const event of record.history) {
    if (event.type === 'TaskScheduled' && !answered.has(event.eventId)) activities.push(event);
    if (event.type === 'TimerCreated' && !answered.has(event.eventId)) timers.push(event);
    if (event.type === 'SubOrchestrationInstanceCreated' && !answered.has(event.eventId))
      subOrchestrations.push(event);
  }
  return { activities, timers, subOrchestrations };
}

export function isTerminal(status: OrchestrationRuntimeStatus): boolean {
  return status === 'Completed' || status === 'Failed' || status === 'Terminated';
}
