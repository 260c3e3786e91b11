// Invalid disruption budgets that got past the API server (the CRD cannot check cron syntax, for one)
// are reported on the NodePool, as condition ValidationSucceeded=False naming the field and as a Warning
// event, and never stop the sweep: budgets.ts already makes an invalid budget allow 0 disruptions.
import { formatBudgetErrors, validateBudgets } from '../../decisions/budgets.js';
import { findCondition, setCondition } from '../../decisions/conditions.js';
import { isConflict } from '../../kube/errors.js';
import type { NodePool } from '../../models/karpenter.js';
import type { LifecycleDependencies } from '../dependencies.js';
import { nodePoolTarget } from './blocked-events.js';

export const VALIDATION_CONDITION = 'ValidationSucceeded';
export const INVALID_BUDGET_REASON = 'InvalidDisruptionBudget';

/** Writes the NodePool's validation condition when it changed; true when it wrote. */
export async function reportBudgetValidity(
  deps: LifecycleDependencies,
  nodePool: NodePool,
): Promise<boolean> {
  const errors = validateBudgets(nodePool);
  const update =
    errors.length > 0
      ? {
          type: VALIDATION_CONDITION,
          status: 'False' as const,
          reason: INVALID_BUDGET_REASON,
          message: formatBudgetErrors(errors),
        }
      : { type: VALIDATION_CONDITION, status: 'True' as const, reason: VALIDATION_CONDITION, message: '' };
  const before = nodePool.status?.conditions;
  const conditions = setCondition(before, update, deps.now());
  if (conditions === before) return false;
  try {
    await deps.objects.nodePools.mergePatchStatus(nodePool.metadata.name, {
      metadata: { resourceVersion: nodePool.metadata.resourceVersion },
      status: { conditions },
    });
  } catch (error) {
    // Someone else wrote the NodePool since the sweep read it: the next sweep decides from the new version.
    if (isConflict(error)) return false;
    throw error;
  }
  const previous = findCondition(before, VALIDATION_CONDITION);
  if (update.status === 'False' && previous?.message !== update.message) {
    await deps.events.warning(nodePoolTarget(nodePool), INVALID_BUDGET_REASON, update.message);
    deps.log.warn('invalid disruption budget', { nodePool: nodePool.metadata.name, detail: update.message });
  }
  return true;
}
