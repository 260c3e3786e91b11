// Node selector requirements with Karpenter's semantics, evaluated against a plain label map.
//
// Several requirements on the same key intersect: a label value must satisfy every one of them, so
// `sku-cpu Gt 2` plus `sku-cpu Lt 9` means 3..8. NotIn and DoesNotExist are satisfied by an absent
// label (as in Kubernetes node affinity); In, Exists and the numeric operators need the label present.
import type { NodeSelectorRequirement, RequirementOperator } from '../models/kube.js';
import { WellKnown } from '../models/karpenter.js';

/** Deprecated beta keys Karpenter still accepts in requirements, mapped to the keys they stand for. */
const NORMALIZED_KEYS: Readonly<Record<string, string>> = {
  'beta.kubernetes.io/arch': WellKnown.archLabel,
  'beta.kubernetes.io/os': WellKnown.osLabel,
  'beta.kubernetes.io/instance-type': WellKnown.instanceTypeLabel,
  'failure-domain.beta.kubernetes.io/zone': WellKnown.zoneLabel,
  'failure-domain.beta.kubernetes.io/region': WellKnown.regionLabel,
};

/** The key a requirement stands for: a deprecated beta key's current name, any other key unchanged. */
export function normalizedKey(key: string): string {
  return NORMALIZED_KEYS[key] ?? key;
}

export type RequirementCheck = { satisfied: true } | { satisfied: false; key: string; reason: string };

const NUMERIC_OPERATORS: ReadonlySet<RequirementOperator> = new Set(['Gt', 'Lt', 'Gte', 'Lte']);
const KNOWN_OPERATORS: ReadonlySet<string> = new Set([
  'In',
  'NotIn',
  'Exists',
  'DoesNotExist',
  'Gt',
  'Lt',
  'Gte',
  'Lte',
]);

const INTEGER_PATTERN = /^-?\d+$/;

function parseInteger(value: string | undefined): number | undefined {
  if (value === undefined || !INTEGER_PATTERN.test(value)) return undefined;
  const parsed = Number(value);
  return Number.isSafeInteger(parsed) ? parsed : undefined;
}

/** Whether a label value (undefined when the label is absent) satisfies one requirement. */
export function requirementAllows(requirement: NodeSelectorRequirement, value: string | undefined): boolean {
  const values = requirement.values ?? [];
  switch (requirement.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
    case 'Lt':
    case 'Gte':
    case 'Lte': {
      const actual = parseInteger(value);
      const bound = values.length === 1 ? parseInteger(values[0]) : undefined;
      if (actual === undefined || bound === undefined) return false;
      if (requirement.operator === 'Gt') return actual > bound;
      if (requirement.operator === 'Lt') return actual < bound;
      if (requirement.operator === 'Gte') return actual >= bound;
      return actual <= bound;
    }
    default:
      // An operator outside the enum can only come from an object that skipped validation; refusing it
      // is the safe answer for a decision that selects machines.
      return false;
  }
}

export function describeRequirement(requirement: NodeSelectorRequirement): string {
  const values = requirement.values ?? [];
  if (requirement.operator === 'Exists' || requirement.operator === 'DoesNotExist') {
    return `${requirement.key} ${requirement.operator}`;
  }
  if (NUMERIC_OPERATORS.has(requirement.operator)) {
    return `${requirement.key} ${requirement.operator} ${values.join(',')}`;
  }
  return `${requirement.key} ${requirement.operator} [${values.join(', ')}]`;
}

/** Checks every requirement against the labels; reports the first one that fails. */
export function labelsSatisfy(
  labels: Readonly<Record<string, string>>,
  requirements: readonly NodeSelectorRequirement[],
): RequirementCheck {
  for (const requirement of requirements) {
    const value = Object.hasOwn(labels, requirement.key) ? labels[requirement.key] : undefined;
    if (!requirementAllows(requirement, value)) {
      const actual =
        value === undefined ? `label ${requirement.key} is absent` : `${requirement.key}=${value}`;
      return {
        satisfied: false,
        key: requirement.key,
        reason: `${actual} does not satisfy ${describeRequirement(requirement)}`,
      };
    }
  }
  return { satisfied: true };
}

// Label key: optional DNS-subdomain prefix and "/", then a name of at most 63 characters. The same
// shape the upstream CRD pattern accepts.
const LABEL_KEY_PREFIX = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const MAX_REQUIREMENTS = 100;
const MAX_MIN_VALUES = 50;

