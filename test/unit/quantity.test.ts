import { describe, expect, it } from 'vitest';
import {
  InvalidQuantityError,
  formatMilliCpu,
  parseMilliQuantity,
  parseQuantity,
  parseWholeQuantity,
  tryParseQuantity,
} from '../../shared/decisions/quantity.js';

describe('parseQuantity', () => {
  it.each([
    ['2', 2],
    ['500m', 0.5],
    ['1.5', 1.5],
    ['.5', 0.5],
    ['1Ki', 1024],
    ['512Mi', 512 * 1024 ** 2],
    ['1Gi', 1024 ** 3],
    ['1.5Gi', 1.5 * 1024 ** 3],
    ['2Ti', 2 * 1024 ** 4],
    ['1k', 1000],
    ['3M', 3e6],
    ['2G', 2e9],
    ['1T', 1e12],
    ['100u', 0.0001],
    ['5n', 5e-9],
    ['+3', 3],
    ['-2Gi', -2 * 1024 ** 3],
    ['128974848', 128974848],
    [4, 4],
  ])('%s → %s', (input, expected) => {
    expect(parseQuantity(input)).toBeCloseTo(expected, 12);
  });

  it.each(['', 'abc', '1e3', '1KB', '1 Gi', '1.2.3', 'Gi', '1ki'])('rejects %j', (input) => {
    expect(() => parseQuantity(input)).toThrow(InvalidQuantityError);
    expect(tryParseQuantity(input)).toBeUndefined();
  });
});

describe('parseMilliQuantity', () => {
  it.each([
    ['0.1', 100],
    ['100m', 100],
    ['1', 1000],
    ['2.5', 2500],
    ['0.0001', 1],
    ['1500u', 2],
    ['3860m', 3860],
    [0.25, 250],
  ])('%s → %i (exact, rounded up)', (input, expected) => {
    expect(parseMilliQuantity(input)).toBe(expected);
  });
});

describe('parseWholeQuantity', () => {
  it.each([
    ['1Gi', 1024 ** 3],
    ['0.5Ki', 512],
    ['1.1', 2],
    ['110', 110],
  ])('%s → %i', (input, expected) => {
    expect(parseWholeQuantity(input)).toBe(expected);
  });
});

describe('formatMilliCpu', () => {
  it.each([
    [4000, '4'],
    [3860, '3860m'],
    [0, '0'],
  ])('%i → %s', (input, expected) => {
    expect(formatMilliCpu(input)).toBe(expected);
  });
});
