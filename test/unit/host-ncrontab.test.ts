import { describe, expect, it } from 'vitest';
import { nextOccurrence, parseNcrontab } from '../../local/host/ncrontab.js';

const at = (iso: string): number => Date.parse(iso);
const next = (expression: string, after: string): string | undefined => {
  const value = nextOccurrence(parseNcrontab(expression), at(after));
  return value === undefined ? undefined : new Date(value).toISOString();
};

describe('NCRONTAB', () => {
  it('steps through seconds', () => {
    expect(next('*/10 * * * * *', '2025-01-01T00:00:00.000Z')).toBe('2025-01-01T00:00:10.000Z');
    expect(next('*/10 * * * * *', '2025-01-01T00:00:09.999Z')).toBe('2025-01-01T00:00:10.000Z');
    expect(next('*/10 * * * * *', '2025-01-01T00:00:55.000Z')).toBe('2025-01-01T00:01:00.000Z');
  });

  it('handles ranges, lists, names and start/step', () => {
    expect(next('0 30 9-17 * * Mon-Fri', '2025-01-04T12:00:00Z')).toBe('2025-01-06T09:30:00.000Z'); // Sat → Mon
    expect(next('0 0 0 1 Jan,Jul *', '2025-02-01T00:00:00Z')).toBe('2025-07-01T00:00:00.000Z');
    expect(next('5/15 * * * * *', '2025-01-01T00:00:21Z')).toBe('2025-01-01T00:00:35.000Z');
    expect(next('0 0 0 * * 7', '2025-01-01T00:00:00Z')).toBe('2025-01-05T00:00:00.000Z'); // 7 is Sunday
  });

  it('requires day-of-month and day-of-week to both match, as NCrontab does', () => {
    // The 13th that is a Friday.
    expect(next('0 0 0 13 * Fri', '2025-01-01T00:00:00Z')).toBe('2025-06-13T00:00:00.000Z');
  });

  it('returns undefined for a date that never comes', () => {
    expect(next('0 0 0 31 Feb *', '2025-01-01T00:00:00Z')).toBeUndefined();
  });

  it('rejects malformed expressions with the field named', () => {
    expect(() => parseNcrontab('* * * * *')).toThrow(/expected 6 fields/);
    expect(() => parseNcrontab('60 * * * * *')).toThrow(/second field "60"/);
    expect(() => parseNcrontab('* * * * Foo *')).toThrow(/month field/);
    expect(() => parseNcrontab('*/0 * * * * *')).toThrow(/step/);
    expect(() => parseNcrontab('* 5-1 * * * *')).toThrow(/descending/);
  });
});
