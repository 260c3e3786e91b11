// The in-process stand-in for the Azure Functions host: it takes the same FunctionDefinition objects the
// Function App registers and runs them against Azurite (queue triggers), a clock (timer triggers and
// durable timers) and durable-functions' own replay engine (orchestrations and activities).
import type { AppSettings } from './app-settings.js';
import { QueueServiceClient } from '@azure/storage-queue';
import { createLogger, type Logger } from '../../shared/observability/logger.js';
import type {
  ActivityFunctionDefinition,
  FunctionDefinition,
  HandlerContext,
  HttpFunctionDefinition,
  OrchestrationClient,
  OrchestrationFunctionDefinition,
  QueueFunctionDefinition,
  TimerFunctionDefinition,
} from '../../shared/runtime/definitions.js';
import { systemClock, type Clock } from './clock.js';
import { readDurableQueuePolling } from './durable-polling.js';
import type { ActivitySlotsSnapshot } from './activity-slots.js';
import type { DurableWorkSnapshot } from './durable-work.js';
import type { PemKeyPair } from '../tls/dev-ca.js';
import { createEventBus, type HostEventListener } from './events.js';
import { createHttpListener, type HttpListener } from './http-listener.js';
import { createFileHistoryStore, createMemoryHistoryStore } from './history-store.js';
import { createOrchestrationRuntime, type DurablePollingStats } from './orchestration-runtime.js';
import { createQueueListener, type QueueListener } from './queue-listener.js';
import { createTimerScheduler, type TimerScheduler } from './timer-scheduler.js';
import { createWorkTracker } from './work-tracker.js';

export interface LocalHostOptions {
  definitions: readonly FunctionDefinition[];
  /** Connection string of the Storage account whose queues feed the queue functions (Azurite). */
  storageConnectionString?: string;
  /**
   * Instead of a connection string: the queue service as the Function App's identity reaches it (a
   * service URL and a token credential, as the Functions host does with AzureWebJobsStorage__accountName).
   */
  queueService?: QueueServiceClient;
  /** Keeps orchestration history here (one JSON file per instance) so it survives a restart. */
  stateDirectory?: string;
  /** Defaults to real time; tests pass createScaledClock(factor). */
  clock?: Clock;
  /** host.json extensions.queues.maxDequeueCount; default 5. */
  maxDequeueCount?: number;
  /** host.json extensions.queues.visibilityTimeout (delay before a failed message is retried); default 0. */
  visibilityTimeoutMs?: number;
  /** host.json extensions.queues.batchSize: messages one fetch takes per queue function; default 16. */
  batchSize?: number;
  /**
   * host.json extensions.queues.newBatchThreshold: the next batch is fetched once this few are left in
   * the handler; default half the batch size (the host's default, and the app's host.json: 8 of 16).
   */
  newBatchThreshold?: number;
  /** Wait between polls of an empty queue; default 100 ms. */
  pollIntervalMs?: number;
  /** host.json durableTask.maxConcurrentActivityFunctions; default 50. */
  maxConcurrentActivities?: number;
  /**
   * The host.json whose extensions.durableTask.storageProvider (maxQueuePollingInterval, partitionCount)
   * paces the durable queues' polling, as the Azure Storage provider's; default the app's own host.json.
   */
  hostJsonPath?: string;
  /** The durable pollers' jitter source (a number in [0, 1)); default Math.random. */
  pollingRandom?: () => number;
  /** Values for %NAME% binding expressions; defaults to the process environment. */
  appSettings?: AppSettings;
  /**
   * Where the HTTP functions are served (only when there are some): a loopback port (default: a free
   * one), HTTPS with `tls` (a certificate for 127.0.0.1), plain HTTP without.
   */
  http?: { port?: number; tls?: PemKeyPair };
  log?: Logger;
}

