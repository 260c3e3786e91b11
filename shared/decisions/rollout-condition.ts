// The NodePool's RolledOut condition, from its rollout state, its target and its node counts: True when
// every node is up to date and no rollout is in progress; False with a reason a user can act on (a rollout
// going, paused, halted by a gate, rolling back, rolled back) and the figures. It is written with the rest
// of the NodePool's status (nodepool-status.ts), so the rollout workflow writes only its annotation.
import type { NodePool } from '../models/karpenter.js';
import type { ConditionUpdate } from './conditions.js';
import {
  invalidRolloutPolicyAnnotation,
  isRolloutPaused,
  rolloutOf,
  rolloutPolicyOf,
  RolloutAnnotations,
  type RolloutPolicy,
  type RolloutTarget,
} from './rollout.js';

export const ROLLED_OUT_CONDITION = 'RolledOut';

export const RolledOutReasons = {
  rolledOut: 'RolledOut',
  rollingOut: 'RollingOut',
  rollbackInProgress: 'RollbackInProgress',
  halted: 'RolloutHalted',
  paused: 'RolloutPaused',
  rolledBack: 'RolledBack',
} as const;

export interface RolledOutInput {
  nodePool: NodePool;
  target: RolloutTarget;
  defaultPolicy: RolloutPolicy;
  /** status.nodes and status.upToDateNodes. */
  nodes: number;
  upToDateNodes: number;
  /** Drifted NodeClaims of the pool (deleting ones included). */
  drifted: number;
}

export function rolledOutCondition(input: RolledOutInput): ConditionUpdate {
  const { nodePool, target, nodes, upToDateNodes, drifted } = input;
  const type = ROLLED_OUT_CONDITION;
  const figures = `${upToDateNodes} of ${nodes} nodes up to date`;
  const invalid = invalidRolloutPolicyAnnotation(nodePool);
  const policyNote =
    invalid === undefined
      ? ''
      : ` (annotation ${RolloutAnnotations.policy} "${invalid}" names no policy: Canary or Immediate; the setting applies)`;
  const falseWith = (reason: string, message: string): ConditionUpdate => ({
    type,
    status: 'False',
    reason,
    message: message + policyNote,
  });
  const canary = rolloutPolicyOf(nodePool, input.defaultPolicy) === 'Canary';
  if (!canary) {
    // The budget alone replaces: whatever a former Canary rollout left in the annotation says nothing.
    return drifted === 0
      ? { type, status: 'True', reason: RolledOutReasons.rolledOut, message: policyNote.trim() }
      : falseWith(RolledOutReasons.rollingOut, `Replacing at the Drifted budget; ${figures}`);
  }
  const state = rolloutOf(nodePool, target);
  if (state?.phase === 'halted') {
    return falseWith(
      RolledOutReasons.halted,
      `Rollout ${state.target} halted at wave ${state.wave}: ${state.gate?.message ?? 'a gate failed'}. ` +
        `Revert the change to roll back, or annotate ${RolloutAnnotations.resume}="${state.target}" to go on; ${figures}`,
    );
  }
  if (drifted > 0 && isRolloutPaused(nodePool)) {
    const where = state?.phase === 'rollback' ? ' during a rollback' : state ? ` at wave ${state.wave}` : '';
    return falseWith(RolledOutReasons.paused, `Paused by ${RolloutAnnotations.paused}${where}; ${figures}`);
  }
  if (state?.phase === 'rollback') {
    return falseWith(
      RolledOutReasons.rollbackInProgress,
      `Rolling back node image version ${state.rejectedImageVersion ?? ''} (${state.gate?.message ?? 'a gate failed'}); ${figures}`,
    );
  }
  if (state?.phase === 'rolledBack') {
    return falseWith(
      RolledOutReasons.rolledBack,
      `Node image version ${state.rejectedImageVersion ?? ''} was rolled back: ${state.gate?.message ?? 'a gate failed'}`,
    );
  }
  if (drifted === 0) {
    return { type, status: 'True', reason: RolledOutReasons.rolledOut, message: policyNote.trim() };
  }
  if (state && (state.phase === 'canary' || state.phase === 'waves')) {
    const soaking = state.soakingSince ? ', soaking' : '';
    const wave = state.phase === 'canary' ? `wave ${state.wave} (canary)` : `wave ${state.wave}`;
    return falseWith(RolledOutReasons.rollingOut, `${wave}${soaking}, ${figures}`);
  }
  return falseWith(
    RolledOutReasons.rollingOut,
    state ? `Replacing at the Drifted budget; ${figures}` : `Starting the rollout; ${figures}`,
  );
}
