// Condition bookkeeping as pure functions: setting a condition that is already in the wanted state
// returns the same array, so callers can detect "nothing changed" and skip the write.
import type { Condition, ConditionStatus } from '../models/kube.js';

export interface ConditionUpdate {
  type: string;
  status: ConditionStatus;
  reason: string;
  message?: string;
  observedGeneration?: number;
}

export function findCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

export function isConditionTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return findCondition(conditions, type)?.status === 'True';
}

/**
 * Returns conditions with `update` applied. lastTransitionTime changes only when the status changes,
 * as Kubernetes API conventions ask. Returns the input array itself when nothing would change.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  update: ConditionUpdate,
  now: Date,
): Condition[] {
  const current = conditions ?? [];
  const existing = findCondition(current, update.type);
  const message = update.message ?? '';
  if (
    existing &&
    existing.status === update.status &&
    existing.reason === update.reason &&
    existing.message === message &&
    (update.observedGeneration === undefined || existing.observedGeneration === update.observedGeneration)
  ) {
    return current as Condition[];
  }
  const next: Condition = {
    type: update.type,
    status: update.status,
    reason: update.reason,
    message,
    lastTransitionTime:
      existing && existing.status === update.status ? existing.lastTransitionTime : now.toISOString(),
    ...(update.observedGeneration !== undefined ? { observedGeneration: update.observedGeneration } : {}),
  };
  return existing ? current.map((c) => (c.type === update.type ? next : c)) : [...current, next];
}

export function removeCondition(conditions: readonly Condition[] | undefined, type: string): Condition[] {
  const current = conditions ?? [];
  return current.some((c) => c.type === type)
    ? current.filter((c) => c.type !== type)
    : (current as Condition[]);
}
