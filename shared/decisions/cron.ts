// Five-field cron schedules in UTC, as disruption budgets use them. Written here rather than taken
// from a library so that the accepted syntax and the day-of-month/day-of-week rule are exactly the
// ones upstream Karpenter gets from Go's robfig/cron "standard" parser (which Kubernetes CronJobs also
// use), with no timezone or seconds-field extensions that upstream would reject.

import { DurationParseError, parseFiniteDuration } from './duration.js';

export class CronParseError extends Error {
  override readonly name = 'CronParseError';
  constructor(
    readonly expression: string,
    readonly detail: string,
  ) {
    super(`invalid cron ${JSON.stringify(expression)}: ${detail}`);
  }
}

export interface CronSchedule {
  readonly expression: string;
  readonly minutes: ReadonlySet<number>;
  readonly hours: ReadonlySet<number>;
  readonly daysOfMonth: ReadonlySet<number>;
  readonly months: ReadonlySet<number>;
  /** 0 = Sunday … 6 = Saturday. */
  readonly daysOfWeek: ReadonlySet<number>;
  /**
   * When both day fields are restricted, a day matches if EITHER matches (classic cron); when one
   * is unrestricted ("*" or "?"), both must match. These flags record which case applies.
   */
  readonly dayOfMonthUnrestricted: boolean;
  readonly dayOfWeekUnrestricted: boolean;
  /** `@every <duration>`: fires every this many milliseconds (whole seconds) instead of on the fields. */
  readonly everyMs?: number;
}

const MACROS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  names?: Readonly<Record<string, number>>;
}

const MONTH_NAMES = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

const FIELDS: readonly FieldSpec[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: Object.fromEntries(MONTH_NAMES.map((n, i) => [n, i + 1])) },
  // 0-6 only: robfig/cron rejects 7 (and so 5-7), which Vixie cron would read as Sunday.
  { name: 'day of week', min: 0, max: 6, names: Object.fromEntries(DAY_NAMES.map((n, i) => [n, i])) },
];

interface ParsedField {
  values: Set<number>;
  unrestricted: boolean;
}

function parseValue(expression: string, field: FieldSpec, text: string): number {
  const named = field.names?.[text.toLowerCase()];
  if (named !== undefined) return named;
  // Go's strconv.Atoi, as robfig/cron parses numbers: an optional "+" is accepted.
  if (!/^\+?\d+$/.test(text)) {
    throw new CronParseError(expression, `${field.name}: ${JSON.stringify(text)} is not a number`);
  }
  const value = Number(text);
  if (value < field.min || value > field.max) {
    throw new CronParseError(expression, `${field.name}: ${value} is outside ${field.min}-${field.max}`);
  }
  return value;
}

function parseField(expression: string, field: FieldSpec, text: string): ParsedField {
  const values = new Set<number>();
  let unrestricted = false;
  // Empty list items ("0,,30") are skipped, as robfig/cron splits with strings.FieldsFunc.
  for (const part of text.split(',').filter((item) => item !== '')) {
    const [rangeText = '', stepText, ...extra] = part.split('/');
    if (extra.length > 0 || rangeText === '') {
      throw new CronParseError(expression, `${field.name}: malformed ${JSON.stringify(part)}`);
    }
    let step = 1;
    if (stepText !== undefined) {
      if (!/^\+?\d+$/.test(stepText) || Number(stepText) === 0) {
        throw new CronParseError(
          expression,
          `${field.name}: step ${JSON.stringify(stepText)} must be a positive number`,
        );
      }
      step = Number(stepText);
    }
    let start: number;
    let end: number;
    const bounds = rangeText.split('-');
    if (bounds[0] === '*' || bounds[0] === '?') {
      // robfig/cron reads only what precedes a hyphen here: "*-5" is "*".
      start = field.min;
      end = field.max;
      if (step === 1) unrestricted = true;
    } else {
      if (bounds.length > 2) {
        throw new CronParseError(expression, `${field.name}: malformed range ${JSON.stringify(rangeText)}`);
      }
      start = parseValue(expression, field, bounds[0] ?? '');
      // "N/step" means from N to the end of the field, as in robfig/cron and Vixie cron.
      end =
        bounds[1] !== undefined
          ? parseValue(expression, field, bounds[1])
          : stepText !== undefined
            ? field.max
            : start;
      if (end < start) {
        throw new CronParseError(
          expression,
          `${field.name}: range ${JSON.stringify(rangeText)} ends before it starts`,
        );
      }
    }
    for (let v = start; v <= end; v += step) values.add(v);
  }
  return { values, unrestricted };
}

