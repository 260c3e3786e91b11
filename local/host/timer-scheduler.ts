// Fires one timer-triggered function on its NCRONTAB schedule, on the host's clock. Like Azure's timer
// trigger it is a singleton: at most one run at a time, and an occurrence that comes due while the
// previous run is still going is skipped (and logged), never queued behind it.
import { resolveAppSettings, type AppSettings } from './app-settings.js';
import { randomUUID } from 'node:crypto';
import type { Timer } from '@azure/functions';
import type { Logger } from '../../shared/observability/logger.js';
import type { HandlerContext, TimerFunctionDefinition } from '../../shared/runtime/definitions.js';
import type { Clock } from './clock.js';
import type { HostEventBus } from './events.js';
import { nextOccurrence, parseNcrontab, type CronSchedule } from './ncrontab.js';
import type { WorkTracker } from './work-tracker.js';

export interface TimerScheduler {
  readonly functionName: string;
  start(): void;
  /** Stops scheduling and waits for a run in progress. */
  stop(): Promise<void>;
  /** Runs the function now (after any run in progress, keeping it a singleton) and resolves when done. */
  trigger(): Promise<void>;
}

export function createTimerScheduler(options: {
  definition: TimerFunctionDefinition;
  clock: Clock;
  log: Logger;
  events: HostEventBus;
  work: WorkTracker;
  contextFor: (functionName: string, invocationId: string) => HandlerContext;
  appSettings: AppSettings;
}): TimerScheduler {
  const { definition, clock, events, work } = options;
  const schedule: CronSchedule = parseNcrontab(resolveAppSettings(definition.schedule, options.appSettings));
  const log = options.log.with({ functionName: definition.name });
  let cancel: (() => void) | undefined;
  let current: Promise<void> | undefined;
  let last: number | undefined;
  let running = false;

  function armNext(after: number): void {
    const due = nextOccurrence(schedule, after);
    if (due === undefined || !running) return;
    cancel = clock.setTimer(
      due,
      () => {
        // From now, not from `due`: occurrences missed while the process was busy are not replayed one by one.
        armNext(Math.max(due, clock.now()));
        if (current !== undefined) {
          const reason = `occurrence at ${new Date(due).toISOString()} skipped: the previous run is still in progress`;
          log.warn(reason);
          events.emit({ type: 'timer.skipped', functionName: definition.name, reason });
          return;
        }
        void run(due, false);
      },
      'schedule',
    );
  }

  function run(scheduledAt: number, isPastDue: boolean): Promise<void> {
    const done = work.begin();
    const execution = invoke(scheduledAt, isPastDue).finally(() => {
      current = undefined;
      done();
    });
    current = execution;
    return execution;
  }

  async function invoke(scheduledAt: number, isPastDue: boolean): Promise<void> {
    const invocationId = randomUUID();
    const context = options.contextFor(definition.name, invocationId);
    const next = nextOccurrence(schedule, scheduledAt);
    const timer: Timer = {
      isPastDue,
      schedule: { adjustForDST: false },
      scheduleStatus: {
        last: new Date(last ?? scheduledAt).toISOString(),
        next: new Date(next ?? scheduledAt).toISOString(),
        lastUpdated: new Date(clock.now()).toISOString(),
      },
    };
    last = scheduledAt;
    events.emit({ type: 'function.invoked', functionName: definition.name, trigger: 'timer', invocationId });
    const startedAt = Date.now();
    try {
      await definition.handler(timer, context);
      events.emit({
        type: 'function.succeeded',
        functionName: definition.name,
        trigger: 'timer',
        invocationId,
        durationMs: Date.now() - startedAt,
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      context.log.error('timer function failed', { error: message });
      events.emit({
        type: 'function.failed',
        functionName: definition.name,
        trigger: 'timer',
        invocationId,
        durationMs: Date.now() - startedAt,
        error: message,
      });
    }
  }

  return {
    functionName: definition.name,
    start: () => {
      running = true;
      const now = clock.now();
      if (definition.runOnStartup) void run(now, false);
      armNext(now);
    },
    stop: async () => {
      running = false;
      cancel?.();
      await current;
    },
    trigger: async () => {
      while (current !== undefined) await current;
      await run(clock.now(), false);
    },
  };
}
