// Go-style durations as Kubernetes and Karpenter write them ("1h30m", "720h", "90s", "Never").
// The grammar follows Go's time.ParseDuration so that any value the upstream controllers accept
// means the same here; negative durations are refused because no field in this API can use one.

export const NEVER = 'Never';

export class DurationParseError extends Error {
  override readonly name = 'DurationParseError';
  constructor(
    readonly text: string,
    readonly detail: string,
  ) {
    super(`invalid duration ${JSON.stringify(text)}: ${detail}`);
  }
}

const MS_PER_UNIT: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  '\u00b5s': 1e-3, // micro sign, as Go accepts
  '\u03bcs': 1e-3, // Greek small letter mu, as Go accepts
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
};

const SEGMENT = /^(\d*)(?:\.(\d*))?([a-zµμ]+)/;

/** Milliseconds (possibly fractional for ns/us inputs) or 'Never'. */
export function parseDuration(text: string): number | typeof NEVER {
  if (text === NEVER) return NEVER;
  return parseFiniteDuration(text);
}

/** Like parseDuration, but 'Never' is an error: for fields that need an actual length of time. */
export function parseFiniteDuration(text: string): number {
  if (text === '') throw new DurationParseError(text, 'empty string');
  if (text === '0') return 0;
  if (text.startsWith('-')) throw new DurationParseError(text, 'negative durations are not allowed');
  let rest = text.startsWith('+') ? text.slice(1) : text;
  if (rest === '0') return 0;
  if (rest === '') throw new DurationParseError(text, 'no number after the sign');
  let total = 0;
  while (rest.length > 0) {
    const match = SEGMENT.exec(rest);
    if (!match) {
      const detail = /^[\d.]+$/.test(rest)
        ? `missing unit after ${JSON.stringify(rest)} (use ns, us, ms, s, m or h)`
        : `unexpected text ${JSON.stringify(rest)}`;
      throw new DurationParseError(text, detail);
    }
    const [whole, intPart = '', fracPart = '', unit = ''] = match;
    if (intPart === '' && fracPart === '') {
      throw new DurationParseError(text, `missing number before unit ${JSON.stringify(unit)}`);
    }
    const scale = MS_PER_UNIT[unit];
    if (scale === undefined) {
      throw new DurationParseError(text, `unknown unit ${JSON.stringify(unit)} (use ns, us, ms, s, m or h)`);
    }
    total += Number(`${intPart || '0'}.${fracPart || '0'}`) * scale;
    rest = rest.slice(whole.length);
  }
  if (!Number.isFinite(total)) throw new DurationParseError(text, 'too large');
  return total;
}
