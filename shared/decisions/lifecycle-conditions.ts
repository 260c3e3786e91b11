// Lifecycle conditions change together with the Ready summary; computing both in one place keeps Ready
// from ever disagreeing with Launched, Registered and Initialized.
import type { Condition } from '../models/kube.js';
import type { ConditionUpdate } from './conditions.js';
import { mergeConditions } from './nodeclaim-status.js';
import { readyCondition } from './readiness.js';

/** Applies `updates`, then recomputes Ready. Returns the input array itself when nothing changed. */
export function applyLifecycleConditions(
  conditions: readonly Condition[] | undefined,
  updates: readonly ConditionUpdate[],
  now: Date,
): Condition[] {
  const updated = mergeConditions(conditions, updates, now);
  return mergeConditions(updated, [readyCondition(updated)], now);
}
