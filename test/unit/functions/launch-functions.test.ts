// The launch workflow's functions as the app registers them (functions/launch.ts): each activity taken
// from appDefinitions by its name and run on the in-memory fakes, and the launch monitor (both versions)
// replayed against histories this test writes, asserting what it schedules next and how it ends. The monitor's
// history bound over continue-as-new is launch-monitor-history.test.ts; the activities against the ARM
// emulator are test/integration/launch*.test.ts.
import { beforeEach, describe, expect, test } from 'vitest';
import type { LaunchProgress } from '../../../shared/cloudprovider/types.js';
import {
  ACTIVITY_WAIT_WINDOW_SECONDS,
  type ActivityTimer,
} from '../../../shared/lifecycle/durable/activity-wait.js';
import { awaitVmCreation } from '../../../shared/lifecycle/launch/launch-outcome.js';
import type { Condition, NodeClaim } from '../../../shared/models/index.js';
import { ConditionTypes, WellKnown } from '../../../shared/models/karpenter.js';
import { LaunchMonitorNames, TerminationNames } from '../../../shared/runtime/function-names.js';
import { appFunctions, type AppFunctions } from '../../support/app-functions.js';
import { FakeApiError } from '../../support/fake-api-error.js';
import { FAKE_NOW, fakeLifecycle, type FakeLifecycle } from '../../support/fake-lifecycle.js';
import { covers } from '../../support/function-coverage.js';
import { d2sV5Offering } from '../../support/offering.js';
import { replayOrchestration, sequential, transientAnswer } from '../../support/orchestrator-replay.js';

const VM = 'aks-general-a';
const startedAt = new Date(FAKE_NOW.getTime() - 2 * 60_000).toISOString();
const monitor = {
  nodeClaim: { name: 'general-a', uid: 'uid-general-a', nodePool: 'general' },
  vmName: VM,
  offering: d2sV5Offering(),
  pollerState: 'poller-0',
  startedAt,
  pollIntervalSeconds: 5,
  maxPollIntervalSeconds: 30,
  deadlineMinutes: 15,
};

function launching(uid = 'uid-general-a'): NodeClaim {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name: 'general-a',
      uid,
      labels: { [WellKnown.nodePoolLabel]: 'general' },
      finalizers: [WellKnown.terminationFinalizer],
    },
    spec: {
      nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
      requirements: [],
    },
    status: {
      providerID: `azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/${VM}`,
      conditions: [
        {
          type: ConditionTypes.launched,
          status: 'Unknown',
          reason: 'VMProvisioning',
          message: '',
          lastTransitionTime: startedAt,
        },
      ],
    },
  };
}

const launchedOf = (nodeClaim: NodeClaim | undefined): Condition | undefined =>
  nodeClaim?.status?.conditions?.find((c) => c.type === ConditionTypes.launched);

let fake: FakeLifecycle;
let app: AppFunctions;
beforeEach(() => {
  fake = fakeLifecycle();
  app = appFunctions(fake);
});

describe(covers(LaunchMonitorNames.pollVmCreation), () => {
  test('a creation still running answers InProgress with the launches in flight that pace the next poll', async () => {
    fake.launchesInFlight = async () => 7;

    expect(await app.value(LaunchMonitorNames.pollVmCreation, { vmName: VM, pollerState: 'p' })).toEqual({
      status: 'InProgress',
      inFlightLaunches: 7,
    });
  });

  test('a finished creation answers its outcome without counting the launches', async () => {
    const failure = {
      reason: 'InsufficientCapacityError',
      message: 'no',
      cloudCode: 'AllocationFailed',
      retryable: false,
    } as const;
    fake.cloud.creations.set(VM, { status: 'Failed', failure });
    let counted = 0;
    fake.launchesInFlight = async () => (counted += 1);

    expect(await app.value(LaunchMonitorNames.pollVmCreation, { vmName: VM })).toEqual({
      status: 'Failed',
      failure,
    });
    expect(counted).toBe(0);
  });

  test('a count that fails leaves the pace as it was: no inFlightLaunches, and no failure', async () => {
    fake.launchesInFlight = () => Promise.reject(new Error('API server unreachable'));

    expect(await app.value(LaunchMonitorNames.pollVmCreation, { vmName: VM })).toEqual({
      status: 'InProgress',
    });
  });
});

