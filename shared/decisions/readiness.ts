// The NodeClaim's Ready condition is a summary of its lifecycle conditions, like Karpenter's root
// condition, so `kubectl get nodeclaims` shows one column that says whether the node made it and, if not,
// which stage is holding it up.
import { ConditionTypes } from '../models/karpenter.js';
import type { Condition } from '../models/kube.js';
import { findCondition, type ConditionUpdate } from './conditions.js';

/** The lifecycle stages Ready depends on, in the order they happen. */
export const ReadyDependencies: readonly string[] = [
  ConditionTypes.launched,
  ConditionTypes.registered,
  ConditionTypes.initialized,
];

/** Reason used when a stage has not reported anything yet (same word as Karpenter's initial conditions). */
export const AWAITING_RECONCILIATION = 'AwaitingReconciliation';

/**
 * True when every dependency is True; False when any is False (the first False one's reason and
 * message); otherwise Unknown with the first not-True stage's reason.
 */
export function readyCondition(conditions: readonly Condition[] | undefined): ConditionUpdate {
  const dependencies = ReadyDependencies.map((type) => ({
    type,
    condition: findCondition(conditions, type),
  }));

  const failed = dependencies.find((d) => d.condition?.status === 'False');
  if (failed?.condition) {
    return {
      type: ConditionTypes.ready,
      status: 'False',
      reason: failed.condition.reason,
      message: prefixed(failed.type, failed.condition.message),
    };
  }
  const pending = dependencies.find((d) => d.condition?.status !== 'True');
  if (pending) {
    return {
      type: ConditionTypes.ready,
      status: 'Unknown',
      reason: pending.condition?.reason || AWAITING_RECONCILIATION,
      message: prefixed(pending.type, pending.condition?.message || 'not reported yet'),
    };
  }
  return { type: ConditionTypes.ready, status: 'True', reason: 'Ready', message: '' };
}

function prefixed(type: string, message: string): string {
  return message ? `${type}: ${message}` : type;
}