/** Parses a 5-field cron expression or one of the @yearly…@hourly macros. Throws CronParseError. */
export function parseCron(expression: string): CronSchedule {
  const trimmed = expression.trim();
  if (trimmed === '') throw new CronParseError(expression, 'empty schedule');
  if (/^(CRON_)?TZ=/i.test(trimmed)) {
    throw new CronParseError(expression, 'time zones are not supported; schedules are always UTC');
  }
  let body = trimmed;
  if (trimmed.startsWith('@every ')) return everySchedule(expression, trimmed.slice('@every '.length));
  if (trimmed.startsWith('@')) {
    // Case-sensitive, as robfig/cron matches them: "@DAILY" is not a macro.
    const macro = MACROS[trimmed];
    if (macro === undefined) {
      throw new CronParseError(
        expression,
        `unknown macro ${JSON.stringify(trimmed)} (use ${Object.keys(MACROS).join(', ')})`,
      );
    }
    body = macro;
  }
  const parts = body.split(/\s+/);
  if (parts.length !== FIELDS.length) {
    throw new CronParseError(
      expression,
      `expected 5 fields (minute hour day-of-month month day-of-week), found ${parts.length}`,
    );
  }
  const parsed = FIELDS.map((field, i) => parseField(expression, field, parts[i] ?? ''));
  const [minute, hour, dom, month, dow] = parsed as [
    ParsedField,
    ParsedField,
    ParsedField,
    ParsedField,
    ParsedField,
  ];
  return {
    expression,
    minutes: minute.values,
    hours: hour.values,
    daysOfMonth: dom.values,
    months: month.values,
    daysOfWeek: dow.values,
    dayOfMonthUnrestricted: dom.unrestricted,
    dayOfWeekUnrestricted: dow.unrestricted,
  };
}

/**
 * robfig/cron's constant-delay schedule: a Go duration, at least one second, truncated to whole seconds;
 * it fires that long after any instant (truncated to the second) it is asked about.
 */
function everySchedule(expression: string, durationText: string): CronSchedule {
  let ms: number;
  try {
    ms = parseFiniteDuration(durationText);
  } catch (error) {
    if (!(error instanceof DurationParseError)) throw error;
    throw new CronParseError(expression, `@every: ${error.detail}`);
  }
  const everyMs = Math.max(1000, Math.floor(ms / 1000) * 1000);
  const none = new Set<number>();
  return {
    expression,
    minutes: none,
    hours: none,
    daysOfMonth: none,
    months: none,
    daysOfWeek: none,
    dayOfMonthUnrestricted: false,
    dayOfWeekUnrestricted: false,
    everyMs,
  };
}

function dayMatches(schedule: CronSchedule, date: Date): boolean {
  const dom = schedule.daysOfMonth.has(date.getUTCDate());
  const dow = schedule.daysOfWeek.has(date.getUTCDay());
  return schedule.dayOfMonthUnrestricted || schedule.dayOfWeekUnrestricted ? dom && dow : dom || dow;
}

// robfig/cron gives up after five years (and upstream then counts the budget as active), so a schedule
// that cannot fire ("0 0 30 2 *"), or not within five years ("0 0 29 2 *" from 2097), is active.
const SEARCH_HORIZON_YEARS = 5;
const MINUTE_MS = 60_000;

/**
 * The first fire time strictly after `after`, or undefined if the schedule can never fire
 * (a date that does not exist, such as February 30).
 */
export function nextFireTime(schedule: CronSchedule | string, after: Date): Date | undefined {
  const cron = typeof schedule === 'string' ? parseCron(schedule) : schedule;
  if (cron.everyMs !== undefined) return new Date(Math.floor(after.getTime() / 1000) * 1000 + cron.everyMs);
  let t = new Date(Math.floor(after.getTime() / MINUTE_MS) * MINUTE_MS + MINUTE_MS);
  const lastYear = t.getUTCFullYear() + SEARCH_HORIZON_YEARS;
  // Each step jumps to the start of the next month, day, hour or minute that could still match,
  // so the loop runs at most a few thousand times even for rare schedules.
  while (t.getUTCFullYear() <= lastYear) {
    if (!cron.months.has(t.getUTCMonth() + 1)) {
      t = new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth() + 1, 1));
    } else if (!dayMatches(cron, t)) {
      t = new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth(), t.getUTCDate() + 1));
    } else if (!cron.hours.has(t.getUTCHours())) {
      t = new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth(), t.getUTCDate(), t.getUTCHours() + 1));
    } else if (!cron.minutes.has(t.getUTCMinutes())) {
      t = new Date(t.getTime() + MINUTE_MS);
    } else {
      return t;
    }
  }
  return undefined;
}

/**
 * True when `now` lies in [F, F + durationMs) for the most recent fire time F ≤ now. Equivalently,
 * the schedule fires at some instant in (now − duration, now], which is how it is computed, as
 * upstream does; like upstream, a schedule with no fire time within the search horizon is active.
 */
export function isScheduleActive(schedule: CronSchedule | string, durationMs: number, now: Date): boolean {
  const cron = typeof schedule === 'string' ? parseCron(schedule) : schedule;
  const next = nextFireTime(cron, new Date(now.getTime() - durationMs));
  return next === undefined || next.getTime() <= now.getTime();
}
