import { describe, expect, it } from 'vitest';
import { CronParseError, isScheduleActive, nextFireTime, parseCron } from '../../shared/decisions/cron.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const at = (iso: string): Date => new Date(iso);

describe('parseCron', () => {
  it('expands lists, ranges, steps and names', () => {
    const c = parseCron('0,30 9-17/4 1,15 JAN-mar MON-FRI');
    expect([...c.minutes]).toEqual([0, 30]);
    expect([...c.hours]).toEqual([9, 13, 17]);
    expect([...c.daysOfMonth]).toEqual([1, 15]);
    expect([...c.months]).toEqual([1, 2, 3]);
    expect([...c.daysOfWeek]).toEqual([1, 2, 3, 4, 5]);
    expect(c.dayOfMonthUnrestricted).toBe(false);
    expect(c.dayOfWeekUnrestricted).toBe(false);
  });

  it('treats "N/step" as N to the end of the field, and reads what robfig/cron reads', () => {
    const c = parseCron('5/20 * * * 5-6');
    expect([...c.minutes]).toEqual([5, 25, 45]);
    expect([...c.daysOfWeek].sort()).toEqual([5, 6]);
    // Only what precedes a hyphen after "*" counts; empty list items are skipped; Atoi accepts "+".
    expect(parseCron('*-5 * * * *').minutes.size).toBe(60);
    expect([...parseCron('0,,30 * * * *').minutes]).toEqual([0, 30]);
    expect([...parseCron('+30 * * * *').minutes]).toEqual([30]);
    expect(parseCron('@every 1h30m').everyMs).toBe(90 * 60_000);
    expect(parseCron('@every 10ms').everyMs).toBe(1000);
  });

  it('marks "*" and "?" as unrestricted but "*/2" as restricted', () => {
    expect(parseCron('* * ? * *').dayOfMonthUnrestricted).toBe(true);
    expect(parseCron('* * */2 * *').dayOfMonthUnrestricted).toBe(false);
  });

  it.each([
    ['@yearly', '0 0 1 1 *'],
    ['@annually', '0 0 1 1 *'],
    ['@monthly', '0 0 1 * *'],
    ['@weekly', '0 0 * * 0'],
    ['@daily', '0 0 * * *'],
    ['@midnight', '0 0 * * *'],
    ['@hourly', '0 * * * *'],
  ])('macro %s equals %s', (macro, expanded) => {
    const { expression: _a, ...fromMacro } = parseCron(macro);
    const { expression: _b, ...fromFields } = parseCron(expanded);
    expect(fromMacro).toEqual(fromFields);
  });

  it.each([
    ['', 'empty'],
    ['* * * *', 'expected 5 fields'],
    ['0 0 * * * *', 'expected 5 fields'],
    ['60 * * * *', 'minute: 60 is outside 0-59'],
    ['* 24 * * *', 'hour: 24 is outside 0-23'],
    ['* * 0 * *', 'day of month: 0 is outside 1-31'],
    ['* * * 13 *', 'month: 13 is outside 1-12'],
    ['* * * * 7', 'day of week: 7 is outside 0-6'],
    ['* * * * 5-7', 'day of week: 7 is outside 0-6'],
    ['*/0 * * * *', 'step "0" must be a positive number'],
    ['10-5 * * * *', 'ends before it starts'],
    ['a * * * *', '"a" is not a number'],
    ['1-2-3 * * * *', 'malformed range'],
    ['1/2/3 * * * *', 'malformed'],
    ['@DAILY', 'unknown macro'],
    ['@every never', '@every'],
    ['@reboot', 'unknown macro'],
    ['TZ=Europe/Paris 0 0 * * *', 'time zones are not supported'],
    ['not a cron', 'expected 5 fields'],
  ])('rejects %j with a typed error (%s)', (expression, detail) => {
    let error: unknown;
    try {
      parseCron(expression);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CronParseError);
    expect((error as CronParseError).expression).toBe(expression);
    expect((error as CronParseError).message).toContain(JSON.stringify(expression));
    expect((error as CronParseError).message).toContain(detail);
  });
});

