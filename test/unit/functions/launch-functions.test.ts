// The launch workflow's functions as the app registers them (functions/launch.ts): each activity taken
// from appDefinitions by its name and run on the in-memory fakes, and the launch monitor replayed
// against histories this test writes, asserting what it schedules next and how it ends. The monitor's
// history bound over continue-as-new is launch-monitor-history.test.ts; the activities against the ARM
// emulator are test/integration/launch*.test.ts.
import { beforeEach, describe, expect, test } from 'vitest';
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
    expect(app.orchestrations.started.map((s) => s.name)).toEqual([TerminationNames.orchestration]);
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
