// The launch monitor orchestration driven by durable-functions' own replay engine (in the in-process
// host) on a scaled clock, so its timing rules can be checked in seconds: Retry-After is honoured as a
// floor, the pace follows the launches in flight, and the deadline ends in LaunchTimeout. The real orchestrator runs;
// its activities are replaced here by scripted ones, because what is under test is the orchestrator's
// use of time, which no real VM can be made to exercise for 15 minutes. The real activities run in
// test/integration/launch.test.ts.
import { afterEach, describe, expect, inject, test } from 'vitest';
import { createLocalHost, createScaledClock, type Clock, type LocalHost } from '../../local/host/index.js';
import {
  launchMonitorOrchestrator,
  type LaunchMonitorInput,
  type PollVmCreationResult,
  type RecordLaunchFailureInput,
  type RecordLaunchFailureResult,
} from '../../shared/lifecycle/launch/launch-monitor.js';
import { LaunchMonitorNames } from '../../shared/runtime/function-names.js';
import { silentLogger } from '../../shared/observability/logger.js';
import type { FunctionDefinition } from '../../shared/runtime/definitions.js';
import { d2sV5Offering } from '../support/offering.js';

const factor = 600;
let host: LocalHost | undefined;

afterEach(async () => {
  await host?.stop();
  host = undefined;
});

function monitorInput(start: Date, overrides: Partial<LaunchMonitorInput> = {}): LaunchMonitorInput {
  return {
    nodeClaim: { name: 'nc', uid: 'uid-1', nodePool: 'pool' },
    vmName: 'aks-nc',
    offering: d2sV5Offering(),
    pollerState: 'state-0',
    startedAt: start.toISOString(),
    pollIntervalSeconds: 5,
    maxPollIntervalSeconds: 30,
    // Weeks on the scaled clock (real minutes): only the deadline test may reach it. At 600×, a
    // 15-minute deadline is 1.5 real seconds, which a loaded machine's lag alone can use up.
    deadlineMinutes: 30_000,
    ...overrides,
  };
}

