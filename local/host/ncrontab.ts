// NCRONTAB, the six-field cron dialect of Azure Functions timer triggers:
//   {second} {minute} {hour} {day} {month} {day-of-week}
// Each field takes `*`, numbers, ranges `a-b`, steps `*/n` and `a-b/n`, and comma lists; months and days of
// the week also take English three-letter names. As in the NCrontab library that Azure uses, a time
// matches only when day-of-month AND day-of-week both match. Schedules are evaluated in UTC (Azure's
// default when WEBSITE_TIME_ZONE is not set).

export interface CronSchedule {
  readonly expression: string;
  readonly seconds: ReadonlySet<number>;
  readonly minutes: ReadonlySet<number>;
  readonly hours: ReadonlySet<number>;
  readonly days: ReadonlySet<number>;
  readonly months: ReadonlySet<number>;
  readonly daysOfWeek: ReadonlySet<number>;
}

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
}

const monthNames = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const dayNames = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

const fields: readonly FieldSpec[] = [
  { name: 'second', min: 0, max: 59 },
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: monthNames },
  { name: 'day-of-week', min: 0, max: 6, names: dayNames },
];

export function parseNcrontab(expression: string): CronSchedule {
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== 6) {
    throw new Error(
      `invalid NCRONTAB "${expression}": expected 6 fields (second minute hour day month day-of-week), got ${parts.length}`,
    );
  }
  const sets = parts.map((part, index) => parseField(part, fields[index]!, expression));
  return {
    expression,
    seconds: sets[0]!,
    minutes: sets[1]!,
    hours: sets[2]!,
    days: sets[3]!,
    months: sets[4]!,
    daysOfWeek: sets[5]!,
  };
}

function parseField(text: string, spec: FieldSpec, expression: string): Set<number> {
  const fail = (why: string): never => {
    throw new Error(`invalid NCRONTAB "${expression}": ${spec.name} field "${text}" ${why}`);
  };
  const value = (token: string): number => {
    const byName = spec.names?.indexOf(token.toUpperCase()) ?? -1;
    // Named months are 1-based, named days 0-based, matching their numeric ranges.
    if (byName >= 0) return byName + spec.min;
    if (!/^\d+$/.test(token)) return fail(`has "${token}", which is not a number`);
    const number = Number(token);
    // NCrontab accepts 7 for Sunday, like most cron dialects.
    if (spec.name === 'day-of-week' && number === 7) return 0;
    if (number < spec.min || number > spec.max) return fail(`has ${number}, outside ${spec.min}-${spec.max}`);
    return number;
  };

  const result = new Set<number>();
  for (const item of text.split(',')) {
    if (item === '') fail('has an empty list item');
    const [rangeText, stepText, extra] = item.split('/');
    if (extra !== undefined) fail('has more than one "/"');
    let step = 1;
    if (stepText !== undefined) {
      if (!/^\d+$/.test(stepText) || Number(stepText) === 0) fail(`has step "${stepText}"`);
      step = Number(stepText);
    }
    let low: number;
    let high: number;
    if (rangeText === '*') {
      low = spec.min;
      high = spec.max;
    } else {
      const [lowText, highText, more] = (rangeText ?? '').split('-');
      if (more !== undefined || lowText === undefined || lowText === '') fail('has a malformed range');
      low = value(lowText!);
      // `5/15` means "from 5 to the end, every 15", as in NCrontab.
      high = highText !== undefined ? value(highText) : stepText !== undefined ? spec.max : low;
      if (high < low) fail(`has a descending range ${low}-${high}`);
    }
    for (let n = low; n <= high; n += step) result.add(n);
  }
  return result;
}

/** The first time strictly after `after` (ms since epoch, UTC) that matches, or undefined within 5 years. */
export function nextOccurrence(schedule: CronSchedule, after: number): number | undefined {
  const date = new Date(Math.floor(after / 1000) * 1000 + 1000);
  const limit = after + 5 * 366 * 24 * 3600 * 1000;
  while (date.getTime() <= limit) {
    if (!schedule.months.has(date.getUTCMonth() + 1)) {
      date.setUTCMonth(date.getUTCMonth() + 1, 1);
      date.setUTCHours(0, 0, 0, 0);
      continue;
    }
    if (!schedule.days.has(date.getUTCDate()) || !schedule.daysOfWeek.has(date.getUTCDay())) {
      date.setUTCDate(date.getUTCDate() + 1);
      date.setUTCHours(0, 0, 0, 0);
      continue;
    }
    if (!schedule.hours.has(date.getUTCHours())) {
      date.setUTCHours(date.getUTCHours() + 1, 0, 0, 0);
      continue;
    }
    if (!schedule.minutes.has(date.getUTCMinutes())) {
      date.setUTCMinutes(date.getUTCMinutes() + 1, 0, 0);
      continue;
    }
    if (!schedule.seconds.has(date.getUTCSeconds())) {
      date.setUTCSeconds(date.getUTCSeconds() + 1, 0);
      continue;
    }
    return date.getTime();
  }
  return undefined;
}
