// The provisioning batcher, second version: the same windows as batcher.ts (a window opens with the
// first signal, closes `idleMs` after the last signal or `maxMs` after it opened, then one solve over
// every provisionable pod) for fewer Durable actions. The first version starts a new idle timer for every
// signal, and each one it cancels still fires into the open window, so a signal costs two actions (the
// event and a timer); here one timer runs at a time: a signal only moves the window's end, and when the
// timer fires the window closes or the timer is set again for the new end, so a window costs about one
// timer per `idleMs` it stays open. The custom status shows when the last signal came (`lastSignalAt`),
// which lets a signaller skip raising an event the open window does not need (signal.ts): the solve reads
// every provisionable pod when the window closes, and a window seen collecting has not read them yet
// (the status says 'solving' before the solve is scheduled, in the same episode).
//
// It is a new orchestration beside the first, not a change to it: the singleton continues as new under
// its own name for ever, so signal.ts hands the instance over (terminates a first-version batcher that is
// between windows and starts this one under the same instance ID), and the first stays registered until
// none runs (docs/design.md, "Names are history").
import type * as df from 'durable-functions';
import { RetryOptions } from 'durable-functions';
import { ProvisioningNames } from '../../runtime/function-names.js';
import { callWithRetry } from '../durable/durable-activity.js';
import { ProvisioningActivities, type BatcherInput, type BatcherStatus } from './batcher.js';
import type { ProvisioningReport } from './provision.js';

/** The second version's status: the first's, and when the window last heard a signal (RFC 3339). */
export interface BatcherV2Status extends BatcherStatus {
  lastSignalAt?: string;
}

const activityRetry = new RetryOptions(1_000, 3);

export function* provisioningBatcherV2(context: df.OrchestrationContext): Generator<df.Task, void, unknown> {
  const input = context.df.getInput<BatcherInput>();
  const lastWindow = input.lastWindow;
  context.df.setCustomStatus({
    state: 'waiting',
    ...(lastWindow && { lastWindow }),
  } satisfies BatcherV2Status);
  yield context.df.waitForExternalEvent(ProvisioningNames.podEvent);

  const openedAt = context.df.currentUtcDateTime.getTime();
  const closesAt = openedAt + input.maxMs;
  let lastSignalAt = openedAt;
  let signals = 1;
  const collecting = (): BatcherV2Status => ({
    state: 'collecting',
    windowOpenedAt: new Date(openedAt).toISOString(),
    signals,
    lastSignalAt: new Date(lastSignalAt).toISOString(),
  });
  context.df.setCustomStatus(collecting());
  let idle = context.df.createTimer(new Date(Math.min(lastSignalAt + input.idleMs, closesAt)));
  for (;;) {
    const signal = context.df.waitForExternalEvent(ProvisioningNames.podEvent);
    const first = yield context.df.Task.any([idle, signal]);
    const now = context.df.currentUtcDateTime.getTime();
    if (first === signal) {
      // The timer keeps running: it is set again, for the window's new end, only when it fires.
      signals += 1;
      lastSignalAt = now;
      context.df.setCustomStatus(collecting());
      continue;
    }
    const closeAt = Math.min(lastSignalAt + input.idleMs, closesAt);
    if (now >= closeAt) break;
    idle = context.df.createTimer(new Date(closeAt));
  }

  const windowId = `w${openedAt.toString(36)}`;
  context.df.setCustomStatus({
    state: 'solving',
    windowOpenedAt: new Date(openedAt).toISOString(),
    signals,
  } satisfies BatcherV2Status);
  // As the first version: a failed solve is retried, then the window is given up and the next signal
  // opens a new one, so one bad window never stops provisioning.
  let report: ProvisioningReport | undefined;
  try {
    report = yield* callWithRetry(context, ProvisioningActivities.solve, activityRetry, {
      windowId,
      signals,
    });
  } catch {
    report = undefined;
  }
  const next = report ?? lastWindow;
  context.df.continueAsNew({
    idleMs: input.idleMs,
    maxMs: input.maxMs,
    ...(next && { lastWindow: next }),
  } satisfies BatcherInput);
}