async function runMonitor(
  script: (poll: number) => PollVmCreationResult,
  input: (start: Date) => LaunchMonitorInput,
  failureResult: (call: number) => RecordLaunchFailureResult = () => null,
) {
  const start = new Date('2026-11-30T10:00:00Z');
  const scaled = createScaledClock(factor, { start });
  // Every durable timer the orchestration sets, by when it is due (not the Durable queues' polls).
  const timersDueAt: number[] = [];
  const clock: Clock = {
    now: scaled.now,
    setTimer: (at, callback, purpose) => {
      if (purpose !== 'queue-poll') timersDueAt.push(at);
      return scaled.setTimer(at, callback, purpose);
    },
  };
  const polls: { at: number; pollerState: string | undefined }[] = [];
  const outcomes: { kind: 'success' | 'failure'; at: number; input: unknown }[] = [];
  const definitions: FunctionDefinition[] = [
    { kind: 'orchestration', name: LaunchMonitorNames.orchestration, handler: launchMonitorOrchestrator },
    {
      kind: 'activity',
      name: LaunchMonitorNames.pollVmCreation,
      handler: (pollInput) => {
        polls.push({ at: clock.now(), pollerState: (pollInput as { pollerState?: string }).pollerState });
        return Promise.resolve(script(polls.length));
      },
    },
    {
      kind: 'activity',
      name: LaunchMonitorNames.recordLaunchSuccess,
      handler: (recordInput) => {
        outcomes.push({ kind: 'success', at: clock.now(), input: recordInput });
        return Promise.resolve(null);
      },
    },
    {
      kind: 'activity',
      name: LaunchMonitorNames.recordLaunchFailure,
      handler: (recordInput) => {
        outcomes.push({ kind: 'failure', at: clock.now(), input: recordInput });
        return Promise.resolve(failureResult(outcomes.filter((o) => o.kind === 'failure').length));
      },
    },
  ];
  host = createLocalHost({
    definitions,
    storageConnectionString: inject('azuriteConnectionString'),
    clock,
    log: silentLogger,
  });
  await host.start();
  await host.orchestrations.startNew(LaunchMonitorNames.orchestration, {
    instanceId: 'launch-uid-1',
    input: input(start),
  });
  for (let i = 0; i < 600; i++) {
    const status = await host.orchestrations.getStatus('launch-uid-1');
    if (status && ['Completed', 'Failed', 'Terminated'].includes(status.runtimeStatus)) {
      return { status, polls, outcomes, timersDueAt, start: start.getTime() };
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the launch monitor did not finish');
}

describe('launch monitor orchestration', () => {
  test('honours Retry-After as a floor between polls and carries the poller state forward', async () => {
    const { status, polls, outcomes } = await runMonitor(
      (poll) =>
        poll < 4
          ? { status: 'InProgress', pollerState: `state-${poll}`, retryAfterSeconds: 20 }
          : { status: 'Succeeded' },
      (start) => monitorInput(start),
    );
    expect(status.runtimeStatus).toBe('Completed');
    expect(status.output).toEqual({ outcome: 'Launched', polls: 4 });
    expect(polls.map((p) => p.pollerState)).toEqual(['state-0', 'state-1', 'state-2', 'state-3']);
    const gaps = polls.slice(1).map((p, i) => (p.at - (polls[i]?.at ?? 0)) / 1000);
    // Never sooner than Retry-After (20 s). (No upper bound: on the scaled clock the machine's lag is
    // multiplied 600 times.)
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(20);
    expect(outcomes.map((o) => o.kind)).toEqual(['success']);
  });

  test('polls at the minimum while few launches are in flight, and spreads out as the cluster reports more', async () => {
    const { polls } = await runMonitor(
      (poll) =>
        poll < 3
          ? { status: 'InProgress', inFlightLaunches: 1 }
          : poll < 6
            ? { status: 'InProgress', inFlightLaunches: 3_000 }
            : { status: 'Succeeded' },
      (start) => monitorInput(start, { pollIntervalSeconds: 4, maxPollIntervalSeconds: 9 }),
    );
    const gaps = polls.slice(1).map((p, i) => (p.at - (polls[i]?.at ?? 0)) / 1000);
    // Only lower bounds: a durable timer never fires early, but on the scaled clock any lag of the
    // machine is multiplied 600 times, so how much later it fires says nothing (the exact intervals are
    // the pure pacing's, table-tested in test/unit/launch-poll-pacing.test.ts).
    // One launch in flight: the minimum.
    expect(gaps[0]).toBeGreaterThanOrEqual(4);
    // 3,000 in flight: each waits its share of Compute's 5,000 GETs/min (at 70%), about 51 s, beyond
    // the maximum (which only applies when ARM says its budget runs low).
    const share = (3_000 * 60) / (5_000 * 0.7);
    for (const gap of gaps.slice(2, 5)) expect(gap).toBeGreaterThanOrEqual(share);
  });

  test('a failure reported by ARM is recorded at the first poll that sees it', async () => {
    const { status, outcomes, polls } = await runMonitor(
      (poll) =>
        poll < 3
          ? { status: 'InProgress', retryAfterSeconds: 10 }
          : {
              status: 'Failed',
              error: { message: 'The long-running operation has failed. ZonalAllocationFailed. x' },
            },
      (start) => monitorInput(start),
    );
    expect(status.output).toEqual({ outcome: 'Failed', polls: 3 });
    const failure = outcomes[0]?.input as RecordLaunchFailureInput;
    expect(failure.timedOut).toBe(false);
    expect(failure.error?.message).toContain('ZonalAllocationFailed');
    // Recorded right after the poll that saw it: no poll came after it (polls: 3 above).
    expect(polls).toHaveLength(3);
  });

  test('a transient failure handed to a relaunch calls the activity again, one poll interval apart, until the VM is gone', async () => {
    const { status, outcomes } = await runMonitor(
      () => ({
        status: 'Failed',
        error: { message: 'The long-running operation has failed. InternalExecutionError. x' },
      }),
      (start) => monitorInput(start),
      (call) => ({ relaunch: call < 3 ? 'VmDeleting' : 'HandedOff' }),
    );
    expect(status.output).toEqual({ outcome: 'Relaunching', polls: 1 });
    expect(outcomes.map((o) => o.kind)).toEqual(['failure', 'failure', 'failure']);
    const gaps = outcomes.slice(1).map((o, i) => (o.at - (outcomes[i]?.at ?? 0)) / 1000);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(5);
  });

  test('the deadline ends the launch as LaunchTimeout', async () => {
    const { status, outcomes, polls, timersDueAt, start } = await runMonitor(
      () => ({ status: 'InProgress', retryAfterSeconds: 60 }),
      (begin) => monitorInput(begin, { deadlineMinutes: 15 }),
    );
    expect(status.output).toMatchObject({ outcome: 'TimedOut', polls: polls.length });
    const failure = outcomes[0]?.input as RecordLaunchFailureInput;
    expect(failure.timedOut).toBe(true);
    // Not early, and promptly: no wait reaches past the deadline (the last is cut short to end there), at
    // most one poll starts after it (none if the poll before already ended past it), and the timeout is
    // recorded right after the last poll. How soon after, in clock minutes, is the machine's lag
    // multiplied 600 times, so it is not a measure.
    const deadline = start + 15 * 60_000;
    expect(outcomes.map((o) => o.kind)).toEqual(['failure']);
    expect(outcomes[0]?.at).toBeGreaterThanOrEqual(deadline);
    expect(timersDueAt.length).toBeGreaterThan(0);
    expect(Math.max(...timersDueAt)).toBeLessThanOrEqual(deadline);
    expect(polls.filter((p) => p.at >= deadline).length).toBeLessThanOrEqual(1);
    expect(outcomes[0]?.at).toBeGreaterThanOrEqual(polls.at(-1)?.at ?? Number.POSITIVE_INFINITY);
  });
});
