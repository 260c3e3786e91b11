// Type declarations for the parts of durable-functions 3.x that the local host drives directly and that
// the package ships without declarations: its testing utilities (which run the library's own replay
// engine outside the Functions host) and its history event classes. Only what the host uses is declared.

declare module 'durable-functions/lib/src/util/testingUtils.js' {
  import type { InvocationContext } from '@azure/functions';
  import type { OrchestrationContext, OrchestrationHandler } from 'durable-functions';

  export class DummyOrchestrationContext extends InvocationContext {
    constructor(
      functionName?: string,
      invocationId?: string,
      logHandler?: (level: string, ...args: unknown[]) => void,
    );
  }

  export class DurableOrchestrationInput {
    constructor(
      instanceId?: string,
      history?: unknown[],
      input?: unknown,
      longRunningTimerIntervalDuration?: string,
      maximumShortTimerDuration?: string,
      defaultHttpAsyncRequestSleepTimeMillseconds?: number,
      schemaVersion?: number,
      isReplaying?: boolean,
      parentInstanceId?: string,
    );
  }

  /** The state the replay engine returns: all actions the orchestrator has issued, or its output. */
  export interface OrchestratorStateShape {
    isDone: boolean;
    actions: unknown[][];
    output?: unknown;
    error?: string;
    customStatus?: unknown;
  }

  export function createOrchestrator(
    fn: OrchestrationHandler,
  ): (
    trigger: DurableOrchestrationInput,
    context: OrchestrationContext | DummyOrchestrationContext,
  ) => Promise<OrchestratorStateShape>;
}

declare module 'durable-functions/lib/src/history/HistoryEventOptions.js' {
  export class HistoryEventOptions {
    constructor(eventId: number, timestamp: Date, isPlayed?: boolean);
    eventId: number;
    timestamp: Date;
    isPlayed: boolean;
    [field: string]: unknown;
  }
}

declare module 'durable-functions/lib/src/history/OrchestratorStartedEvent.js' {
  import type { HistoryEventOptions } from 'durable-functions/lib/src/history/HistoryEventOptions.js';
  export class OrchestratorStartedEvent {
    constructor(options: HistoryEventOptions);
  }
}

declare module 'durable-functions/lib/src/history/OrchestratorCompletedEvent.js' {
  import type { HistoryEventOptions } from 'durable-functions/lib/src/history/HistoryEventOptions.js';
  export class OrchestratorCompletedEvent {
    constructor(options: HistoryEventOptions);
  }
}

declare module 'durable-functions/lib/src/history/ExecutionStartedEvent.js' {
  import type { HistoryEventOptions } from 'durable-functions/lib/src/history/HistoryEventOptions.js';
  export class ExecutionStartedEvent {
    constructor(options: HistoryEventOptions);
  }
}

declare module 'durable-functions/lib/src/history/TaskScheduledEvent.js' {
  import type { HistoryEventOptions } from 'durable-functions/lib/src/history/HistoryEventOptions.js';
  export class TaskScheduledEvent {
    constructor(options: HistoryEventOptions);
  }
}

declare module 'durable-functions/lib/src/history/TaskCompletedEvent.js' {
  import type { HistoryEventOptions } from 'durable-functions/lib/src/history/HistoryEventOptions.js';
  export class TaskCompletedEvent {
    constructor(options: HistoryEventOptions);
  }
}

declare module 'durable-functions/lib/src/history/TaskFailedEvent.js' {
  import type { HistoryEventOptions } from 'durable-functions/lib/src/history/HistoryEventOptions.js';
  export class TaskFailedEvent {
    constructor(options: HistoryEventOptions);
  }
}

declare module 'durable-functions/lib/src/history/TimerCreatedEvent.js' {
  import type { HistoryEventOptions } from 'durable-functions/lib/src/history/HistoryEventOptions.js';
  export class TimerCreatedEvent {
    constructor(options: HistoryEventOptions);
  }
}

declare module 'durable-functions/lib/src/history/TimerFiredEvent.js' {
  import type { HistoryEventOptions } from 'durable-functions/lib/src/history/HistoryEventOptions.js';
  export class TimerFiredEvent {
    constructor(options: HistoryEventOptions);
  }
}

declare module 'durable-functions/lib/src/history/SubOrchestrationInstanceCreatedEvent.js' {
  import type { HistoryEventOptions } from 'durable-functions/lib/src/history/HistoryEventOptions.js';
  export class SubOrchestrationInstanceCreatedEvent {
    constructor(options: HistoryEventOptions);
  }
}

declare module 'durable-functions/lib/src/history/SubOrchestrationInstanceCompletedEvent.js' {
  import type { HistoryEventOptions } from 'durable-functions/lib/src/history/HistoryEventOptions.js';
  export class SubOrchestrationInstanceCompletedEvent {
    constructor(options: HistoryEventOptions);
  }
}

declare module 'durable-functions/lib/src/history/SubOrchestrationInstanceFailedEvent.js' {
  import type { HistoryEventOptions } from 'durable-functions/lib/src/history/HistoryEventOptions.js';
  export class SubOrchestrationInstanceFailedEvent {
    constructor(options: HistoryEventOptions);
  }
}

declare module 'durable-functions/lib/src/history/EventRaisedEvent.js' {
  import type { HistoryEventOptions } from 'durable-functions/lib/src/history/HistoryEventOptions.js';
  export class EventRaisedEvent {
    constructor(options: HistoryEventOptions);
  }
}
