// Two annotation values read exactly as upstream Karpenter's Go reads them: karpenter.sh/do-not-disrupt with
// time.ParseDuration and controller.kubernetes.io/pod-deletion-cost with strconv.ParseFloat. No API server
// validates either annotation, so whatever a user writes reaches the decision, and the same text must be
// a value or an error here exactly when it is one upstream (a duration past 2^63-1 ns, a missing unit,
// "1e400", " 5", "Inf"). duration.ts stays the reader of CRD fields, whose pattern the API server checked.

// ---------------------------------------------------------------------------------------------------
// time.ParseDuration

const NS_PER_UNIT: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  '\u00b5s': 1_000n, // micro sign
  '\u03bcs': 1_000n, // Greek small letter mu
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

const MAX_MAGNITUDE = 1n << 63n;
const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';

/** Go's leadingInt: the digits at the start, or undefined when they overflow 2^63. */
function leadingInt(s: string): { value: bigint; rest: string } | undefined {
  let i = 0;
  let value = 0n;
  for (; i < s.length && isDigit(s[i]); i++) {
    if (value > MAX_MAGNITUDE / 10n) return undefined;
    value = value * 10n + BigInt(s.charCodeAt(i) - 48);
    if (value > MAX_MAGNITUDE) return undefined;
  }
  return { value, rest: s.slice(i) };
}

/** Go's leadingFraction: digits past what fits are consumed but no longer counted. */
function leadingFraction(s: string): { value: bigint; scale: number; rest: string } {
  let i = 0;
  let value = 0n;
  let scale = 1;
  let overflow = false;
  for (; i < s.length && isDigit(s[i]); i++) {
    if (overflow) continue;
    if (value > (MAX_MAGNITUDE - 1n) / 10n) {
      overflow = true;
      continue;
    }
    const next = value * 10n + BigInt(s.charCodeAt(i) - 48);
    if (next > MAX_MAGNITUDE) {
      overflow = true;
      continue;
    }
    value = next;
    scale *= 10;
  }
  return { value, scale, rest: s.slice(i) };
}

/** Go's strconv.Quote for the text a message names (JSON's quoting agrees for printable ASCII). */
const quote = (text: string): string => JSON.stringify(text);

/**
 * time.ParseDuration: nanoseconds (negative allowed, fractions below a nanosecond dropped), or Go's error
 * text ("time: invalid duration \"1d\"" is `unknown unit "d" in duration "1d"`, as Go words it).
 */
export function parseGoDuration(text: string): { ns: bigint } | { error: string } {
  const invalid = { error: `time: invalid duration ${quote(text)}` };
  let s = text;
  let negative = false;
  if (s[0] === '-' || s[0] === '+') {
    negative = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return { ns: 0n };
  if (s === '') return invalid;
  let total = 0n;
  while (s !== '') {
    if (!(s[0] === '.' || isDigit(s[0]))) return invalid;
    const whole = leadingInt(s);
    if (!whole) return invalid;
    const hadWhole = whole.rest.length !== s.length;
    s = whole.rest;
    let fraction = { value: 0n, scale: 1, rest: s };
    let hadFraction = false;
    if (s[0] === '.') {
      fraction = leadingFraction(s.slice(1));
      hadFraction = fraction.rest.length !== s.length - 1;
      s = fraction.rest;
    }
    if (!hadWhole && !hadFraction) return invalid;
    let end = 0;
    while (end < s.length && s[end] !== '.' && !isDigit(s[end])) end++;
    if (end === 0) return { error: `time: missing unit in duration ${quote(text)}` };
    const unitText = s.slice(0, end);
    s = s.slice(end);
    const unit = NS_PER_UNIT[unitText];
    if (unit === undefined) {
      return { error: `time: unknown unit ${quote(unitText)} in duration ${quote(text)}` };
    }
    if (whole.value > MAX_MAGNITUDE / unit) return invalid;
    let value = whole.value * unit;
    if (fraction.value > 0n) {
      // float64 arithmetic, as Go does it, then truncated.
      value += BigInt(Math.trunc(Number(fraction.value) * (Number(unit) / fraction.scale)));
      if (value > MAX_MAGNITUDE) return invalid;
    }
    total += value;
    if (total > MAX_MAGNITUDE) return invalid;
  }
  if (negative) return { ns: -total };
  if (total > MAX_MAGNITUDE - 1n) return invalid;
  return { ns: total };
}

// ---------------------------------------------------------------------------------------------------
// strconv.ParseFloat(text, 64)

/** Go's underscoreOK: an underscore only between digits (or after a base prefix). */
function underscoresAllowed(text: string): boolean {
  let s = text[0] === '+' || text[0] === '-' ? text.slice(1) : text;
  let saw = '^';
  let hex = false;
  if (s.length >= 2 && s[0] === '0' && 'box'.includes((s[1] ?? '').toLowerCase())) {
    hex = (s[1] ?? '').toLowerCase() === 'x';
    saw = '0';
    s = s.slice(2);
  }
  for (const c of s) {
    if (isDigit(c) || (hex && /^[a-f]$/i.test(c))) saw = '0';
    else if (c === '_') {
      if (saw !== '0') return false;
      saw = '_';
    } else {
      if (saw === '_') return false;
      saw = '!';
    }
  }
  return saw !== '_';
}

const DECIMAL = /^[+-]?(?=\.?[0-9])[0-9_]*(\.[0-9_]*)?([eE][+-]?[0-9_]+)?$/;
const HEXADECIMAL =
  /^([+-]?)0[xX](?=\.?[0-9a-fA-F_])([0-9a-fA-F_]*)(?:\.([0-9a-fA-F_]*))?[pP]([+-]?[0-9_]+)$/;

function hexadecimalValue(match: RegExpExecArray): number {
  const [, sign = '', wholeDigits = '', fractionDigits = '', exponent = '0'] = match;
  const digits = (wholeDigits + fractionDigits).replaceAll('_', '');
  const mantissa = digits === '' ? 0 : Number(BigInt(`0x${digits}`));
  const power = Number(exponent.replaceAll('_', '')) - 4 * fractionDigits.replaceAll('_', '').length;
  const magnitude = mantissa * 2 ** power;
  return sign === '-' ? -magnitude : magnitude;
}

/**
 * strconv.ParseFloat(text, 64): the value, or undefined where Go answers an error (syntax, or a finite
 * text out of float64's range; "Inf" and "NaN" are values, as in Go).
 */
export function parseGoFloat(text: string): number | undefined {
  const special = /^([+-]?)(inf|infinity)$/i.exec(text);
  if (special) return special[1] === '-' ? -Infinity : Infinity;
  if (/^nan$/i.test(text)) return NaN;
  if (text.includes('_') && !underscoresAllowed(text)) return undefined;
  const hex = HEXADECIMAL.exec(text);
  const value = hex
    ? hexadecimalValue(hex)
    : DECIMAL.test(text)
      ? Number(text.replaceAll('_', ''))
      : undefined;
  return value !== undefined && Number.isFinite(value) ? value : undefined;
}
