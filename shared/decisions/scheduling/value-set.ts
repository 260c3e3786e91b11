// The set of label values one key may take, with Karpenter's set semantics (KS pkg/scheduling/requirement.go):
// In/NotIn/Exists/DoesNotExist/Gt/Lt become a (possibly complemented) set of values plus integer
// bounds, so several requirements on one key, or a pod's and a NodePool's, intersect into one set.
//
// Where this differs from Karpenter: `allowsAbsent` records whether a node *without* the label
// satisfies the set (NotIn and DoesNotExist do, as in Kubernetes node affinity). Karpenter leaves that
// to its compatibility rules; tracking it here lets one function answer both "does this node's label
// map match" and "do these two sets intersect".
import type { NodeSelectorRequirement } from '../../models/kube.js';

export interface ValueSet {
  /** True: every value except `values` (within bounds). False: exactly `values`. */
  readonly complement: boolean;
  readonly values: ReadonlySet<string>;
  /** Exclusive integer bounds (Gt/Lt); only meaningful with complement. */
  readonly gt?: number;
  readonly lt?: number;
  /** Whether a node lacking the label satisfies the set. */
  readonly allowsAbsent: boolean;
  readonly minValues?: number;
}

const EMPTY: ReadonlySet<string> = new Set();
const INTEGER = /^-?\d+$/;

export const ANY_VALUE: ValueSet = { complement: true, values: EMPTY, allowsAbsent: true };

export function exactly(...values: string[]): ValueSet {
  return { complement: false, values: new Set(values), allowsAbsent: false };
}

function integerOf(value: string | undefined): number | undefined {
  if (value === undefined || !INTEGER.test(value)) return undefined;
  const parsed = Number(value);
  return Number.isSafeInteger(parsed) ? parsed : undefined;
}

/** A requirement as a set; undefined for an operator or bound that cannot be read (caller reports it). */
export function valueSetOf(requirement: NodeSelectorRequirement): ValueSet | undefined {
  const values = requirement.values ?? [];
  const minValues = requirement.minValues !== undefined ? { minValues: requirement.minValues } : {};
  switch (requirement.operator) {
    case 'In':
      return { complement: false, values: new Set(values), allowsAbsent: false, ...minValues };
    case 'NotIn':
      return { complement: true, values: new Set(values), allowsAbsent: true, ...minValues };
    case 'Exists':
      return { complement: true, values: EMPTY, allowsAbsent: false, ...minValues };
    case 'DoesNotExist':
      return { complement: false, values: EMPTY, allowsAbsent: true };
    case 'Gt':
    case 'Gte':
    case 'Lt':
    case 'Lte': {
      const bound = values.length === 1 ? integerOf(values[0]) : undefined;
      if (bound === undefined) return undefined;
      const op = requirement.operator;
      const bounds =
        op === 'Gt'
          ? { gt: bound }
          : op === 'Gte'
            ? { gt: bound - 1 }
            : op === 'Lt'
              ? { lt: bound }
              : { lt: bound + 1 };
      return { complement: true, values: EMPTY, allowsAbsent: false, ...bounds, ...minValues };
    }
    default:
      return undefined;
  }
}

function withinBounds(set: ValueSet, value: string): boolean {
  if (set.gt === undefined && set.lt === undefined) return true;
  const number = integerOf(value);
  if (number === undefined) return false;
  return (set.gt === undefined || number > set.gt) && (set.lt === undefined || number < set.lt);
}

/** Whether a node whose label is `value` (undefined: absent) satisfies the set. */
export function allows(set: ValueSet, value: string | undefined): boolean {
  if (value === undefined) return set.allowsAbsent;
  return set.complement ? !set.values.has(value) && withinBounds(set, value) : set.values.has(value);
}

export function intersect(a: ValueSet, b: ValueSet): ValueSet {
  if (a === ANY_VALUE) return b;
  if (b === ANY_VALUE) return a;
  const allowsAbsent = a.allowsAbsent && b.allowsAbsent;
  const minValues = Math.max(a.minValues ?? 0, b.minValues ?? 0);
  const min = minValues > 0 ? { minValues } : {};
  if (!a.complement || !b.complement) {
    const [finite, other] = a.complement ? [b, a] : [a, b];
    const values = new Set<string>();
    for (const value of finite.values) if (allows(other, value)) values.add(value);
    return { complement: false, values, allowsAbsent, ...min };
  }
  const values = new Set([...a.values, ...b.values]);
  const gt = a.gt === undefined ? b.gt : b.gt === undefined ? a.gt : Math.max(a.gt, b.gt);
  const lt = a.lt === undefined ? b.lt : b.lt === undefined ? a.lt : Math.min(a.lt, b.lt);
  return {
    complement: true,
    values,
    allowsAbsent,
    ...(gt !== undefined ? { gt } : {}),
    ...(lt !== undefined ? { lt } : {}),
    ...min,
  };
}

/** No value and no absence satisfies it: nothing can match. Bounds that cross count too. */
export function isUnsatisfiable(set: ValueSet): boolean {
  if (set.allowsAbsent) return false;
  if (!set.complement) return set.values.size === 0;
  return set.gt !== undefined && set.lt !== undefined && set.lt - set.gt <= 1;
}

/** Karpenter's operator of a set: NotIn and DoesNotExist tolerate each other's empty intersection. */
export function isNegative(set: ValueSet): boolean {
  return set.allowsAbsent;
}

/** The single value a set allows, if it allows exactly one. */
export function singleValue(set: ValueSet): string | undefined {
  if (set.complement || set.values.size !== 1) return undefined;
  for (const value of set.values) return value;
  return undefined;
}

export function sameValueSet(a: ValueSet, b: ValueSet): boolean {
  if (a === b) return true;
  if (
    a.complement !== b.complement ||
    a.allowsAbsent !== b.allowsAbsent ||
    a.gt !== b.gt ||
    a.lt !== b.lt ||
    a.minValues !== b.minValues ||
    a.values.size !== b.values.size
  )
    return false;
  for (const value of a.values) if (!b.values.has(value)) return false;
  return true;
}

/** Back to the API shape, for the NodeClaim's spec.requirements and for messages. */
export function toRequirements(key: string, set: ValueSet): NodeSelectorRequirement[] {
  const minValues = set.minValues !== undefined ? { minValues: set.minValues } : {};
  if (!set.complement) {
    if (set.values.size === 0) return [{ key, operator: 'DoesNotExist' }];
    return [{ key, operator: 'In', values: [...set.values].sort(), ...minValues }];
  }
  const requirements: NodeSelectorRequirement[] = [];
  const bounded = set.gt !== undefined || set.lt !== undefined;
  if (!set.allowsAbsent && !bounded) requirements.push({ key, operator: 'Exists', ...minValues });
  if (set.values.size > 0) {
    requirements.push({ key, operator: 'NotIn', values: [...set.values].sort(), ...minValues });
  }
  if (set.gt !== undefined) requirements.push({ key, operator: 'Gt', values: [String(set.gt)] });
  if (set.lt !== undefined) requirements.push({ key, operator: 'Lt', values: [String(set.lt)] });
  return requirements;
}

export function describeValueSet(key: string, set: ValueSet): string {
  return toRequirements(key, set)
    .map((r) =>
      r.operator === 'Exists' || r.operator === 'DoesNotExist'
        ? `${r.key} ${r.operator}`
        : `${r.key} ${r.operator} [${(r.values ?? []).join(', ')}]`,
    )
    .join(' and ');
}