describe(covers(LaunchMonitorNames.recordLaunchSuccess), () => {
  test('writes Launched=True, the image and the capacity of the offering on the NodeClaim', async () => {
    fake.nodeClaims.seed(launching());
    fake.cloud.seedInstance('general-a', { imageID: 'gallery/ubuntu/1.2.3' });

    await app.value(LaunchMonitorNames.recordLaunchSuccess, monitor);

    const written = fake.nodeClaims.peek('general-a');
    expect(launchedOf(written)).toMatchObject({ status: 'True', reason: 'Launched' });
    expect(written?.status?.imageID).toBe('gallery/ubuntu/1.2.3');
    expect(written?.status?.capacity).toMatchObject({ cpu: '2' });
    expect(written?.status?.allocatable?.['cpu']).toBeDefined();
  });

  test('a NodeClaim recreated under the name is not written: the VM is the old one’s', async () => {
    fake.nodeClaims.seed(launching('uid-someone-else'));
    fake.cloud.seedInstance('general-a');

    await app.value(LaunchMonitorNames.recordLaunchSuccess, monitor);

    expect(fake.nodeClaims.writes).toEqual([]);
    expect(launchedOf(fake.nodeClaims.peek('general-a'))?.status).toBe('Unknown');
  });

  test('ARM answering 503 is a transient answer the monitor waits out, and nothing is written', async () => {
    fake.nodeClaims.seed(launching());
    fake.cloud.failNext('get', new FakeApiError(503, 'service unavailable'));

    expect(await app.call(LaunchMonitorNames.recordLaunchSuccess, monitor)).toEqual({
      transient: 'service unavailable',
    });
    expect(fake.nodeClaims.writes).toEqual([]);
  });
});

describe(covers(LaunchMonitorNames.recordLaunchFailure), () => {
  test('a classified failure: Launched=False with its reason, the offering blocked, VM and NodeClaim deleted', async () => {
    fake.nodeClaims.seed(launching());
    fake.cloud.seedInstance('general-a', { state: 'Failed' });

    const answer = await app.value(LaunchMonitorNames.recordLaunchFailure, {
      monitor,
      error: { code: 'ZonalAllocationFailed', message: 'no capacity in zone 1' },
      timedOut: false,
    });

    expect(answer).toBeNull();
    const claim = fake.nodeClaims.peek('general-a');
    expect(launchedOf(claim)).toMatchObject({ status: 'False', reason: 'ZonalAllocationFailure' });
    expect(fake.events.map((e) => [e.type, e.reason])).toContainEqual(['Warning', 'ZonalAllocationFailure']);
    expect(fake.unavailableOfferings.length).toBeGreaterThan(0);
    expect(fake.unavailableOfferings.every((u) => u.reason === 'ZonalAllocationFailure')).toBe(true);
    expect(fake.cloud.deleted).toEqual([VM]);
    // Deleted, held by its finalizer, and its termination started at once.
    expect(claim?.metadata.deletionTimestamp).toBeDefined();
    expect(app.orchestrations.started.map((s) => s.name)).toEqual([TerminationNames.orchestrationV2]);
  });

  test('a transient LRO failure hands the NodeClaim to a relaunch instead, deleting the VM first', async () => {
    fake.nodeClaims.seed(launching());
    fake.cloud.seedInstance('general-a', { state: 'Failed' });

    const answer = await app.value(LaunchMonitorNames.recordLaunchFailure, {
      monitor,
      error: { code: 'InternalExecutionError', message: 'try again' },
      timedOut: false,
    });

    expect(answer).toEqual({ relaunch: 'VmDeleting' });
    expect(launchedOf(fake.nodeClaims.peek('general-a'))).toMatchObject({
      status: 'Unknown',
      reason: 'LaunchRetrying',
    });
    expect(fake.cloud.deleted).toEqual([VM]);
    expect(fake.nodeClaims.peek('general-a')?.metadata.deletionTimestamp).toBeUndefined();
    expect(fake.unavailableOfferings).toEqual([]);
  });

  test('a NodeClaim gone meanwhile: the VM is still deleted, nothing else is written', async () => {
    fake.cloud.seedInstance('general-a', { state: 'Failed' });

    const answer = await app.value(LaunchMonitorNames.recordLaunchFailure, {
      monitor,
      error: { message: 'The VM was not created within 15 minutes' },
      timedOut: true,
    });

    expect(answer).toBeNull();
    expect(fake.cloud.deleted).toEqual([VM]);
    expect(fake.nodeClaims.writes).toEqual([]);
    expect(fake.events).toEqual([]);
    expect(app.orchestrations.started).toEqual([]);
  });
});