export interface LocalHost {
  /** Starts the queue listeners, the timer schedules and the orchestration runtime (resuming saved work). */
  start(): Promise<void>;
  /** Graceful: stops taking work and waits for handlers, activities and episodes in progress. */
  stop(): Promise<void>;
  readonly orchestrations: OrchestrationClient;
  /** How long durable messages waited for the poll that took them, since the host started. */
  durablePollingStats(): DurablePollingStats;
  /**
   * The Durable work counted since the host was created, per orchestration type and in all: the actions
   * the Durable Task Scheduler would bill (starts, activity starts and results, timer completions,
   * external events, sub-orchestration results, terminations; replays are not actions), the engine's own
   * work (episodes, history events, activities, timers created and fired, continue-as-new), history bytes,
   * and the actions of every second of the host's clock with the busiest one. `instances: true` adds each
   * instance's history bytes, which mergeDurableWork needs to combine snapshots of successive processes.
   */
  durableWork(options?: { instances?: boolean }): DurableWorkSnapshot;
  /**
   * The activity slots (maxConcurrentActivities, like host.json's maxConcurrentActivityFunctions) since
   * the host was created: the most in use at once, each work item's wait for a free one, the slot-seconds
   * held, per activity and in all, and how long every slot was in use. Apart from durableWork because the
   * slots are this process's, where the Durable work belongs to the task hub and adds up across processes.
   */
  activitySlots(): ActivitySlotsSnapshot;
  /** Runs a timer function now (after a run in progress, if any) and resolves when it has finished. */
  triggerTimer(name: string): Promise<void>;
  /**
   * Resolves when nothing is left to do right now: no handler, activity or orchestration episode in
   * progress and every queue found empty by a poll that started after that. Durable timers that fire later
   * and messages made invisible by a failed delivery do not count as work.
   */
  waitForIdle(options?: { timeoutMs?: number }): Promise<void>;
  /** Observes what the host does (invocations, failures, poison messages, orchestration lifecycle). */
  on(listener: HostEventListener): () => void;
  /**
   * Where the HTTP functions answer once started: `https://127.0.0.1:PORT/api` (routes follow), as
   * `https://<app>.azurewebsites.net/api` in Azure; undefined when the app has no HTTP function.
   */
  httpBaseUrl(): string | undefined;
}

