import { describe, expect, it } from 'vitest';
import { DurationParseError, parseDuration, parseFiniteDuration } from '../../shared/decisions/duration.js';

const MIN = 60_000;
const HOUR = 60 * MIN;

describe('parseDuration', () => {
  it.each([
    ['1h30m', 90 * MIN],
    ['10m', 10 * MIN],
    ['720h', 720 * HOUR],
    ['90s', 90_000],
    ['1h0m0s', HOUR],
    ['1.5h', 90 * MIN],
    ['.5s', 500],
    ['250ms', 250],
    ['1500us', 1.5],
    ['1500µs', 1.5],
    ['2000000ns', 2],
    ['0', 0],
    ['0s', 0],
    ['+5m', 5 * MIN],
  ])('%s → %d ms', (text, ms) => {
    expect(parseDuration(text)).toBeCloseTo(ms, 9);
  });

  it('returns Never for "Never"', () => {
    expect(parseDuration('Never')).toBe('Never');
  });

  it.each([
    ['', 'empty string'],
    ['10', 'missing unit'],
    ['1h30', 'missing unit'],
    ['h', 'missing number'],
    ['5d', 'unknown unit "d"'],
    ['1H', 'unexpected text'],
    ['-5m', 'negative'],
    ['never', 'missing number'],
    ['1h 30m', 'unexpected text'],
    ['+', 'no number'],
  ])('rejects %j naming the text (%s)', (text, detail) => {
    let error: unknown;
    try {
      parseDuration(text);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DurationParseError);
    expect((error as DurationParseError).message).toContain(JSON.stringify(text));
    expect((error as DurationParseError).message).toContain(detail);
    expect((error as DurationParseError).text).toBe(text);
  });
});

describe('parseFiniteDuration', () => {
  it('refuses Never where a length of time is required', () => {
    expect(() => parseFiniteDuration('Never')).toThrow(DurationParseError);
  });
  it('parses ordinary durations', () => {
    expect(parseFiniteDuration('8h')).toBe(8 * HOUR);
  });
});
