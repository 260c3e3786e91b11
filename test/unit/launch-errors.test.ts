import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SERVER_ERROR_RETRY_SECONDS,
  DEFAULT_THROTTLE_RETRY_SECONDS,
  classifyLaunchError,
  missingPermissions,
  parseLroFailureMessage,
  type LaunchErrorInput,
  type LaunchFailure,
} from '../../shared/cloudprovider/azure/decisions/launch-errors.js';
import { launchTimeoutFailure } from '../../shared/cloudprovider/types.js';

const lro = (code: string, message: string): LaunchErrorInput => ({
  message: `The long-running operation has failed. ${code}. ${message}`,
});

const familyQuota =
  'Operation could not be completed as it results in exceeding approved standardDSv5Family Cores quota. Additional details - Deployment Model: Resource Manager, Location: westus2, Current Limit: 10, Current Usage: 8, Additional Required: 4, (Minimum) New Limit Required: 12.';
const regionalQuota =
  'Operation could not be completed as it results in exceeding approved Total Regional Cores quota. Additional details - Location: westus2, Current Limit: 100, Current Usage: 98.';
const lowPriorityQuota =
  'Operation could not be completed as it results in exceeding approved Low Priority Cores quota. Additional details - Location: westus2, Current Limit: 10.';

describe('a network interface still reserved for a deleted VM', () => {
  const reserved =
    'Nic(s) in request is reserved for another Virtual Machine for 180 seconds. Please provide another nic(s) or retry after 180 seconds. Reserved VM: /subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/aks-general-a';

  it('is retried after the wait Azure states, on the PUT as in the LRO, and no offering is avoided', () => {
    for (const input of [
      { code: 'NicReservedForAnotherVm', statusCode: 400, message: reserved },
      lro('NicReservedForAnotherVm', reserved),
    ]) {
      expect(classifyLaunchError(input)).toEqual({
        reason: 'LaunchFailed',
        cloudCode: 'NicReservedForAnotherVm',
        message: reserved,
        retryable: true,
        retryAfterSeconds: 180,
      });
    }
  });

  it('waits the stated time when Azure states another, and 180 s when it states none', () => {
    expect(
      classifyLaunchError({
        code: 'NicReservedForAnotherVm',
        message: 'reserved for another VM for 300 seconds.',
      }).retryAfterSeconds,
    ).toBe(300);
    expect(
      classifyLaunchError({ code: 'NicReservedForAnotherVm', message: 'Nic(s) in request is reserved.' })
        .retryAfterSeconds,
    ).toBe(180);
  });
});