export function createLocalHost(options: LocalHostOptions): LocalHost {
  const log = options.log ?? createLogger({ component: 'local-host' });
  const clock = options.clock ?? systemClock;
  const events = createEventBus();
  const work = createWorkTracker();
  const store =
    options.stateDirectory === undefined
      ? createMemoryHistoryStore()
      : createFileHistoryStore(options.stateDirectory);

  const byKind = <K extends FunctionDefinition['kind']>(kind: K) =>
    options.definitions.filter(
      (definition): definition is Extract<FunctionDefinition, { kind: K }> => definition.kind === kind,
    );
  assertUniqueNames(options.definitions);

  // Every handler context carries the runtime's client, and the runtime needs contexts for its activities:
  // contexts are built on demand, after the runtime exists.
  const contextFor = (functionName: string, invocationId: string, dequeueCount?: number): HandlerContext => ({
    invocationId,
    functionName,
    log: log.with({ functionName, invocationId }),
    orchestrations: runtime.client,
    dequeueCount,
  });

  const runtime = createOrchestrationRuntime({
    orchestrations: byKind('orchestration') as OrchestrationFunctionDefinition[],
    activities: byKind('activity') as ActivityFunctionDefinition[],
    store,
    clock,
    log,
    events,
    work,
    maxConcurrentActivities: options.maxConcurrentActivities ?? 50,
    contextFor,
    polling: readDurableQueuePolling(options.hostJsonPath),
    random: options.pollingRandom,
  });

  const service = queueServiceOf(options);
  const queues: QueueListener[] = (byKind('queue') as QueueFunctionDefinition[]).map((definition) =>
    createQueueListener({
      definition,
      service,
      maxDequeueCount: options.maxDequeueCount ?? 5,
      visibilityTimeoutMs: options.visibilityTimeoutMs ?? 0,
      batchSize: options.batchSize ?? 16,
      newBatchThreshold: options.newBatchThreshold ?? Math.floor((options.batchSize ?? 16) / 2),
      pollIntervalMs: options.pollIntervalMs ?? 100,
      // host.json functionTimeout is five minutes; the lease covers a handler that runs that long.
      leaseSeconds: 300,
      log,
      events,
      work,
      contextFor,
      appSettings: options.appSettings ?? process.env,
    }),
  );
  const timers = new Map<string, TimerScheduler>(
    (byKind('timer') as TimerFunctionDefinition[]).map((definition) => [
      definition.name,
      createTimerScheduler({
        definition,
        clock,
        log,
        events,
        work,
        contextFor,
        appSettings: options.appSettings ?? process.env,
      }),
    ]),
  );

  const httpDefinitions = byKind('http') as HttpFunctionDefinition[];
  const http: HttpListener | undefined =
    httpDefinitions.length === 0
      ? undefined
      : createHttpListener({
          definitions: httpDefinitions,
          ...(options.http?.tls ? { tls: options.http.tls } : {}),
          ...(options.http?.port !== undefined ? { port: options.http.port } : {}),
          log,
          events,
          work,
          contextFor,
        });

  let started = false;

  return {
    httpBaseUrl: () => http?.baseUrl(),
    orchestrations: runtime.client,
    durablePollingStats: runtime.pollingStats,
    durableWork: (snapshotOptions) => runtime.durableWork.snapshot(snapshotOptions),
    activitySlots: () => runtime.activitySlots.snapshot(),
    on: events.on,
    start: async () => {
      if (started) return;
      started = true;
      await runtime.start();
      await Promise.all(queues.map((queue) => queue.start()));
      for (const timer of timers.values()) timer.start();
      await http?.start();
      log.info('local host started', {
        ...(http
          ? { http: http.baseUrl(), routes: httpDefinitions.map((definition) => definition.route) }
          : {}),
        queues: queues.map((queue) => queue.queueName),
        timers: [...timers.keys()],
        orchestrations: byKind('orchestration').map((definition) => definition.name),
        activities: byKind('activity').map((definition) => definition.name),
      });
    },
    stop: async () => {
      if (!started) return;
      started = false;
      await Promise.all([
        ...(http ? [http.stop()] : []),
        ...queues.map((queue) => queue.stop()),
        ...[...timers.values()].map((timer) => timer.stop()),
      ]);
      await runtime.stop();
      log.info('local host stopped');
    },
    triggerTimer: async (name) => {
      const timer = timers.get(name);
      if (timer === undefined)
        throw new Error(`No timer function named '${name}' is registered with the host.`);
      await timer.trigger();
    },
    waitForIdle: async ({ timeoutMs = 30_000 } = {}) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        await withDeadline(work.drained(), deadline, () => `${work.busy} unit(s) of work still in progress`);
        const startedBefore = work.started;
        const pollsBefore = queues.map((queue) => queue.emptyPolls);
        while (
          queues.some((queue, index) => queue.emptyPolls <= pollsBefore[index]!) &&
          work.started === startedBefore
        ) {
          if (Date.now() > deadline)
            throw new Error(`host not idle after ${timeoutMs} ms: queues still being drained`);
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        if (work.started === startedBefore && work.busy === 0) return;
      }
    },
  };
}

function assertUniqueNames(definitions: readonly FunctionDefinition[]): void {
  const seen = new Set<string>();
  for (const definition of definitions) {
    if (seen.has(definition.name)) throw new Error(`Two functions are named '${definition.name}'.`);
    seen.add(definition.name);
  }
}

async function withDeadline(promise: Promise<void>, deadline: number, describe: () => string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`host not idle: ${describe()}`)),
      Math.max(0, deadline - Date.now()),
    );
  });
  try {
    await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

function queueServiceOf(options: LocalHostOptions): QueueServiceClient {
  if (options.queueService) return options.queueService;
  if (options.storageConnectionString !== undefined)
    return QueueServiceClient.fromConnectionString(options.storageConnectionString);
  throw new Error('the local host needs storageConnectionString or queueService');
}