describe(covers(LaunchMonitorNames.orchestration), () => {
  const replay = (respond: Parameters<typeof sequential>[0]) =>
    replayOrchestration({
      name: LaunchMonitorNames.orchestration,
      handler: app.orchestration(LaunchMonitorNames.orchestration).handler,
      instanceId: 'launch-uid-general-a',
      input: { ...monitor, startedAt: FAKE_NOW.toISOString() },
      start: FAKE_NOW,
      respond: sequential(respond),
    });

  test('waits, polls with the poller state each poll handed on, and on Succeeded records it: Launched', async () => {
    const run = await replay((name, _input, call) => {
      if (name === LaunchMonitorNames.pollVmCreation)
        return {
          result:
            call < 3 ? { status: 'InProgress', pollerState: `poller-${call}` } : { status: 'Succeeded' },
        };
      if (name === LaunchMonitorNames.recordLaunchSuccess) return { result: null };
      return undefined;
    });

    expect(run.result).toMatchObject({ status: 'completed', output: { outcome: 'Launched', polls: 3 } });
    expect(run.answered.map((a) => [a.name, a.at.getTime() - FAKE_NOW.getTime()])).toEqual([
      ['timer', 5_000],
      [LaunchMonitorNames.pollVmCreation, 5_000],
      ['timer', 10_000],
      [LaunchMonitorNames.pollVmCreation, 10_000],
      ['timer', 15_000],
      [LaunchMonitorNames.pollVmCreation, 15_000],
      [LaunchMonitorNames.recordLaunchSuccess, 15_000],
    ]);
    const polls = run.answered.filter((a) => a.name === LaunchMonitorNames.pollVmCreation);
    expect(polls.map((p) => p.input)).toEqual([
      { vmName: VM, pollerState: 'poller-0' },
      { vmName: VM, pollerState: 'poller-1' },
      { vmName: VM, pollerState: 'poller-2' },
    ]);
  });

  test('a classified failure is recorded and ends the monitor Failed with its code', async () => {
    const error = { code: 'SkuNotAvailable', message: 'not available' };
    const run = await replay((name) => {
      if (name === LaunchMonitorNames.pollVmCreation) return { result: { status: 'Failed', error } };
      if (name === LaunchMonitorNames.recordLaunchFailure) return { result: null };
      return undefined;
    });

    expect(run.result).toMatchObject({
      status: 'completed',
      output: { outcome: 'Failed', polls: 1, code: 'SkuNotAvailable' },
    });
    const recorded = run.answered.find((a) => a.name === LaunchMonitorNames.recordLaunchFailure);
    expect(recorded?.input).toMatchObject({ error, timedOut: false, monitor: { vmName: VM } });
  });

  test('a relaunch whose VM is still deleting calls the failure activity again after the poll interval', async () => {
    const run = await replay((name, _input, call) => {
      if (name === LaunchMonitorNames.pollVmCreation)
        return { result: { status: 'Failed', error: { code: 'InternalExecutionError', message: 'x' } } };
      if (name === LaunchMonitorNames.recordLaunchFailure)
        return { result: { relaunch: call < 3 ? 'VmDeleting' : 'HandedOff' } };
      return undefined;
    });

    expect(run.result).toMatchObject({
      status: 'completed',
      output: { outcome: 'Relaunching', polls: 1, code: 'InternalExecutionError' },
    });
    const failures = run.answered.filter((a) => a.name === LaunchMonitorNames.recordLaunchFailure);
    expect(failures.map((f) => f.at.getTime() - FAKE_NOW.getTime())).toEqual([5_000, 10_000, 15_000]);
  });

  test('a transient answer of the poll is waited out on a timer and the same poll called again', async () => {
    const run = await replay((name, _input, call) => {
      if (name !== LaunchMonitorNames.pollVmCreation || call > 3) return undefined;
      return call === 1 ? transientAnswer('ECONNRESET') : { result: { status: 'InProgress' } };
    });

    // The retry 1 s after the transient answer, then the normal 5 s pace; the fourth poll left pending.
    expect(run.result.status).toBe('running');
    const polls = run.answered.filter((a) => a.name === LaunchMonitorNames.pollVmCreation);
    expect(polls.map((p) => p.at.getTime() - FAKE_NOW.getTime())).toEqual([5_000, 6_000, 11_000]);
    expect(polls[1]?.input).toEqual(polls[0]?.input);
    expect(run.pending.map((p) => p.action.kind)).toEqual(['activity']);
  });

  test('past the deadline the monitor records a timeout and ends TimedOut', async () => {
    const run = await replayOrchestration({
      name: LaunchMonitorNames.orchestration,
      handler: app.orchestration(LaunchMonitorNames.orchestration).handler,
      instanceId: 'launch-uid-general-a',
      input: { ...monitor, startedAt: FAKE_NOW.toISOString(), deadlineMinutes: 1 },
      start: FAKE_NOW,
      respond: sequential((name) => {
        if (name === LaunchMonitorNames.pollVmCreation) return { result: { status: 'InProgress' } };
        if (name === LaunchMonitorNames.recordLaunchFailure) return { result: null };
        return undefined;
      }),
    });

    expect(run.result).toMatchObject({ status: 'completed', output: { outcome: 'TimedOut', polls: 12 } });
    const failure = run.answered.at(-1);
    expect(failure?.name).toBe(LaunchMonitorNames.recordLaunchFailure);
    expect(failure?.at.getTime()).toBe(FAKE_NOW.getTime() + 60_000);
    expect(failure?.input).toMatchObject({ timedOut: true });
  });
});