describe('classifyLaunchError', () => {
  it.each<[string, LaunchErrorInput, LaunchFailure]>([
    [
      'SKU not available on the PUT',
      {
        code: 'SkuNotAvailable',
        statusCode: 409,
        message: "The requested VM size Standard_D2s_v5 is currently not available in location 'westus2'.",
      },
      {
        reason: 'SKUNotAvailable',
        cloudCode: 'SkuNotAvailable',
        message: "The requested VM size Standard_D2s_v5 is currently not available in location 'westus2'.",
        retryable: false,
        unavailable: expect.anything(),
      },
    ],
    [
      'allocation failure from the LRO',
      lro(
        'AllocationFailed',
        'Allocation failed. We do not have sufficient capacity for the requested VM size in this region.',
      ),
      {
        reason: 'AllocationFailure',
        cloudCode: 'AllocationFailed',
        message:
          'Allocation failed. We do not have sufficient capacity for the requested VM size in this region.',
        retryable: false,
        unavailable: expect.anything(),
      },
    ],
    [
      'zonal allocation failure from the LRO',
      lro('ZonalAllocationFailed', 'Allocation failed. We do not have sufficient capacity in this zone.'),
      {
        reason: 'ZonalAllocationFailure',
        cloudCode: 'ZonalAllocationFailed',
        message: 'Allocation failed. We do not have sufficient capacity in this zone.',
        retryable: false,
        unavailable: expect.anything(),
      },
    ],
    [
      'overconstrained allocation',
      lro(
        'OverconstrainedAllocationRequest',
        'Allocation failed. VM(s) with the following constraints cannot be allocated.',
      ),
      {
        reason: 'OverconstrainedAllocationFailure',
        cloudCode: 'OverconstrainedAllocationRequest',
        message: 'Allocation failed. VM(s) with the following constraints cannot be allocated.',
        retryable: false,
        unavailable: expect.anything(),
      },
    ],
    [
      'overconstrained zonal allocation',
      lro('OverconstrainedZonalAllocationRequest', 'Allocation failed in this zone.'),
      {
        reason: 'OverconstrainedZonalAllocationFailure',
        cloudCode: 'OverconstrainedZonalAllocationRequest',
        message: 'Allocation failed in this zone.',
        retryable: false,
        unavailable: expect.anything(),
      },
    ],
    [
      'family quota on the PUT',
      { code: 'OperationNotAllowed', statusCode: 409, message: familyQuota },
      {
        reason: 'SubscriptionQuotaReached',
        cloudCode: 'OperationNotAllowed',
        message: familyQuota,
        retryable: false,
        unavailable: expect.anything(),
      },
    ],
    [
      'regional quota on the PUT',
      { code: 'OperationNotAllowed', statusCode: 409, message: regionalQuota },
      {
        reason: 'SubscriptionQuotaReached',
        cloudCode: 'OperationNotAllowed',
        message: regionalQuota,
        retryable: false,
        unavailable: expect.anything(),
      },
    ],
    [
      'low-priority quota with the newer QuotaExceeded code',
      { code: 'QuotaExceeded', statusCode: 409, message: lowPriorityQuota },
      {
        reason: 'SubscriptionQuotaReached',
        cloudCode: 'QuotaExceeded',
        message: lowPriorityQuota,
        retryable: false,
        unavailable: expect.anything(),
      },
    ],
    [
      'quota reported through the LRO',
      lro('OperationNotAllowed', regionalQuota),
      {
        reason: 'SubscriptionQuotaReached',
        cloudCode: 'OperationNotAllowed',
        message: regionalQuota,
        retryable: false,
        unavailable: expect.anything(),
      },
    ],
    [
      'OperationNotAllowed without quota text is a plain failure',
      {
        code: 'OperationNotAllowed',
        statusCode: 409,
        message: 'The operation is not allowed while the VM is being deleted.',
      },
      {
        reason: 'LaunchFailed',
        cloudCode: 'OperationNotAllowed',
        message: 'The operation is not allowed while the VM is being deleted.',
        retryable: false,
      },
    ],
    [
      'throttling honours Retry-After',
      {
        code: 'TooManyRequests',
        statusCode: 429,
        message: 'The request is being throttled.',
        retryAfterSeconds: 42,
      },
      {
        reason: 'Throttled',
        cloudCode: 'TooManyRequests',
        message: 'The request is being throttled.',
        retryable: true,
        retryAfterSeconds: 42,
      },
    ],
    [
      'throttling without Retry-After uses the default',
      { statusCode: 429, message: 'Too many requests' },
      {
        reason: 'Throttled',
        message: 'Too many requests',
        retryable: true,
        retryAfterSeconds: DEFAULT_THROTTLE_RETRY_SECONDS,
      },
    ],
    [
      'server errors are retryable',
      { code: 'InternalServerError', statusCode: 503, message: 'Service unavailable' },
      {
        reason: 'LaunchFailed',
        cloudCode: 'InternalServerError',
        message: 'Service unavailable',
        retryable: true,
        retryAfterSeconds: DEFAULT_SERVER_ERROR_RETRY_SECONDS,
      },
    ],
    [
      'OS provisioning timeout from the LRO',
      lro('OSProvisioningTimedOut', 'OS Provisioning for VM did not finish in the allotted time.'),
      {
        reason: 'LaunchTimeout',
        cloudCode: 'OSProvisioningTimedOut',
        message: 'OS Provisioning for VM did not finish in the allotted time.',
        retryable: false,
      },
    ],
    [
      'unknown LRO failure',
      lro('InvalidParameter', 'The value of parameter imageReference is invalid.'),
      {
        reason: 'LaunchFailed',
        cloudCode: 'InvalidParameter',
        message: 'The value of parameter imageReference is invalid.',
        retryable: false,
      },
    ],
    [
      'a network error with no code at all',
      { message: 'socket hang up' },
      { reason: 'LaunchFailed', message: 'socket hang up', retryable: false },
    ],
    [
      'bad request is not retried',
      { code: 'InvalidParameter', statusCode: 400, message: 'bad' },
      { reason: 'LaunchFailed', cloudCode: 'InvalidParameter', message: 'bad', retryable: false },
    ],
  ])('%s', (_name, error, expected) => {
    expect(classifyLaunchError(error)).toEqual(expected);
  });

  it('classifies a real Error thrown by the LRO poller', () => {
    const thrown = new Error(
      'The long-running operation has failed. ZonalAllocationFailed. Allocation failed.\nPlease retry later.',
    );
    expect(classifyLaunchError({ message: thrown.message })).toMatchObject({
      reason: 'ZonalAllocationFailure',
      message: 'Allocation failed.\nPlease retry later.',
    });
  });
});

