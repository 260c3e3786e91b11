// The first-attempt launch figure of the day: which VM PUTs count as attempts (429s and redeliveries do
// not), which came up, and the time lost to the ones that failed, on a hand-made request log.
import { describe, expect, test } from 'vitest';
import type { ArmRequest, VmFailure } from '../../../local/scenarios/day/invariants/history.js';
import { launchAttemptFigures } from '../../../local/scenarios/day/launch-attempts.js';

const put = (at: number, vmName: string, status: number, errorCode?: string): ArmRequest => ({
  at,
  method: 'PUT',
  kind: 'putVm',
  vmName,
  status,
  errorCode,
  throttled: status === 429,
});
const failed = (at: number, vmName: string, code: string): VmFailure => ({ at, vmName, code });

describe('first-attempt launch success', () => {
  test('an accepted PUT whose creation never failed came up; a refusal and a Failed creation did not', () => {
    const figures = launchAttemptFigures(
      [
        put(0, 'a', 201),
        put(1_000, 'b', 201),
        put(2_000, 'c', 409, 'OperationNotAllowed'),
        put(3_000, 'd', 201),
      ],
      [failed(31_000, 'b', 'ZonalAllocationFailed')],
    );

    expect(figures).toEqual({
      attempts: 4,
      cameUp: 2,
      firstAttemptSuccessRate: 0.5,
      secondsLostToFailedAttempts: 30,
      failedByCode: { ZonalAllocationFailed: 1, OperationNotAllowed: 1 },
    });
  });

  test('a throttled PUT sent again, and a PUT redelivered while its creation is open, are one attempt', () => {
    const figures = launchAttemptFigures(
      [
        put(0, 'a', 429),
        put(5_000, 'a', 201),
        put(6_000, 'a', 200),
        put(6_500, 'a', 412, 'PreconditionFailed'),
        put(7_000, 'x', 201, undefined),
      ],
      [],
    );

    expect(figures.attempts).toBe(2);
    expect(figures.cameUp).toBe(2);
    expect(figures.firstAttemptSuccessRate).toBe(1);
  });

  test('a name launched again after its creation failed is a second attempt, judged on its own', () => {
    const figures = launchAttemptFigures(
      [put(0, 'a', 201), put(20_000, 'a', 201)],
      [failed(10_000, 'a', 'AllocationFailed')],
    );

    expect(figures.attempts).toBe(2);
    expect(figures.cameUp).toBe(1);
    expect(figures.secondsLostToFailedAttempts).toBe(10);
  });

  test('a failure before any PUT of its name, or of another request kind, counts nothing', () => {
    const figures = launchAttemptFigures(
      [{ ...put(0, 'a', 201), kind: 'deleteVm', method: 'DELETE' }],
      [failed(5_000, 'z', 'AllocationFailed')],
    );

    expect(figures).toMatchObject({ attempts: 0, cameUp: 0, firstAttemptSuccessRate: 1 });
  });
});