/** Sleeps nothing; counts the waits it was asked for as the time spent. */
function countingTimer(): ActivityTimer & { slept: number[] } {
  const slept: number[] = [];
  return {
    slept,
    sleep: async (ms) => {
      slept.push(ms);
    },
    elapsedMs: () => slept.reduce((sum, ms) => sum + ms, 0),
  };
}

describe(covers(LaunchMonitorNames.awaitVmCreation), () => {
  const deadline = new Date(FAKE_NOW.getTime() + 10 * 60_000).toISOString();
  const waiting = {
    monitor,
    pollerState: 'poller-0',
    firstWaitMs: 5_000,
    inFlightLaunches: 1,
    polls: 0,
    spreadKey: 'launch-uid-general-a',
    deadline,
    windowSeconds: 45,
  };
  /** pollLaunch answers these in turn, recording the poller state each poll was given. */
  function creationAnswers(...answers: LaunchProgress[]): (string | undefined)[] {
    const given: (string | undefined)[] = [];
    fake.cloud.pollLaunch = async (_vmName: string, pollerState?: string) => {
      given.push(pollerState);
      return answers.shift() ?? { status: 'InProgress' };
    };
    return given;
  }

  test('polls at the pace until Succeeded and records Launched=True within that call', async () => {
    fake.nodeClaims.seed(launching());
    fake.cloud.seedInstance('general-a', { imageID: 'gallery/ubuntu/1.2.3' });
    const given = creationAnswers(
      { status: 'InProgress', pollerState: 'poller-1' },
      { status: 'InProgress', pollerState: 'poller-2', retryAfterSeconds: 10 },
      { status: 'Succeeded' },
    );
    const timer = countingTimer();

    expect(await awaitVmCreation(fake.deps, waiting, timer)).toEqual({ status: 'Launched', polls: 3 });
    // The first wait as planned, then the minimum interval, then ARM's Retry-After.
    expect(timer.slept).toEqual([5_000, 5_000, 10_000]);
    expect(given).toEqual(['poller-0', 'poller-1', 'poller-2']);
    expect(launchedOf(fake.nodeClaims.peek('general-a'))).toMatchObject({
      status: 'True',
      reason: 'Launched',
    });
  });

  test('a failure is answered at the poll that sees it, classified, and nothing is recorded', async () => {
    fake.nodeClaims.seed(launching());
    const failure = {
      reason: 'ZonalAllocationFailure',
      message: 'no capacity in zone 1',
      cloudCode: 'ZonalAllocationFailed',
      retryable: false,
    } as const;
    creationAnswers({ status: 'InProgress' }, { status: 'Failed', failure });
    const timer = countingTimer();

    expect(await awaitVmCreation(fake.deps, { ...waiting, polls: 4 }, timer)).toEqual({
      status: 'Failed',
      failure,
      polls: 6,
    });
    expect(timer.slept).toEqual([5_000, 5_000]);
    expect(launchedOf(fake.nodeClaims.peek('general-a'))?.status).toBe('Unknown');
  });

  test('still running when the next wait would leave the window: answers where it stands', async () => {
    fake.launchesInFlight = async () => 3;
    creationAnswers({ status: 'InProgress', pollerState: 'poller-9' });
    const timer = countingTimer();

    expect(await awaitVmCreation(fake.deps, waiting, timer)).toEqual({
      status: 'InProgress',
      polls: 9,
      pollerState: 'poller-9',
      inFlightLaunches: 3,
      pacing: { seconds: 5, spread: false },
    });
    // 45 s of window: the first wait and eight more of 5 s, nine polls.
    expect(timer.slept).toHaveLength(9);
    expect(timer.elapsedMs()).toBe(45_000);
  });

  test('no wait goes past the deadline, and a poll at or after it is the call’s last', async () => {
    creationAnswers();
    const soon = new Date(FAKE_NOW.getTime() + 3_000).toISOString();
    const timer = countingTimer();

    await awaitVmCreation(fake.deps, { ...waiting, firstWaitMs: 0, deadline: soon }, timer);
    expect(timer.slept[0]).toBe(3_000);

    const passed = countingTimer();
    expect(
      await awaitVmCreation(
        fake.deps,
        { ...waiting, firstWaitMs: 0, deadline: FAKE_NOW.toISOString() },
        passed,
      ),
    ).toMatchObject({ status: 'InProgress', polls: 1 });
    expect(passed.slept).toEqual([]);
  });

  test('registered: ARM answering 503 is a transient answer the monitor waits out', async () => {
    fake.nodeClaims.seed(launching());
    fake.cloud.pollLaunch = () => Promise.reject(new FakeApiError(503, 'service unavailable'));

    expect(await app.call(LaunchMonitorNames.awaitVmCreation, { ...waiting, firstWaitMs: 0 })).toEqual({
      transient: 'service unavailable',
    });
  });
});

