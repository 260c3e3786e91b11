// Kubernetes resource quantities ("500m", "2", "1.5Gi", "128974848") parsed exactly.
//
// A quantity is held as a rational number (BigInt numerator over a power-of-ten denominator) so that
// milli-unit conversions do not suffer binary floating-point error: "0.1" must be exactly 100m, not
// 100.00000000000001m rounded up to 101m. Exponent notation ("1e3") is not supported; the launch path
// never receives it from the NodeClaims this project writes, and rejecting it is better than guessing.

const DECIMAL_SUFFIX_EXPONENTS: Readonly<Record<string, number>> = {
  n: -9,
  u: -6,
  m: -3,
  '': 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};

const BINARY_SUFFIX_POWERS: Readonly<Record<string, number>> = {
  Ki: 10,
  Mi: 20,
  Gi: 30,
  Ti: 40,
  Pi: 50,
  Ei: 60,
};

const QUANTITY_PATTERN = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)([KMGTPE]i|[numkMGTPE]?)$/;

export class InvalidQuantityError extends Error {
  constructor(readonly quantity: string) {
    super(
      `invalid quantity "${quantity}" (expected a number with an optional suffix such as m, Ki, Mi, Gi, k, M, G)`,
    );
    this.name = 'InvalidQuantityError';
  }
}

interface Rational {
  numerator: bigint;
  denominator: bigint;
}

function parseRational(quantity: string): Rational {
  const match = QUANTITY_PATTERN.exec(quantity.trim());
  if (!match) throw new InvalidQuantityError(quantity);
  const [, sign = '', number = '', suffix = ''] = match;
  const [whole = '', fraction = ''] = number.split('.');
  let numerator = BigInt((whole || '0') + fraction);
  let denominator = 10n ** BigInt(fraction.length);
  const binaryPower = BINARY_SUFFIX_POWERS[suffix];
  if (binaryPower !== undefined) {
    numerator *= 2n ** BigInt(binaryPower);
  } else {
    const exponent = DECIMAL_SUFFIX_EXPONENTS[suffix] ?? 0;
    if (exponent >= 0) numerator *= 10n ** BigInt(exponent);
    else denominator *= 10n ** BigInt(-exponent);
  }
  if (sign === '-') numerator = -numerator;
  return { numerator, denominator };
}

/** The quantity in base units (cores for cpu, bytes for memory, a count for pods). Throws InvalidQuantityError. */
export function parseQuantity(quantity: string | number): number {
  if (typeof quantity === 'number') return quantity;
  const { numerator, denominator } = parseRational(quantity);
  return Number(numerator) / Number(denominator);
}

/** parseQuantity that returns undefined instead of throwing, for validating user input. */
export function tryParseQuantity(quantity: string | number): number | undefined {
  try {
    return parseQuantity(quantity);
  } catch {
    return undefined;
  }
}

/**
 * The quantity in thousandths of its base unit, rounded up as Kubernetes does ("0.0001" cpu is 1m):
 * a request must never be rounded down into fitting where it does not.
 */
export function parseMilliQuantity(quantity: string | number): number {
  if (typeof quantity === 'number') return Math.ceil(quantity * 1000);
  const { numerator, denominator } = parseRational(quantity);
  const scaled = numerator * 1000n;
  const quotient = scaled / denominator;
  const roundsUp = scaled % denominator > 0n;
  return Number(roundsUp ? quotient + 1n : quotient);
}

/** Whole base units rounded up (bytes of memory, pods). */
export function parseWholeQuantity(quantity: string | number): number {
  if (typeof quantity === 'number') return Math.ceil(quantity);
  const { numerator, denominator } = parseRational(quantity);
  const quotient = numerator / denominator;
  return Number(numerator % denominator > 0n ? quotient + 1n : quotient);
}

/** Formats millicores the way kubelet reports them: whole cores as "4", fractions as "3860m". */
export function formatMilliCpu(milliCores: number): string {
  return milliCores % 1000 === 0 ? String(milliCores / 1000) : `${milliCores}m`;
}

/** Formats a whole number of mebibytes as a quantity string ("7168Mi"). */
export function formatMebibytes(mebibytes: number): string {
  return `${mebibytes}Mi`;
}
