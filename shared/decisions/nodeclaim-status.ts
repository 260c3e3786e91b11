// Status bookkeeping for the sweep: compute the wanted status purely, then write only when it differs
// from what was read, so a quiet cluster costs reads but no writes.
import type { NodeClaimStatus } from '../models/karpenter.js';
import type { Condition } from '../models/kube.js';
import { setCondition, type ConditionUpdate } from './conditions.js';
import { plainEqual } from './plain-equal.js';

/** Applies `updates` in order; returns the input array itself when none of them changes anything. */
export function mergeConditions(
  conditions: readonly Condition[] | undefined,
  updates: readonly ConditionUpdate[],
  now: Date,
): Condition[] {
  return updates.reduce<Condition[]>(
    (current, update) => setCondition(current, update, now),
    (conditions ?? []) as Condition[],
  );
}

function conditionsByType(conditions: readonly Condition[] | undefined): Map<string, Condition> {
  return new Map((conditions ?? []).map((c) => [c.type, c]));
}

function sameConditions(a: readonly Condition[] | undefined, b: readonly Condition[] | undefined): boolean {
  const left = conditionsByType(a);
  const right = conditionsByType(b);
  if (left.size !== right.size) return false;
  for (const [type, condition] of left) {
    if (!plainEqual(condition, right.get(type))) return false;
  }
  return true;
}

/** Whether writing `after` would change the stored status. Condition order does not count. */
export function statusChanged(
  before: NodeClaimStatus | undefined,
  after: NodeClaimStatus | undefined,
): boolean {
  const { conditions: beforeConditions, ...beforeRest } = before ?? {};
  const { conditions: afterConditions, ...afterRest } = after ?? {};
  return !sameConditions(beforeConditions, afterConditions) || !plainEqual(beforeRest, afterRest);
}
