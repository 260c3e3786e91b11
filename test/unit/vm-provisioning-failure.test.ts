import { describe, expect, it } from 'vitest';
import { classifyLaunchError } from '../../shared/cloudprovider/azure/decisions/launch-errors.js';
import { provisioningFailureOf } from '../../shared/cloudprovider/azure/decisions/vm-provisioning-failure.js';

describe("a failed VM's instance view", () => {
  it('gives the failed operation code and message', () => {
    const failure = provisioningFailureOf([
      {
        code: 'ProvisioningState/failed/ZonalAllocationFailed',
        message:
          'Allocation failed. We do not have sufficient capacity for the requested VM size in this zone.',
      },
    ]);
    expect(failure).toEqual({
      code: 'ZonalAllocationFailed',
      message:
        'Allocation failed. We do not have sufficient capacity for the requested VM size in this zone.',
    });
    // …which the launch classifies as it would the LRO's error.
    expect(classifyLaunchError({ message: failure?.message ?? '', code: failure?.code }).reason).toBe(
      'ZonalAllocationFailure',
    );
  });

  it('finds the provisioning status among others, whatever its case', () => {
    expect(
      provisioningFailureOf([
        { code: 'PowerState/stopped' },
        { code: 'provisioningstate/Failed/AllocationFailed', message: 'Allocation failed.' },
      ]),
    ).toEqual({ code: 'AllocationFailed', message: 'Allocation failed.' });
  });

  it('names no code when the status names none', () => {
    expect(provisioningFailureOf([{ code: 'ProvisioningState/failed', message: 'failed' }])).toEqual({
      message: 'failed',
    });
  });

  it('is undefined when nothing failed or there is no instance view', () => {
    expect(
      provisioningFailureOf([{ code: 'ProvisioningState/succeeded' }, { code: 'PowerState/running' }]),
    ).toBeUndefined();
    expect(provisioningFailureOf([])).toBeUndefined();
    expect(provisioningFailureOf(undefined)).toBeUndefined();
  });
});
