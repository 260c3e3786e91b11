// Drives orchestration instances the way the Durable Task framework does, one episode at a time: take
// the oldest new event (or the start), replay the orchestrator over the whole history plus that event
// through durable-functions' engine, turn its new actions into scheduling events, persist, then run the
// side effects (activities, durable timers, sub-orchestrations). Everything outstanding can be recomputed
// from the persisted history, which is how a restarted host resumes.
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../shared/observability/logger.js';
import type {
  ActivityFunctionDefinition,
  HandlerContext,
  OrchestrationClient,
  OrchestrationFunctionDefinition,
  OrchestrationStatus,
} from '../../shared/runtime/definitions.js';
import { runActivity } from './activity-runner.js';
import { createActivitySlots, type ActivitySlots } from './activity-slots.js';
import type { Clock } from './clock.js';
import {
  createQueuePoller,
  partitionOf,
  type DurableQueuePolling,
  type QueuePoller,
  type QueuePollerStats,
} from './durable-polling.js';
import {
  createDurableWorkRecorder,
  type DurableActionKind,
  type DurableWorkRecorder,
} from './durable-work.js';
import type { HostEventBus } from './events.js';
import {
  fromJson,
  isTerminal,
  outstandingWork,
  toJson,
  type InboxEvent,
  type InstanceRecord,
  type RetryState,
  type StoredEvent,
} from './history.js';
import type { HistoryStore } from './history-store.js';
import { createReplayer, type OrchestratorAction, type ReplayFunction } from './replay.js';
import type { WorkTracker } from './work-tracker.js';

export interface OrchestrationRuntimeOptions {
  orchestrations: readonly OrchestrationFunctionDefinition[];
  activities: readonly ActivityFunctionDefinition[];
  store: HistoryStore;
  clock: Clock;
  log: Logger;
  events: HostEventBus;
  work: WorkTracker;
  /** Like host.json's durableTask.maxConcurrentActivityFunctions. */
  maxConcurrentActivities: number;
  /** Builds the context handed to activity handlers (the host owns logging and the client). */
  contextFor: (functionName: string, invocationId: string) => HandlerContext;
  /**
   * How the Azure Storage provider polls its control and work-item queues (from host.json), or
   * 'immediate': every message is taken as it is sent, for harnesses that pin workflow decisions to exact
   * timer times (test/support/virtual-durable-engine.ts).
   */
  polling: DurableQueuePolling | 'immediate';
  /** The pollers' jitter source; tests pass a constant. */
  random?: () => number;
  /** Where the engine's work is counted; default a recorder of its own on `clock`. */
  durableWork?: DurableWorkRecorder;
}

/** The waits of messages for the poll that took them, per kind of queue. */
export interface DurablePollingStats {
  /** Starts, activity results, fired timers, events: the control queues, summed over the partitions. */
  controlQueues: QueuePollerStats;
  /** Activities to run. */
  workItemQueue: QueuePollerStats;
}

export interface OrchestrationRuntime {
  readonly client: OrchestrationClient;
  /** The Durable actions and engine work counted since the runtime was created. */
  readonly durableWork: DurableWorkRecorder;
  /** The activity slots (maxConcurrentActivities) and how they were used since the runtime was created. */
  readonly activitySlots: Pick<ActivitySlots, 'snapshot'>;
  pollingStats(): DurablePollingStats;
  /** Messages waiting for their queue's next poll (each also counts as work in progress). */
  awaitingPoll(): number;
  /** Loads persisted instances and resumes their outstanding work. */
  start(): Promise<void>;
  /** Stops taking new work, cancels timers, and waits for episodes and activities in progress. */
  stop(): Promise<void>;
}

type Scheduled = Extract<
  StoredEvent,
  { type: 'TaskScheduled' | 'TimerCreated' | 'SubOrchestrationInstanceCreated' }
>;

