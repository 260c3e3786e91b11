import { describe, expect, it } from 'vitest';
import { backoffDelay, validateBackoff } from '../../bridge/backoff.js';

const policy = { initialMs: 500, maxMs: 30_000, factor: 2, jitter: 0.2 };

describe('backoffDelay', () => {
  it('doubles from the initial delay and stops at the maximum', () => {
    const noJitter = () => 0;
    expect([1, 2, 3, 4, 5, 6, 7, 8, 20].map((attempt) => backoffDelay(attempt, policy, noJitter))).toEqual([
      500, 1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000,
    ]);
  });

  it('takes at most the jitter fraction off the delay', () => {
    expect(backoffDelay(3, policy, () => 0.999_999)).toBe(1_600);
    expect(backoffDelay(3, policy, () => 0.5)).toBe(1_800);
    expect(backoffDelay(100, policy, () => 0.5)).toBe(27_000);
  });

  it('treats attempt 0 like the first attempt', () => {
    expect(backoffDelay(0, policy, () => 0)).toBe(500);
  });
});

describe('validateBackoff', () => {
  it('rejects policies that would not back off', () => {
    expect(() => validateBackoff({ ...policy, initialMs: 0 })).toThrow(/initialMs/);
    expect(() => validateBackoff({ ...policy, maxMs: 100 })).toThrow(/maxMs/);
    expect(() => validateBackoff({ ...policy, factor: 0.5 })).toThrow(/factor/);
    expect(() => validateBackoff({ ...policy, jitter: 2 })).toThrow(/jitter/);
    expect(validateBackoff(policy)).toBe(policy);
  });
});