describe('authorization failures', () => {
  const nsg =
    '/subscriptions/s/resourceGroups/MC_rg/providers/Microsoft.Network/networkSecurityGroups/aks-agentpool-nsg';
  const linked =
    "The client 'app' with object id 'app' has permission to perform action 'Microsoft.Compute/virtualMachines/write' on scope '/subscriptions/s/resourceGroups/MC_rg/providers/Microsoft.Compute/virtualMachines/aks-x'; however, it does not have permission to perform action(s) " +
    `'Microsoft.Network/networkSecurityGroups/join/action' on the linked scope(s) '${nsg}' (respectively) or the linked scope(s) are invalid.`;

  it('LinkedAuthorizationFailed: AuthorizationFailed, not retried, nothing marked unavailable, the action and scope named first', () => {
    const failure = classifyLaunchError({
      code: 'LinkedAuthorizationFailed',
      statusCode: 403,
      message: linked,
    });
    expect(failure).toMatchObject({
      reason: 'AuthorizationFailed',
      cloudCode: 'LinkedAuthorizationFailed',
      retryable: false,
      failsEveryLaunch: true,
    });
    expect(failure.unavailable).toBeUndefined();
    expect(failure.message).toMatch(
      new RegExp(
        `^the Function App identity lacks Microsoft\\.Network/networkSecurityGroups/join/action on ${nsg.replace(/[.]/g, '\\.')} `,
      ),
    );
  });

  it('only a missing permission fails every launch; a capacity or quota failure is one offering’s', () => {
    for (const code of ['ZonalAllocationFailed', 'SkuNotAvailable', 'OperationNotAllowed'])
      expect(classifyLaunchError({ code, statusCode: 409, message: 'x' }).failsEveryLaunch).toBeUndefined();
    expect(
      classifyLaunchError({ code: 'AuthorizationFailed', statusCode: 403, message: 'x' }).failsEveryLaunch,
    ).toBe(true);
  });

  it('AuthorizationFailed on the VM itself names that action and scope', () => {
    const message =
      "The client 'app' with object id 'app' does not have authorization to perform action 'Microsoft.Compute/virtualMachines/write' over scope '/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/aks-x' or the scope is invalid. If access was recently granted, please refresh your credentials.";
    expect(missingPermissions(message)).toEqual([
      {
        action: 'Microsoft.Compute/virtualMachines/write',
        scope: '/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/aks-x',
      },
    ]);
    expect(classifyLaunchError({ code: 'AuthorizationFailed', statusCode: 403, message }).reason).toBe(
      'AuthorizationFailed',
    );
  });

  it('pairs several linked actions with their scopes, respectively', () => {
    const message =
      "…does not have permission to perform action(s) 'A/join/action,B/assign/action' on the linked scope(s) '/x,/y' (respectively)…";
    expect(missingPermissions(message)).toEqual([
      { action: 'A/join/action', scope: '/x' },
      { action: 'B/assign/action', scope: '/y' },
    ]);
  });
});

describe('parseLroFailureMessage', () => {
  it.each([
    [
      'The long-running operation has failed. AllocationFailed. No capacity.',
      { code: 'AllocationFailed', message: 'No capacity.' },
    ],
    ['The long-running operation has failed. Conflict. ', { code: 'Conflict', message: '' }],
    ['Something else entirely', undefined],
  ])('%s', (text, expected) => {
    expect(parseLroFailureMessage(text)).toEqual(expected);
  });
});

describe('launchTimeoutFailure', () => {
  it('reports the deadline', () => {
    expect(launchTimeoutFailure(900)).toEqual({
      reason: 'LaunchTimeout',
      message: 'the VM was not provisioned within 900s',
      retryable: false,
    });
  });
});
