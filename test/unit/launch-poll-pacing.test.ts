import { describe, expect, test } from 'vitest';
import {
  budgetIntervalSeconds,
  nextPollPacing,
  OPERATION_GETS_PER_MINUTE,
  PLANNED_BUDGET_SHARE,
  RATE_LIMIT_LOW_WATERMARK,
  spreadMs,
  SPREAD_FRACTION,
} from '../../shared/decisions/launch-poll-pacing.js';

const settings = { minSeconds: 5, maxSeconds: 60 };

describe('nextPollPacing', () => {
  test.each([
    { name: 'one launch polls at the minimum', input: { inFlightLaunches: 1 }, seconds: 5, spread: false },
    {
      name: "one launch never polls sooner than ARM's Retry-After",
      input: { inFlightLaunches: 1, retryAfterSeconds: 10 },
      seconds: 10,
      spread: false,
    },
    {
      name: 'a hundred launches still poll as fast as ARM allows',
      input: { inFlightLaunches: 100, retryAfterSeconds: 10 },
      seconds: 10,
      spread: false,
    },
    {
      name: 'a thousand launches share the budget',
      input: { inFlightLaunches: 1_000, retryAfterSeconds: 10 },
      seconds: (1_000 * 60) / (OPERATION_GETS_PER_MINUTE * PLANNED_BUDGET_SHARE),
      spread: true,
    },
    {
      name: 'the budget wins over the maximum when the launches need it',
      input: { inFlightLaunches: 10_000 },
      seconds: (10_000 * 60) / (OPERATION_GETS_PER_MINUTE * PLANNED_BUDGET_SHARE),
      spread: true,
    },
    {
      name: 'a low rate-limit budget waits the maximum',
      input: { inFlightLaunches: 1, rateLimitRemaining: RATE_LIMIT_LOW_WATERMARK - 1 },
      seconds: 60,
      spread: true,
    },
    {
      name: 'a rate-limit budget at the watermark is not low',
      input: { inFlightLaunches: 1, rateLimitRemaining: RATE_LIMIT_LOW_WATERMARK },
      seconds: 5,
      spread: false,
    },
    {
      name: 'no count (zero) is treated as this one launch',
      input: { inFlightLaunches: 0 },
      seconds: 5,
      spread: false,
    },
  ])('$name', ({ input, seconds, spread }) => {
    const pacing = nextPollPacing(input, settings);
    expect(pacing.seconds).toBeCloseTo(seconds, 6);
    expect(pacing.spread).toBe(spread);
  });

  test('the planned polling rate stays at the planned share of the limit at any count', () => {
    for (const inFlight of [150, 1_000, 5_000, 20_000]) {
      const perMinute = (inFlight * 60) / budgetIntervalSeconds(inFlight);
      expect(perMinute).toBeCloseTo(OPERATION_GETS_PER_MINUTE * PLANNED_BUDGET_SHARE, 6);
    }
  });
});

describe('spreadMs', () => {
  test('spreads over the interval plus a quarter, never sooner, the same on replay', () => {
    const values = Array.from({ length: 1_000 }, (_, i) => spreadMs(10_000, `launch-${i}`, 1));
    expect(Math.min(...values)).toBeGreaterThanOrEqual(10_000);
    expect(Math.max(...values)).toBeLessThanOrEqual(10_000 * (1 + SPREAD_FRACTION));
    expect(new Set(values).size).toBeGreaterThan(500);
    expect(spreadMs(10_000, 'launch-7', 3)).toBe(spreadMs(10_000, 'launch-7', 3));
  });
});