export function createOrchestrationRuntime(options: OrchestrationRuntimeOptions): OrchestrationRuntime {
  const { store, clock, log, events, work } = options;
  const replayers = new Map<string, ReplayFunction>();
  for (const definition of options.orchestrations) {
    replayers.set(definition.name, createReplayer(definition.name, definition.handler));
  }
  const activities = new Map(options.activities.map((definition) => [definition.name, definition]));
  const counted = options.durableWork ?? createDurableWorkRecorder(() => clock.now());
  /** Every save of a record goes through here, so the history's size is known after each. */
  const save = (record: InstanceRecord): Promise<void> => {
    counted.historySaved(record);
    return store.save(record);
  };

  let running = false;
  const locks = new Map<string, Promise<unknown>>();
  const stepsQueued = new Set<string>();
  const timers = new Map<string, () => void>();
  const slots = createActivitySlots({
    capacity: options.maxConcurrentActivities,
    now: () => clock.now(),
  });

  const iso = (): string => new Date(clock.now()).toISOString();

  // Every message of an instance goes through its partition's control queue and every activity through
  // the work-item queue, each taken at its poller's next poll, as the Azure Storage provider takes them.
  const { polling } = options;
  const newPoller = (): QueuePoller =>
    polling === 'immediate'
      ? immediatePoller()
      : createQueuePoller({ clock, maxIntervalMs: polling.maxIntervalMs, random: options.random });
  let controlQueues: QueuePoller[] = [];
  let workItemQueue: QueuePoller = newPoller();

  /** The instance's next episode, once its control queue's poller has taken the message just sent. */
  function receiveStep(instanceId: string): void {
    if (!running) return;
    const done = work.begin();
    const partition = partitionOf(instanceId, controlQueues.length);
    controlQueues[partition]!.receive({
      deliver: () => {
        scheduleStep(instanceId);
        done();
      },
      abandon: done,
    });
  }

  /** Serializes everything that reads and writes one instance. */
  function withLock<T>(instanceId: string, action: () => Promise<T>): Promise<T> {
    const previous = locks.get(instanceId) ?? Promise.resolve();
    const next = previous.then(action, action);
    const tail = next.catch(() => undefined);
    locks.set(instanceId, tail);
    void tail.then(() => {
      if (locks.get(instanceId) === tail) locks.delete(instanceId);
    });
    return next;
  }

  function scheduleStep(instanceId: string): void {
    if (!running || stepsQueued.has(instanceId)) return;
    stepsQueued.add(instanceId);
    const done = work.begin();
    setImmediate(() => {
      stepsQueued.delete(instanceId);
      withLock(instanceId, () => step(instanceId))
        .catch((error: unknown) =>
          log.error('orchestration episode failed in the host', { instanceId, error }),
        )
        .finally(done);
    });
  }

  async function deliver(instanceId: string, executionId: string, event: InboxEvent): Promise<void> {
    await withLock(instanceId, async () => {
      const record = await store.load(instanceId);
      if (record === undefined || record.executionId !== executionId || isTerminal(record.runtimeStatus)) {
        log.debug('dropping an event for an instance that is gone or finished', {
          instanceId,
          event: event.type,
        });
        return;
      }
      record.inbox.push(event);
      await save(record);
    });
    receiveStep(instanceId);
  }

  async function step(instanceId: string): Promise<void> {
    if (!running) return;
    const record = await store.load(instanceId);
    if (record === undefined || isTerminal(record.runtimeStatus)) return;
    const replay = replayers.get(record.name);
    const instanceLog = log.with({ instanceId, orchestration: record.name });
    const timestamp = iso();
    const episode: StoredEvent[] = [{ type: 'OrchestratorStarted', timestamp }];
    const scheduled: Scheduled[] = [];
    const isStart = record.history.length === 0;
    if (isStart) {
      episode.push({ type: 'ExecutionStarted', timestamp, name: record.name, input: record.input });
      counted.action(record.name, 'orchestrationStarts');
    } else {
      const event = record.inbox.shift();
      if (event === undefined) return;
      episode.push(event);
      counted.action(record.name, actionKindOf(event));
      const retryConsequence = retryFollowUp(record, event, timestamp);
      if (retryConsequence !== undefined) scheduled.push(retryConsequence);
    }
    if (replay === undefined) {
      await finish(
        record,
        'Failed',
        `The orchestrator function '${record.name}' is not registered with the host.`,
      );
      return;
    }
    const playedCount = record.history.length;
    counted.episode(record.name);
    const result = await replay({
      instanceId,
      history: [...record.history, ...episode],
      playedCount,
      input: fromJson(record.input),
      parentInstanceId: record.parent?.instanceId,
      log: instanceLog,
    });
    record.history.push(...episode);
    counted.historyAppended(record.name, episode.length);
    if (result.customStatus !== undefined) record.customStatus = toJson(result.customStatus);
    if (isStart) {
      record.runtimeStatus = 'Running';
      events.emit({ type: 'orchestration.started', instanceId, name: record.name });
    }

    switch (result.status) {
      case 'completed':
        await finish(record, 'Completed', result.output);
        return;
      case 'failed':
        await finish(record, 'Failed', result.message);
        return;
      case 'continuedAsNew': {
        cancelTimers(instanceId);
        counted.continuedAsNew(record.name);
        record.executionId = randomUUID();
        record.input = result.input;
        record.history = [];
        record.inbox = [];
        record.actionsConsumed = 0;
        record.nextEventId = 0;
        record.lastUpdatedTime = timestamp;
        await save(record);
        events.emit({ type: 'orchestration.continuedAsNew', instanceId, name: record.name });
        receiveStep(instanceId);
        return;
      }
      case 'running': {
        const problem = checkDeterminism(record, result.actions) ?? unsupportedAction(result.actions);
        if (problem !== undefined) {
          await finish(record, 'Failed', problem);
          return;
        }
        for (let index = record.actionsConsumed; index < result.actions.length; index += 1) {
          const event = schedulingEventFor(record, result.actions[index]!, index, timestamp);
          if (event !== undefined) scheduled.push(event);
        }
        record.actionsConsumed = result.actions.length;
        record.history.push(...scheduled, { type: 'OrchestratorCompleted', timestamp });
        counted.historyAppended(record.name, scheduled.length + 1);
        for (const event of scheduled) if (event.type === 'TimerCreated') counted.timerCreated(record.name);
        record.lastUpdatedTime = timestamp;
        await save(record);
        for (const event of scheduled) await dispatch(record, event);
        if (record.inbox.length > 0) scheduleStep(instanceId);
        return;
      }
    }
  }

  /** The extra scheduling event the Durable Task framework's retry logic adds for callActivityWithRetry. */
  function retryFollowUp(
    record: InstanceRecord,
    event: InboxEvent,
    timestamp: string,
  ): Scheduled | undefined {
    if (event.type === 'TaskFailed') {
      const attempt = record.history.find(
        (candidate): candidate is Extract<StoredEvent, { type: 'TaskScheduled' }> =>
          candidate.type === 'TaskScheduled' && candidate.eventId === event.taskScheduledId,
      );
      if (attempt?.retry === undefined) return undefined;
      // As in DTFx's RetryInterceptor, a wait follows every failed attempt, the last one included; the
      // engine's RetryableTask expects that timer before it surfaces the failure.
      const { policy } = attempt.retry;
      let delay =
        policy.firstRetryIntervalMs * Math.pow(policy.backoffCoefficient, attempt.retry.attempt - 1);
      if (policy.maxRetryIntervalMs !== undefined) delay = Math.min(delay, policy.maxRetryIntervalMs);
      return {
        type: 'TimerCreated',
        timestamp,
        eventId: record.nextEventId++,
        fireAt: new Date(Date.parse(timestamp) + delay).toISOString(),
        retryOf: { name: attempt.name, input: attempt.input, retry: attempt.retry },
      };
    }
    if (event.type === 'TimerFired') {
      const timer = record.history.find(
        (candidate): candidate is Extract<StoredEvent, { type: 'TimerCreated' }> =>
          candidate.type === 'TimerCreated' && candidate.eventId === event.timerId,
      );
      const retryOf = timer?.retryOf;
      if (retryOf === undefined || retryOf.retry.attempt >= retryOf.retry.policy.maxNumberOfAttempts)
        return undefined;
      const retry: RetryState = { policy: retryOf.retry.policy, attempt: retryOf.retry.attempt + 1 };
      return {
        type: 'TaskScheduled',
        timestamp,
        eventId: record.nextEventId++,
        name: retryOf.name,
        input: retryOf.input,
        retry,
      };
    }
    return undefined;
  }

  function schedulingEventFor(
    record: InstanceRecord,
    action: OrchestratorAction,
    actionIndex: number,
    timestamp: string,
  ): Scheduled | undefined {
    switch (action.kind) {
      case 'activity':
        return {
          type: 'TaskScheduled',
          timestamp,
          eventId: record.nextEventId++,
          name: action.name,
          input: action.input,
          actionIndex,
          retry: action.retry === undefined ? undefined : { policy: action.retry, attempt: 1 },
        };
      case 'timer':
        return {
          type: 'TimerCreated',
          timestamp,
          eventId: record.nextEventId++,
          fireAt: action.fireAt.toISOString(),
          actionIndex,
        };
      case 'subOrchestration': {
        const eventId = record.nextEventId++;
        return {
          type: 'SubOrchestrationInstanceCreated',
          timestamp,
          eventId,
          name: action.name,
          // Durable's default child ID derives from the parent's ID and the sequence number.
          instanceId: action.instanceId ?? `${record.instanceId}:${eventId.toString(16).padStart(4, '0')}`,
          input: action.input,
          actionIndex,
        };
      }
      // An external event takes no sequence number; client.raiseEvent delivers it.
      case 'externalEvent':
      case 'continueAsNew':
      case 'unsupported':
        return undefined;
    }
  }

  /** Durable fails an orchestration whose replay no longer issues the actions its history records. */
  function checkDeterminism(
    record: InstanceRecord,
    actions: readonly OrchestratorAction[],
  ): string | undefined {
    if (actions.length < record.actionsConsumed) {
      return `Non-deterministic workflow detected: the orchestrator issued ${actions.length} actions on replay, but its history records ${record.actionsConsumed}.`;
    }
    for (const event of record.history) {
      if (!('actionIndex' in event) || event.actionIndex === undefined) continue;
      const action = actions[event.actionIndex];
      const matches =
        (event.type === 'TaskScheduled' && action?.kind === 'activity' && action.name === event.name) ||
        (event.type === 'TimerCreated' && action?.kind === 'timer') ||
        (event.type === 'SubOrchestrationInstanceCreated' &&
          action?.kind === 'subOrchestration' &&
          action.name === event.name);
      if (!matches) {
        return `Non-deterministic workflow detected: action ${event.actionIndex} was ${describeScheduled(event)} in the history but is ${action === undefined ? 'missing' : action.kind} on replay.`;
      }
    }
    return undefined;
  }

  function unsupportedAction(actions: readonly OrchestratorAction[]): string | undefined {
    const unsupported = actions.find((action) => action.kind === 'unsupported');
    return unsupported?.kind === 'unsupported'
      ? `The local host does not support ${unsupported.description} (entities and durable HTTP are Azure-only here).`
      : undefined;
  }

  async function finish(
    record: InstanceRecord,
    status: 'Completed' | 'Failed' | 'Terminated',
    output: unknown,
  ): Promise<void> {
    const timestamp = iso();
    record.runtimeStatus = status;
    record.output = toJson(output);
    record.inbox = [];
    record.lastUpdatedTime = timestamp;
    if (status !== 'Terminated') {
      record.history.push({ type: 'OrchestratorCompleted', timestamp });
      counted.historyAppended(record.name, 1);
    } else {
      // The scheduler dispatches a termination to the instance: an action of its own.
      counted.action(record.name, 'terminations');
    }
    await save(record);
    cancelTimers(record.instanceId);
    const { instanceId, name } = record;
    if (status === 'Completed') events.emit({ type: 'orchestration.completed', instanceId, name, output });
    else if (status === 'Failed') {
      log.warn('orchestration failed', { instanceId, orchestration: name, error: output });
      events.emit({ type: 'orchestration.failed', instanceId, name, error: String(output) });
    } else events.emit({ type: 'orchestration.terminated', instanceId, name, reason: String(output) });

    const parent = record.parent;
    if (parent !== undefined) {
      const reply = replyToParent(record, parent.taskScheduledId, timestamp);
      // Outside this instance's lock: the parent has its own.
      setImmediate(() => void deliver(parent.instanceId, parent.executionId, reply));
    }
  }

  async function dispatch(record: InstanceRecord, event: Scheduled): Promise<void> {
    const { instanceId, executionId } = record;
    if (event.type === 'TimerCreated') {
      armTimer(instanceId, record.name, executionId, event);
    } else if (event.type === 'TaskScheduled') {
      dispatchActivity(instanceId, record.name, executionId, event);
    } else {
      await startChild(record, event);
    }
  }

  function armTimer(
    instanceId: string,
    name: string,
    executionId: string,
    event: Extract<StoredEvent, { type: 'TimerCreated' }>,
  ): void {
    const key = `${instanceId}\n${executionId}\n${event.eventId}`;
    if (timers.has(key)) return;
    const cancel = clock.setTimer(
      Date.parse(event.fireAt),
      () => {
        timers.delete(key);
        counted.timerFired(name);
        const done = work.begin();
        void deliver(instanceId, executionId, {
          type: 'TimerFired',
          timestamp: iso(),
          timerId: event.eventId,
          fireAt: event.fireAt,
        })
          .catch((error: unknown) => log.error('could not deliver a fired timer', { instanceId, error }))
          .finally(done);
      },
      'durable-timer',
    );
    timers.set(key, cancel);
  }

  function cancelTimers(instanceId: string): void {
    for (const [key, cancel] of timers) {
      if (key.startsWith(`${instanceId}\n`)) {
        cancel();
        timers.delete(key);
      }
    }
  }

  function dispatchActivity(
    instanceId: string,
    name: string,
    executionId: string,
    event: Extract<StoredEvent, { type: 'TaskScheduled' }>,
  ): void {
    const done = work.begin();
    const run = (release: () => void): void => {
      counted.action(name, 'activityStarts');
      counted.activityExecuted(name);
      void runActivity({
        definition: activities.get(event.name),
        name: event.name,
        inputText: event.input,
        taskScheduledId: event.eventId,
        now: () => clock.now(),
        contextFor: options.contextFor,
        events,
      })
        .then((outcome) => deliver(instanceId, executionId, outcome))
        .catch((error: unknown) => log.error('could not record an activity result', { instanceId, error }))
        .finally(() => {
          release();
          done();
        });
    };
    if (!running) {
      // A restarted host finds the activity outstanding in the history and runs it then.
      done();
      return;
    }
    workItemQueue.receive({
      deliver: () => {
        if (!running) done();
        else slots.request(event.name, run, done);
      },
      abandon: done,
    });
  }

  async function startChild(
    parent: InstanceRecord,
    event: Extract<StoredEvent, { type: 'SubOrchestrationInstanceCreated' }>,
  ): Promise<void> {
    try {
      await createInstance(event.instanceId, event.name, event.input, {
        instanceId: parent.instanceId,
        executionId: parent.executionId,
        taskScheduledId: event.eventId,
      });
    } catch (error) {
      await deliver(parent.instanceId, parent.executionId, {
        type: 'SubOrchestrationInstanceFailed',
        timestamp: iso(),
        taskScheduledId: event.eventId,
        failure: { errorType: 'Error', errorMessage: error instanceof Error ? error.message : String(error) },
      });
    }
  }

  async function createInstance(
    instanceId: string,
    name: string,
    input: string | undefined,
    parent?: InstanceRecord['parent'],
  ): Promise<void> {
    if (!replayers.has(name))
      throw new Error(`The orchestrator function '${name}' is not registered with the host.`);
    await withLock(instanceId, async () => {
      const existing = await store.load(instanceId);
      if (existing !== undefined && !isTerminal(existing.runtimeStatus)) {
        throw new Error(
          `An orchestration with instance ID '${instanceId}' already exists and is ${existing.runtimeStatus}.`,
        );
      }
      const now = iso();
      cancelTimers(instanceId);
      await save({
        instanceId,
        name,
        executionId: randomUUID(),
        runtimeStatus: 'Pending',
        input,
        createdTime: now,
        lastUpdatedTime: now,
        history: [],
        inbox: [],
        actionsConsumed: 0,
        nextEventId: 0,
        parent,
      });
    });
    receiveStep(instanceId);
  }

  const client: OrchestrationClient = {
    startNew: async (name, { instanceId, input }) => {
      await createInstance(instanceId, name, toJson(input));
      return instanceId;
    },
    getStatus: async (instanceId) => {
      const record = await store.load(instanceId);
      return record === undefined ? undefined : statusOf(record);
    },
    raiseEvent: async (instanceId, eventName, data) => {
      const record = await store.load(instanceId);
      if (record === undefined || isTerminal(record.runtimeStatus)) {
        // As the Durable extension answers: an event for no running instance is an error (404 / 410).
        throw new Error(
          record === undefined
            ? `No orchestration instance with ID '${instanceId}'.`
            : `The orchestration instance '${instanceId}' is ${record.runtimeStatus}.`,
        );
      }
      counted.externalEventRaised(record.name);
      await deliver(instanceId, record.executionId, {
        type: 'EventRaised',
        timestamp: iso(),
        name: eventName,
        input: toJson(data),
      });
    },
    terminate: async (instanceId, reason) => {
      await withLock(instanceId, async () => {
        const record = await store.load(instanceId);
        if (record === undefined) throw new Error(`No orchestration instance with ID '${instanceId}'.`);
        if (isTerminal(record.runtimeStatus)) return;
        await finish(record, 'Terminated', reason);
      });
    },
    purge: async (instanceId) => {
      await withLock(instanceId, async () => {
        const record = await store.load(instanceId);
        // Like Durable's purge, only finished instances are removed; a running one is left alone.
        if (record !== undefined && isTerminal(record.runtimeStatus)) {
          await store.remove(instanceId);
          counted.historyRemoved(instanceId);
        }
      });
    },
  };

  return {
    client,
    durableWork: counted,
    activitySlots: { snapshot: slots.snapshot },
    pollingStats: () => ({
      controlQueues: sumStats(controlQueues.map((poller) => poller.stats)),
      workItemQueue: { ...workItemQueue.stats },
    }),
    awaitingPoll: () => [...controlQueues, workItemQueue].reduce((sum, poller) => sum + poller.waiting, 0),
    start: async () => {
      // The pollers start with the worker: its first polls come at once, then the waits grow.
      controlQueues = Array.from({ length: polling === 'immediate' ? 1 : polling.partitionCount }, newPoller);
      workItemQueue = newPoller();
      running = true;
      for (const record of await store.list()) {
        if (isTerminal(record.runtimeStatus)) continue;
        const outstanding = outstandingWork(record);
        for (const timer of outstanding.timers)
          armTimer(record.instanceId, record.name, record.executionId, timer);
        for (const activity of outstanding.activities)
          dispatchActivity(record.instanceId, record.name, record.executionId, activity);
        for (const child of outstanding.subOrchestrations) await resumeChild(record, child);
        if (record.history.length === 0 || record.inbox.length > 0) receiveStep(record.instanceId);
      }
    },
    stop: async () => {
      running = false;
      for (const poller of [...controlQueues, workItemQueue]) poller.cancel();
      for (const cancel of timers.values()) cancel();
      timers.clear();
      slots.abandonQueued();
      await work.drained();
    },
  };

  /** After a restart: a child that was never created is created; a finished one reports to its parent. */
  async function resumeChild(
    parent: InstanceRecord,
    event: Extract<StoredEvent, { type: 'SubOrchestrationInstanceCreated' }>,
  ): Promise<void> {
    const child = await store.load(event.instanceId);
    if (child === undefined) await startChild(parent, event);
    else if (isTerminal(child.runtimeStatus)) {
      await deliver(parent.instanceId, parent.executionId, replyToParent(child, event.eventId, iso()));
    }
  }
}