describe(covers(LaunchMonitorNames.orchestrationV2), () => {
  const replay = (respond: Parameters<typeof sequential>[0], overrides: object = {}) =>
    replayOrchestration({
      name: LaunchMonitorNames.orchestrationV2,
      handler: app.orchestration(LaunchMonitorNames.orchestrationV2).handler,
      instanceId: 'launch-uid-general-a',
      input: { ...monitor, startedAt: FAKE_NOW.toISOString(), ...overrides },
      start: FAKE_NOW,
      respond: sequential(respond),
    });
  const inProgress = (polls: number, pollerState: string) => ({
    status: 'InProgress',
    polls,
    pollerState,
    inFlightLaunches: 1,
    pacing: { seconds: 5, spread: false },
  });

  test('hands the waiting to the activity, calling it again where it stood until it answers Launched', async () => {
    const run = await replay((name, _input, call) => {
      if (name !== LaunchMonitorNames.awaitVmCreation) return undefined;
      return { result: call === 1 ? inProgress(9, 'poller-9') : { status: 'Launched', polls: 12 } };
    });

    expect(run.result).toMatchObject({ status: 'completed', output: { outcome: 'Launched', polls: 12 } });
    expect(run.answered.map((a) => a.name)).toEqual([
      LaunchMonitorNames.awaitVmCreation,
      LaunchMonitorNames.awaitVmCreation,
    ]);
    const deadline = new Date(FAKE_NOW.getTime() + 15 * 60_000).toISOString();
    expect(run.answered.map((a) => a.input)).toEqual([
      {
        monitor: { ...monitor, startedAt: FAKE_NOW.toISOString() },
        pollerState: 'poller-0',
        firstWaitMs: 5_000,
        inFlightLaunches: 1,
        polls: 0,
        spreadKey: 'launch-uid-general-a',
        deadline,
        windowSeconds: ACTIVITY_WAIT_WINDOW_SECONDS,
      },
      expect.objectContaining({ pollerState: 'poller-9', firstWaitMs: 5_000, polls: 9 }),
    ]);
  });

  test('a failure is recorded by the failure activity and ends the monitor Failed with its code', async () => {
    const failure = {
      reason: 'SkuNotAvailable',
      message: 'no',
      cloudCode: 'SkuNotAvailable',
      retryable: false,
    };
    const run = await replay((name) => {
      if (name === LaunchMonitorNames.awaitVmCreation)
        return { result: { status: 'Failed', failure, polls: 2 } };
      if (name === LaunchMonitorNames.recordLaunchFailure) return { result: null };
      return undefined;
    });

    expect(run.result).toMatchObject({
      status: 'completed',
      output: { outcome: 'Failed', polls: 2, code: 'SkuNotAvailable' },
    });
    const recorded = run.answered.find((a) => a.name === LaunchMonitorNames.recordLaunchFailure);
    expect(recorded?.input).toMatchObject({ failure, timedOut: false, monitor: { vmName: VM } });
  });

  test('a relaunch whose VM is still deleting calls the failure activity again after the poll interval', async () => {
    const failure = {
      reason: 'LaunchFailed',
      message: 'x',
      cloudCode: 'InternalExecutionError',
      retryable: true,
    };
    const run = await replay((name, _input, call) => {
      if (name === LaunchMonitorNames.awaitVmCreation)
        return { result: { status: 'Failed', failure, polls: 1 } };
      if (name === LaunchMonitorNames.recordLaunchFailure)
        return { result: { relaunch: call < 3 ? 'VmDeleting' : 'HandedOff' } };
      return undefined;
    });

    expect(run.result).toMatchObject({
      status: 'completed',
      output: { outcome: 'Relaunching', polls: 1, code: 'InternalExecutionError' },
    });
    const failures = run.answered.filter((a) => a.name === LaunchMonitorNames.recordLaunchFailure);
    expect(failures.map((f) => f.at.getTime() - FAKE_NOW.getTime())).toEqual([0, 5_000, 10_000]);
  });

  test('a wait longer than an activity may hold (ARM throttling) goes on a durable timer', async () => {
    const run = await replay((name, _input, call) => {
      if (name !== LaunchMonitorNames.awaitVmCreation) return undefined;
      if (call === 1)
        return { result: { ...inProgress(1, 'poller-1'), pacing: { seconds: 60, spread: false } } };
      return { result: { status: 'Launched', polls: 2 } };
    });

    expect(run.result).toMatchObject({ status: 'completed', output: { outcome: 'Launched', polls: 2 } });
    expect(run.answered.map((a) => [a.name, a.at.getTime() - FAKE_NOW.getTime()])).toEqual([
      [LaunchMonitorNames.awaitVmCreation, 0],
      ['timer', 60_000],
      [LaunchMonitorNames.awaitVmCreation, 60_000],
    ]);
    expect(run.answered[2]?.input).toMatchObject({ firstWaitMs: 0, polls: 1 });
  });

  test('past the deadline the monitor records a timeout and ends TimedOut', async () => {
    const run = await replay(
      (name) => {
        if (name === LaunchMonitorNames.awaitVmCreation) return { result: inProgress(12, 'poller-12') };
        if (name === LaunchMonitorNames.recordLaunchFailure) return { result: null };
        return undefined;
      },
      { startedAt: new Date(FAKE_NOW.getTime() - 20 * 60_000).toISOString() },
    );

    expect(run.result).toMatchObject({ status: 'completed', output: { outcome: 'TimedOut', polls: 12 } });
    expect(run.answered[0]?.input).toMatchObject({ firstWaitMs: 0 });
    expect(run.answered.at(-1)).toMatchObject({
      name: LaunchMonitorNames.recordLaunchFailure,
      input: { timedOut: true },
    });
  });

  test('an activity call budget spent continues as new, carrying polls, poller state and pace', async () => {
    const run = await replay((name, _input, call) =>
      name === LaunchMonitorNames.awaitVmCreation
        ? { result: inProgress(call * 9, `poller-${call}`) }
        : undefined,
    );

    expect(run.result.status).toBe('continuedAsNew');
    const next = run.result.status === 'continuedAsNew' ? JSON.parse(run.result.input ?? '{}') : {};
    expect(next.continued).toEqual({
      polls: 900,
      pollerState: 'poller-100',
      inFlightLaunches: 1,
      pacing: { seconds: 5, spread: false },
      continuations: 1,
    });
  });
});
