// A NodeOverlay's status conditions as upstream's controller writes them: ValidationSucceeded from the
// overlay's evaluation (False with RuntimeValidation or Conflict), and Ready, which depends on it alone
// and, like a NodeClaim's Ready, carries the failing condition's reason.
import type { Condition } from '../models/kube.js';
import { setCondition } from './conditions.js';
import type { NodeOverlayOutcome } from './node-overlays.js';

export const NodeOverlayConditionTypes = {
  validationSucceeded: 'ValidationSucceeded',
  ready: 'Ready',
} as const;

export function nodeOverlayConditions(
  current: readonly Condition[] | undefined,
  outcome: NodeOverlayOutcome,
  generation: number | undefined,
  now: Date,
): Condition[] {
  const observed = generation !== undefined ? { observedGeneration: generation } : {};
  const validation = outcome.valid
    ? { status: 'True' as const, reason: NodeOverlayConditionTypes.validationSucceeded, message: '' }
    : { status: 'False' as const, reason: outcome.reason, message: outcome.message };
  const validated = setCondition(
    current,
    { type: NodeOverlayConditionTypes.validationSucceeded, ...validation, ...observed },
    now,
  );
  const ready = outcome.valid
    ? { status: 'True' as const, reason: 'Ready', message: '' }
    : {
        status: 'False' as const,
        reason: outcome.reason,
        message: `${NodeOverlayConditionTypes.validationSucceeded}: ${outcome.message}`,
      };
  return setCondition(validated, { type: NodeOverlayConditionTypes.ready, ...ready, ...observed }, now);
}
