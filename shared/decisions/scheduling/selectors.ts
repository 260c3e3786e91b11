// Structured label selectors (metav1.LabelSelector) compiled to a predicate over a pod's labels.
import type { LabelSelector } from './types.js';

export type LabelPredicate = (labels: Readonly<Record<string, string>>) => boolean;

const NOTHING: LabelPredicate = () => false;

/**
 * As metav1.LabelSelectorAsSelector: an absent selector selects nothing (an affinity term without one is
 * a no-op, as in Karpenter), an empty one selects everything. An unknown operator selects nothing.
 */
export function compileSelector(selector: LabelSelector | undefined): LabelPredicate {
  if (selector === undefined) return NOTHING;
  const checks: LabelPredicate[] = [];
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    checks.push((labels) => labels[key] === value && Object.hasOwn(labels, key));
  }
  for (const expression of selector.matchExpressions ?? []) {
    const { key } = expression;
    const values = new Set(expression.values ?? []);
    switch (expression.operator) {
      case 'In':
        checks.push((labels) => Object.hasOwn(labels, key) && values.has(labels[key] ?? ''));
        break;
      case 'NotIn':
        checks.push((labels) => !Object.hasOwn(labels, key) || !values.has(labels[key] ?? ''));
        break;
      case 'Exists':
        checks.push((labels) => Object.hasOwn(labels, key));
        break;
      case 'DoesNotExist':
        checks.push((labels) => !Object.hasOwn(labels, key));
        break;
      default:
        return NOTHING;
    }
  }
  return (labels) => checks.every((check) => check(labels));
}

/** A stable text for a selector, so equal selectors share one topology group. */
export function selectorKey(selector: LabelSelector | undefined): string {
  if (selector === undefined) return 'nothing';
  const labels = Object.entries(selector.matchLabels ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const expressions = (selector.matchExpressions ?? [])
    .map((e) => `${e.key} ${e.operator} ${[...(e.values ?? [])].sort().join(',')}`)
    .sort();
  return JSON.stringify([labels, expressions]);
}
