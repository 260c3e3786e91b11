// The provisioning batcher: one singleton orchestration that pod events signal, playing Karpenter's
// batcher (KS pkg/controllers/provisioning/batcher.go). A window opens with the first signal; every new
// signal restarts the idle timer; the window closes after `idleMs` without a signal or `maxMs` after it
// opened, whichever comes first. Then one solve runs over every provisionable pod in the cluster (not
// only the signalled ones), and the next window waits for the next signal.
//
// Each window ends with continue-as-new so the history stays one window long. A signal that arrives
// while the solve runs is kept by the engine for the next wait within this execution; one that arrives
// between the solve and the restart may be dropped by Durable, which is why the event bridge re-announces
// a provisionable pod every 10 s, as Karpenter's pod controller requeues one.
import type * as df from 'durable-functions';
import { RetryOptions } from 'durable-functions';
import { ProvisioningNames } from '../../runtime/function-names.js';
import { callWithRetry, durableActivity } from '../durable/durable-activity.js';
import type { ProvisioningReport } from './provision.js';

export interface BatcherInput {
  idleMs: number;
  maxMs: number;
  /** What the previous window did, carried over continue-as-new for the status. */
  lastWindow?: ProvisioningReport;
}

/** The activity's input: the window's ID, from the time it opened, the same on every replay. */
export interface ProvisionWindowInput {
  windowId: string;
  signals: number;
}

export interface BatcherStatus {
  state: 'waiting' | 'collecting' | 'solving';
  windowOpenedAt?: string;
  signals?: number;
  lastWindow?: ProvisioningReport;
}

const activityRetry = new RetryOptions(1_000, 3);

/** The window's solve: one descriptor gives its registration and the typed call below. */
export const ProvisioningActivities = {
  solve: durableActivity<ProvisionWindowInput, ProvisioningReport>(ProvisioningNames.activity),
};

export function* provisioningBatcher(context: df.OrchestrationContext): Generator<df.Task, void, unknown> {
  const input = context.df.getInput<BatcherInput>();
  const lastWindow = input.lastWindow;
  context.df.setCustomStatus({ state: 'waiting', ...(lastWindow && { lastWindow }) } satisfies BatcherStatus);
  yield context.df.waitForExternalEvent(ProvisioningNames.podEvent);

  const openedAt = context.df.currentUtcDateTime.getTime();
  const closesAt = openedAt + input.maxMs;
  let signals = 1;
  for (;;) {
    const now = context.df.currentUtcDateTime.getTime();
    const closeAt = Math.min(now + input.idleMs, closesAt);
    if (closeAt <= now) break;
    context.df.setCustomStatus({
      state: 'collecting',
      windowOpenedAt: new Date(openedAt).toISOString(),
      signals,
    } satisfies BatcherStatus);
    const idle = context.df.createTimer(new Date(closeAt));
    const signal = context.df.waitForExternalEvent(ProvisioningNames.podEvent);
    const first = yield context.df.Task.any([idle, signal]);
    if (first === idle) break;
    idle.cancel();
    signals += 1;
  }

  const windowId = `w${openedAt.toString(36)}`;
  context.df.setCustomStatus({ state: 'solving', windowOpenedAt: new Date(openedAt).toISOString(), signals });
  // A failed solve (API server unreachable, throttled) is retried; after that the window is given up and
  // the next signal opens a new one, so one bad window never stops provisioning.
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
  context.df.continueAsNew({ idleMs: input.idleMs, maxMs: input.maxMs, ...(next && { lastWindow: next }) });
}
