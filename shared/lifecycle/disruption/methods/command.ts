// Building a DisruptionCommand: the fields every method fills the same way (its name, reason, NodePool,
// time, workflow-relevant defaults), so a method states only what it decided.
import type { NodeClaim } from '../../../models/karpenter.js';
import type { CommandCandidate, DisruptionCommand, DisruptionMethod, MethodPass } from './method.js';

export function candidateOf(nodeClaim: NodeClaim): CommandCandidate {
  return { name: nodeClaim.metadata.name, uid: nodeClaim.metadata.uid ?? '' };
}

export type CommandDecision = Pick<DisruptionCommand, 'candidates' | 'detail'> &
  Partial<
    Pick<
      DisruptionCommand,
      'replacements' | 'attempt' | 'key' | 'savings' | 'validateAfterSeconds' | 'ownWorkflow'
    >
  >;

export function commandFor(
  method: DisruptionMethod,
  pass: Pick<MethodPass, 'nodePool' | 'now'>,
  decision: CommandDecision,
): DisruptionCommand {
  return {
    method: method.name,
    reason: method.reason,
    nodePool: { name: pass.nodePool.metadata.name, uid: pass.nodePool.metadata.uid ?? '' },
    replacements: [],
    decidedAt: pass.now.toISOString(),
    validateAfterSeconds: 0,
    attempt: 0,
    consolidationType: method.consolidationType,
    consolidationPolicy: pass.nodePool.spec.disruption?.consolidationPolicy ?? 'WhenEmptyOrUnderutilized',
    ...decision,
  };
}
