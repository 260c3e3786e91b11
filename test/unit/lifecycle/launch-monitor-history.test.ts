// The launch monitor's history stays bounded while a VM is slow to be created: the real monitor
// orchestration runs on the local host's durable engine (durable-functions' replay) under a virtual
// clock, with scripted activities standing in for ARM, because what is under test is how the
// orchestration carries its polling state over continue-as-new: poll count, poller state, pacing and
// the deadline must come out exactly as one long execution would have them. The real activities run in
// test/integration/launch.test.ts; the monitor's timing rules in test/integration/launch-monitor.test.ts.
import { describe, expect, test } from 'vitest';
import { spreadMs } from '../../../shared/decisions/launch-poll-pacing.js';
import { HISTORY_EVENTS_PER_TASK } from '../../../shared/lifecycle/durable/history-budget.js';
import {
  LAUNCH_MONITOR_TASKS_PER_EXECUTION,
  launchMonitorOrchestrator,
  type LaunchMonitorInput,
  type PollVmCreationInput,
  type PollVmCreationResult,
  type RecordLaunchFailureInput,
  type RecordLaunchFailureResult,
} from '../../../shared/lifecycle/launch/launch-monitor.js';
import { activity, orchestration } from '../../../shared/runtime/definitions.js';
import { LaunchMonitorNames } from '../../../shared/runtime/function-names.js';
import { d2sV5Offering } from '../../support/offering.js';
import { startVirtualDurableEngine } from '../../support/virtual-durable-engine.js';

const START = new Date('2026-11-30T10:00:00Z');
const INSTANCE = 'launch-uid-1';
/** Four events a task over the budget, plus the first and the last episode's extra events. */
const HISTORY_BOUND = HISTORY_EVENTS_PER_TASK * LAUNCH_MONITOR_TASKS_PER_EXECUTION + 4;

const input: LaunchMonitorInput = {
  nodeClaim: { name: 'nc', uid: 'uid-1', nodePool: 'pool' },
  vmName: 'aks-nc',
  offering: d2sV5Offering(),
  pollerState: 'state-0',
  startedAt: START.toISOString(),
  pollIntervalSeconds: 5,
  maxPollIntervalSeconds: 30,
  deadlineMinutes: 15,
};

async function runMonitor(
  script: (poll: number) => PollVmCreationResult,
  failureResult: (call: number) => RecordLaunchFailureResult = () => null,
) {
  const polls: { at: number; pollerState: string | undefined }[] = [];
  const successes: unknown[] = [];
  const failures: { at: number; input: RecordLaunchFailureInput }[] = [];
  let now = (): number => START.getTime();
  const engine = await startVirtualDurableEngine(
    [
      orchestration(LaunchMonitorNames.orchestration, launchMonitorOrchestrator),
      activity<PollVmCreationInput>(LaunchMonitorNames.pollVmCreation, async (poll) => {
        polls.push({ at: now(), pollerState: poll.pollerState });
        return script(polls.length);
      }),
      activity(LaunchMonitorNames.recordLaunchSuccess, async (monitor) => {
        successes.push(monitor);
        return null;
      }),
      activity<RecordLaunchFailureInput>(LaunchMonitorNames.recordLaunchFailure, async (failure) => {
        failures.push({ at: now(), input: failure });
        return failureResult(failures.length);
      }),
    ],
    START,
  );
  now = () => engine.clock.now();
  try {
    await engine.client.startNew(LaunchMonitorNames.orchestration, { instanceId: INSTANCE, input });
    await engine.runUntil(START.getTime() + 60 * 60_000);
    return {
      status: await engine.client.getStatus(INSTANCE),
      continuations: engine.events.filter((e) => e.type === 'orchestration.continuedAsNew').length,
      longest: engine.longestHistory.get(INSTANCE) ?? 0,
      polls,
      successes,
      failures,
    };
  } finally {
    await engine.stop();
  }
}

describe('launch monitor history while a VM is slow to be created', () => {
  test('a 14-minute creation continues as new, yet polls every 5 s with the poller state each poll handed on', async () => {
    const run = await runMonitor((poll) =>
      poll <= 170 ? { status: 'InProgress', pollerState: `state-${poll}` } : { status: 'Succeeded' },
    );

    expect(run.status?.runtimeStatus).toBe('Completed');
    expect(run.status?.output).toEqual({ outcome: 'Launched', polls: 171 });
    // Two tasks a poll: a continuation after every 50 polls.
    expect(run.continuations).toBe(3);
    expect(run.longest).toBeLessThanOrEqual(HISTORY_BOUND);
    expect(run.polls.map((p) => p.pollerState)).toEqual(
      Array.from({ length: 171 }, (_, index) => `state-${index}`),
    );
    expect(run.polls.map((p) => p.at - START.getTime())).toEqual(
      Array.from({ length: 171 }, (_, index) => (index + 1) * 5_000),
    );
    // The activities see the monitor's input as it started, without the carried state.
    expect(run.successes).toEqual([input]);
  });

  test('a spread pace keyed by the poll number and the deadline from startedAt survive the continuations', async () => {
    // 400 launches in flight: the shared budget sets the interval and polls are spread.
    const run = await runMonitor(() => ({
      status: 'InProgress',
      pollerState: 'still',
      inFlightLaunches: 400,
    }));

    expect(run.status?.output).toMatchObject({ outcome: 'TimedOut' });
    expect(run.continuations).toBeGreaterThan(0);
    expect(run.longest).toBeLessThanOrEqual(HISTORY_BOUND);
    const intervalMs = ((400 * 60) / (5_000 * 0.7)) * 1000;
    const deadline = START.getTime() + 15 * 60_000;
    let expectedAt = START.getTime() + 5_000;
    run.polls.forEach((poll, index) => {
      expect(poll.at).toBe(expectedAt);
      expectedAt = Math.min(deadline, expectedAt + spreadMs(intervalMs, INSTANCE, index + 2));
    });
    expect(run.polls.at(-1)?.at).toBe(deadline);
    expect(run.failures).toEqual([
      { at: deadline, input: expect.objectContaining({ timedOut: true, monitor: input }) },
    ]);
  });

  test('a VM deletion before a relaunch that takes long continues as new and still hands off once', async () => {
    const run = await runMonitor(
      () => ({ status: 'Failed', error: { code: 'OSProvisioningTimedOut', message: 'timed out' } }),
      (call) => ({ relaunch: call <= 80 ? 'VmDeleting' : 'HandedOff' }),
    );

    expect(run.status?.output).toEqual({
      outcome: 'Relaunching',
      polls: 1,
      code: 'OSProvisioningTimedOut',
    });
    expect(run.continuations).toBeGreaterThan(0);
    expect(run.longest).toBeLessThanOrEqual(HISTORY_BOUND);
    expect(run.polls).toHaveLength(1);
    expect(run.failures).toHaveLength(81);
    // One every 5 s after the first, across the continuations.
    expect(run.failures.map((f) => f.at - run.failures[0]!.at)).toEqual(
      Array.from({ length: 81 }, (_, index) => index * 5_000),
    );
  });
});