/** Which billable action dispatching this event to its orchestration is. */
function actionKindOf(event: InboxEvent): DurableActionKind {
  switch (event.type) {
    case 'TaskCompleted':
    case 'TaskFailed':
      return 'activityResults';
    case 'TimerFired':
      return 'timerCompletions';
    case 'EventRaised':
      return 'externalEvents';
    case 'SubOrchestrationInstanceCompleted':
    case 'SubOrchestrationInstanceFailed':
      return 'subOrchestrationResults';
  }
}

function immediatePoller(): QueuePoller {
  const stats: QueuePollerStats = { received: 0, totalWaitMs: 0, maxWaitMs: 0 };
  return {
    receive: (message) => {
      stats.received += 1;
      message.deliver();
    },
    cancel: () => undefined,
    waiting: 0,
    stats,
  };
}

function sumStats(all: readonly QueuePollerStats[]): QueuePollerStats {
  return {
    received: all.reduce((sum, stats) => sum + stats.received, 0),
    totalWaitMs: all.reduce((sum, stats) => sum + stats.totalWaitMs, 0),
    maxWaitMs: all.reduce((max, stats) => Math.max(max, stats.maxWaitMs), 0),
  };
}

function replyToParent(child: InstanceRecord, taskScheduledId: number, timestamp: string): InboxEvent {
  if (child.runtimeStatus === 'Completed') {
    return {
      type: 'SubOrchestrationInstanceCompleted',
      timestamp,
      taskScheduledId,
      result: child.output ?? 'null',
    };
  }
  const reason = String(fromJson(child.output));
  return {
    type: 'SubOrchestrationInstanceFailed',
    timestamp,
    taskScheduledId,
    failure: {
      errorType: 'Error',
      errorMessage: `Sub-orchestration '${child.name}' ${child.runtimeStatus.toLowerCase()}: ${reason}`,
    },
  };
}

function describeScheduled(event: StoredEvent): string {
  if (event.type === 'TaskScheduled') return `activity '${event.name}'`;
  if (event.type === 'SubOrchestrationInstanceCreated') return `sub-orchestration '${event.name}'`;
  return 'a timer';
}

function statusOf(record: InstanceRecord): OrchestrationStatus {
  return {
    instanceId: record.instanceId,
    name: record.name,
    runtimeStatus: record.runtimeStatus,
    input: fromJson(record.input),
    output: fromJson(record.output),
    customStatus: fromJson(record.customStatus),
    createdTime: new Date(record.createdTime),
    lastUpdatedTime: new Date(record.lastUpdatedTime),
  };
}