/** Problems with a label key, or an empty list. Kubernetes' qualified-name rules. */
export function labelKeyErrors(key: string): string[] {
  if (key === '') return ['must not be empty'];
  const slash = key.indexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  const errors: string[] = [];
  if (prefix !== undefined && (prefix.length > 253 || !LABEL_KEY_PREFIX.test(prefix))) {
    errors.push(`prefix "${prefix}" must be a lower-case DNS subdomain of at most 253 characters`);
  }
  if (name.length > 63 || !LABEL_NAME.test(name)) {
    errors.push(
      `name "${name}" must be at most 63 characters of letters, digits, '-', '_' or '.', starting and ending with a letter or digit`,
    );
  }
  return errors;
}

/** Karpenter reserves its own label domain; only these two karpenter.sh keys may appear in requirements. */
const ALLOWED_KARPENTER_KEYS: ReadonlySet<string> = new Set([
  'karpenter.sh/capacity-type',
  'karpenter.sh/nodepool',
]);

function isRestrictedKey(key: string): string | undefined {
  const domain = key.includes('/') ? key.slice(0, key.indexOf('/')) : '';
  if (domain.endsWith('karpenter.sh') && !ALLOWED_KARPENTER_KEYS.has(key)) {
    return `label domain "karpenter.sh" is restricted`;
  }
  if (key === 'kubernetes.io/hostname') return `label "kubernetes.io/hostname" is restricted`;
  return undefined;
}

/**
 * Validates requirements with the rules the upstream Karpenter CRDs and admission apply, returning
 * human-readable errors that name the offending field (`<fieldPath>[i].values: ...`). An empty list
 * means valid. Like upstream, values given with Exists / DoesNotExist are ignored rather than rejected,
 * so every object the upstream API accepts is accepted here.
 */
export function validateRequirements(
  requirements: readonly NodeSelectorRequirement[] | undefined,
  fieldPath: string,
): string[] {
  if (requirements === undefined) return [];
  if (!Array.isArray(requirements)) return [`${fieldPath}: must be a list`];
  const errors: string[] = [];
  if (requirements.length > MAX_REQUIREMENTS) {
    errors.push(
      `${fieldPath}: at most ${MAX_REQUIREMENTS} requirements are allowed, got ${requirements.length}`,
    );
  }
  requirements.forEach((requirement, index) => {
    const at = `${fieldPath}[${index}]`;
    const key: unknown = requirement?.key;
    if (typeof key !== 'string' || key === '') {
      errors.push(`${at}.key: is required`);
    } else {
      for (const problem of labelKeyErrors(key)) errors.push(`${at}.key: ${problem}`);
      const restricted = isRestrictedKey(key);
      if (restricted) errors.push(`${at}.key: ${restricted}`);
    }
    const operator: unknown = requirement?.operator;
    if (typeof operator !== 'string' || !KNOWN_OPERATORS.has(operator)) {
      errors.push(
        `${at}.operator: must be one of In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte, got ${JSON.stringify(operator)}`,
      );
      return;
    }
    const rawValues: unknown = requirement.values;
    if (rawValues !== undefined && !Array.isArray(rawValues)) {
      errors.push(`${at}.values: must be a list of strings`);
      return;
    }
    const values = (rawValues ?? []) as unknown[];
    values.forEach((value, valueIndex) => {
      if (typeof value !== 'string') {
        errors.push(`${at}.values[${valueIndex}]: must be a string, got ${JSON.stringify(value)}`);
      } else if (value.length > 63 || !LABEL_VALUE.test(value)) {
        errors.push(
          `${at}.values[${valueIndex}]: "${value}" is not a valid label value (at most 63 characters of letters, digits, '-', '_' or '.', starting and ending with a letter or digit)`,
        );
      }
    });
    if (operator === 'In' && values.length === 0) {
      errors.push(`${at}.values: operator In needs at least one value`);
    }
    if (NUMERIC_OPERATORS.has(operator as RequirementOperator)) {
      const single = values.length === 1 && typeof values[0] === 'string' ? values[0] : undefined;
      const parsed = parseInteger(single);
      if (parsed === undefined || parsed < 0) {
        errors.push(
          `${at}.values: operator ${operator} needs exactly one non-negative integer, got ${JSON.stringify(values)}`,
        );
      }
    }
    const minValues: unknown = requirement.minValues;
    if (minValues !== undefined) {
      if (
        typeof minValues !== 'number' ||
        !Number.isInteger(minValues) ||
        minValues < 1 ||
        minValues > MAX_MIN_VALUES
      ) {
        errors.push(
          `${at}.minValues: must be an integer from 1 to ${MAX_MIN_VALUES}, got ${JSON.stringify(minValues)}`,
        );
      } else if (operator === 'In' && values.length < minValues) {
        errors.push(`${at}.minValues: ${minValues} needs at least that many values, got ${values.length}`);
      }
    }
  });
  return errors;
}
