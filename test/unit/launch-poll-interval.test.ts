import { describe, expect, test } from 'vitest';
import { shortWindowRemaining } from '../../shared/azure/compute-client.js';
import {
  MIN_POLL_INTERVAL_SECONDS,
  nextPollIntervalSeconds,
  RATE_LIMIT_LOW_WATERMARK,
} from '../../shared/lifecycle/launch/launch-monitor.js';

describe('nextPollIntervalSeconds', () => {
  test.each([
    { name: 'grows by half without Retry-After', previous: 10, poll: {}, max: 60, expected: 15 },
    { name: 'is capped at the maximum', previous: 50, poll: {}, max: 60, expected: 60 },
    { name: 'Retry-After is a floor', previous: 4, poll: { retryAfterSeconds: 10 }, max: 60, expected: 10 },
    {
      name: 'growth beyond Retry-After wins',
      previous: 10,
      poll: { retryAfterSeconds: 10 },
      max: 60,
      expected: 15,
    },
    {
      name: 'Retry-After above the maximum is honoured',
      previous: 10,
      poll: { retryAfterSeconds: 90 },
      max: 60,
      expected: 90,
    },
    {
      name: 'a low rate-limit budget jumps to the maximum',
      previous: 10,
      poll: { rateLimitRemaining: RATE_LIMIT_LOW_WATERMARK - 1 },
      max: 60,
      expected: 60,
    },
    {
      name: 'a healthy rate-limit budget changes nothing',
      previous: 10,
      poll: { rateLimitRemaining: RATE_LIMIT_LOW_WATERMARK },
      max: 60,
      expected: 15,
    },
    {
      name: 'a zero Retry-After never spins',
      previous: 0.1,
      poll: { retryAfterSeconds: 0 },
      max: 0.1,
      expected: MIN_POLL_INTERVAL_SECONDS,
    },
  ])('$name', ({ previous, poll, max, expected }) => {
    expect(nextPollIntervalSeconds(previous, poll, max)).toBe(expected);
  });
});

describe('shortWindowRemaining', () => {
  test('takes the fewest requests left in any 3-minute window', () => {
    expect(
      shortWindowRemaining(
        'Microsoft.Compute/GetOperation3Min;1480,Microsoft.Compute/GetOperation30Min;14800,Microsoft.Compute/PutVM3Min;220',
      ),
    ).toBe(220);
  });
  test('ignores headers without a 3-minute window', () => {
    expect(shortWindowRemaining('Microsoft.Compute/GetOperation30Min;14800')).toBeUndefined();
    expect(shortWindowRemaining(undefined)).toBeUndefined();
  });
});
