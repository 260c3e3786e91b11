import { describe, expect, test } from 'vitest';
import { classifyLaunchError } from '../../shared/cloudprovider/azure/decisions/launch-errors.js';
import {
  decideLroFailure,
  LAUNCH_RETRIES_ANNOTATION,
  LAUNCH_RETRYING_REASON,
  launchRetriesOf,
  MAX_LAUNCH_RETRIES,
  relaunchStage,
} from '../../shared/decisions/launch-retry.js';
import {
  launchMonitorInstanceId,
  launchMonitorInstanceIds,
} from '../../shared/lifecycle/launch/launch-monitor.js';

// LRO failure texts as the SDK's poller reports them (no status code: the code is in the text).
const lro = (code: string, message: string) => ({
  message: `The long-running operation has failed. ${code}. ${message}`,
});

describe('decideLroFailure', () => {
  test.each([
    {
      name: 'InternalExecutionError in the LRO',
      error: lro('InternalExecutionError', 'An internal execution error occurred.'),
      retries: 0,
      action: 'relaunch',
    },
    {
      name: 'InternalOperationError, second retry',
      error: lro('InternalOperationError', 'try again'),
      retries: 1,
      action: 'relaunch',
    },
    {
      name: 'ServiceUnavailable past the bound',
      error: lro('ServiceUnavailable', 'busy'),
      retries: MAX_LAUNCH_RETRIES,
      action: 'fail',
    },
    {
      name: 'AllocationFailed (remembered, not retried here)',
      error: lro('AllocationFailed', 'no capacity'),
      retries: 0,
      action: 'fail',
    },
    { name: 'an unknown code', error: lro('SomethingElse', 'no'), retries: 0, action: 'fail' },
  ])('$name → $action', ({ error, retries, action }) => {
    const decision = decideLroFailure({
      failure: classifyLaunchError(error),
      timedOut: false,
      retriesSoFar: retries,
      maxRetries: MAX_LAUNCH_RETRIES,
    });
    expect(decision.action).toBe(action);
  });

  test('a timeout is never relaunched, even if the error would be', () => {
    const failure = classifyLaunchError(lro('InternalExecutionError', 'x'));
    expect(decideLroFailure({ failure, timedOut: true, retriesSoFar: 0, maxRetries: 2 })).toEqual({
      action: 'fail',
    });
  });

  test('the message names the cause, that a retry is under way, and which one', () => {
    const failure = classifyLaunchError(
      lro('InternalExecutionError', 'An internal execution error occurred.'),
    );
    expect(decideLroFailure({ failure, timedOut: false, retriesSoFar: 0, maxRetries: 2 })).toEqual({
      action: 'relaunch',
      retry: 1,
      message:
        'InternalExecutionError: An internal execution error occurred. (transient); deleting the failed VM and launching again, retry 1 of 2',
    });
  });
});

describe('launchRetriesOf', () => {
  test.each([
    { value: undefined, retries: 0 },
    { value: '0', retries: 0 },
    { value: '2', retries: 2 },
    { value: '-1', retries: 0 },
    { value: 'two', retries: 0 },
    { value: '1.5', retries: 0 },
  ])('$value → $retries', ({ value, retries }) => {
    expect(launchRetriesOf(value === undefined ? {} : { [LAUNCH_RETRIES_ANNOTATION]: value })).toBe(retries);
  });
});

describe('relaunchStage (as seen by the monitor of relaunch 1)', () => {
  const providerID = 'azure:///vm';
  test.each([
    {
      name: 'not started',
      state: { retries: 1, providerID, launchedReason: 'VMProvisioning' },
      stage: 'hand-off',
    },
    {
      name: 'marked, VM deleting',
      state: { retries: 1, providerID, launchedReason: LAUNCH_RETRYING_REASON },
      stage: 'hand-off',
    },
    {
      name: 'counted, providerID still set',
      state: { retries: 2, providerID, launchedReason: LAUNCH_RETRYING_REASON },
      stage: 'release',
    },
    { name: 'released', state: { retries: 2, launchedReason: LAUNCH_RETRYING_REASON }, stage: 'done' },
    {
      name: 'launched again (new providerID)',
      state: { retries: 2, providerID, launchedReason: 'VMProvisioning' },
      stage: 'done',
    },
    {
      name: 'a later relaunch',
      state: { retries: 3, providerID, launchedReason: LAUNCH_RETRYING_REASON },
      stage: 'done',
    },
    { name: 'being deleted', state: { retries: 1, providerID, deleting: true }, stage: 'done' },
  ])('$name → $stage', ({ state, stage }) => {
    expect(relaunchStage({ deleting: false, ...state }, 1)).toBe(stage);
  });
});

test('each relaunch has its own monitor; the first keeps the plain ID', () => {
  expect(launchMonitorInstanceId('u')).toBe('launch-u');
  expect(launchMonitorInstanceId('u', 2)).toBe('launch-u-retry-2');
  expect(launchMonitorInstanceIds('u')).toEqual(['launch-u', 'launch-u-retry-1', 'launch-u-retry-2']);
});