describe('nextFireTime', () => {
  it.each([
    ['*/15 * * * *', '2025-03-10T10:07:31Z', '2025-03-10T10:15:00.000Z'],
    ['*/15 * * * *', '2025-03-10T10:15:00Z', '2025-03-10T10:30:00.000Z'], // strictly after
    ['0 22 * * *', '2025-03-10T23:00:00Z', '2025-03-11T22:00:00.000Z'],
    ['@monthly', '2025-01-31T12:00:00Z', '2025-02-01T00:00:00.000Z'],
    ['@yearly', '2025-12-31T23:59:59Z', '2026-01-01T00:00:00.000Z'],
    ['0 0 31 * *', '2025-04-01T00:00:00Z', '2025-05-31T00:00:00.000Z'], // April has no 31st
    ['0 0 29 2 *', '2025-01-01T00:00:00Z', '2028-02-29T00:00:00.000Z'],
    ['0 0 29 2 *', '2099-03-01T00:00:00Z', '2104-02-29T00:00:00.000Z'], // 2100 is not a leap year
    // Both day fields restricted: either may match (the 13th OR a Friday).
    ['0 0 13 * 5', '2025-06-01T00:00:00Z', '2025-06-06T00:00:00.000Z'],
    // Day of week restricted, day of month "*": both must match (so any Friday).
    ['0 0 * * FRI', '2025-06-07T00:00:00Z', '2025-06-13T00:00:00.000Z'],
    ['0 0 */10 * MON', '2025-06-01T00:00:00Z', '2025-06-02T00:00:00.000Z'], // "*/10" counts as restricted
    ['0 0 * * 0', '2025-06-01T00:00:01Z', '2025-06-08T00:00:00.000Z'],
    ['@every 1h', '2025-06-01T00:00:01.500Z', '2025-06-01T01:00:01.000Z'],
  ])('%s after %s → %s', (expression, after, expected) => {
    expect(nextFireTime(expression, at(after))?.toISOString()).toBe(expected);
  });

  it("returns undefined for a date that never exists, or not within five years (robfig/cron's horizon)", () => {
    expect(nextFireTime('0 0 30 2 *', at('2025-01-01T00:00:00Z'))).toBeUndefined();
    expect(nextFireTime('0 0 29 2 *', at('2097-03-01T00:00:00Z'))).toBeUndefined();
  });
});

describe('isScheduleActive', () => {
  it.each([
    // [schedule, duration, now, active]
    ['0 9 * * *', 8 * HOUR, '2025-03-10T08:59:59Z', false],
    ['0 9 * * *', 8 * HOUR, '2025-03-10T09:00:00Z', true], // window opens at the fire time
    ['0 9 * * *', 8 * HOUR, '2025-03-10T16:59:59Z', true],
    ['0 9 * * *', 8 * HOUR, '2025-03-10T17:00:00Z', false], // and closes at fire + duration
    // Straddling midnight: 22:00 for 4h covers 22:00–02:00 the next day.
    ['0 22 * * *', 4 * HOUR, '2025-03-10T21:59:00Z', false],
    ['0 22 * * *', 4 * HOUR, '2025-03-10T23:30:00Z', true],
    ['0 22 * * *', 4 * HOUR, '2025-03-11T00:00:00Z', true],
    ['0 22 * * *', 4 * HOUR, '2025-03-11T01:59:59Z', true],
    ['0 22 * * *', 4 * HOUR, '2025-03-11T02:00:00Z', false],
    // Straddling a month and a year boundary.
    ['0 20 31 * *', 8 * HOUR, '2025-02-01T03:59:00Z', true],
    ['0 20 31 * *', 8 * HOUR, '2025-02-01T04:00:00Z', false],
    ['0 20 31 * *', 8 * HOUR, '2025-03-01T03:00:00Z', false], // no 31st in February
    ['0 23 31 12 *', 2 * HOUR, '2026-01-01T00:30:00Z', true],
    ['@yearly', HOUR, '2025-12-31T23:59:00Z', false],
    ['@yearly', HOUR, '2026-01-01T00:59:00Z', true],
    // Weekend window from Saturday 00:00 for 48h, seen on Sunday night and on Monday.
    ['0 0 * * SAT', 48 * HOUR, '2025-06-08T23:59:00Z', true],
    ['0 0 * * SAT', 48 * HOUR, '2025-06-09T00:00:00Z', false],
    // Windows longer than the period overlap, so the schedule is always active.
    ['@hourly', 2 * HOUR, '2025-06-09T10:00:00Z', true],
    ['@daily', 10 * MIN, '2025-06-09T00:09:59.999Z', true],
    ['@daily', 10 * MIN, '2025-06-09T00:10:00Z', false],
    // A zero duration is never active; a schedule that never fires within five years always is, as
    // upstream reads robfig/cron's "no next time" (the zero time, which is not after now).
    ['* * * * *', 0, '2025-06-09T00:00:00Z', false],
    ['0 0 30 2 *', 24 * HOUR, '2025-06-09T00:00:00Z', true],
    ['0 0 30 2 *', 0, '2025-06-09T00:00:00Z', true],
    ['@every 1h', HOUR, '2025-06-09T00:00:00Z', true],
    ['@every 2h', HOUR, '2025-06-09T00:00:00Z', false],
  ] as const)('%s for %d ms at %s → %s', (schedule, durationMs, now, active) => {
    expect(isScheduleActive(schedule, durationMs, at(now))).toBe(active);
  });

  it('accepts a parsed schedule and throws CronParseError for an invalid string', () => {
    expect(isScheduleActive(parseCron('@daily'), HOUR, at('2025-01-01T00:30:00Z'))).toBe(true);
    expect(() => isScheduleActive('61 * * * *', HOUR, at('2025-01-01T00:30:00Z'))).toThrow(CronParseError);
  });
});
