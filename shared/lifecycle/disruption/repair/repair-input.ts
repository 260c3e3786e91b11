// The repair workflow's input for one NodeClaim the repair method chose to reboot or to treat as
// preempted: from the match, the NodeClaim and the settings. The method puts it in its command
// (ownWorkflow), and the disruption step starts `repair-<uid>` with it unless a repair of the NodeClaim
// is still running; the workflow marks the NodeClaim itself.
import { replacementBackoffOf } from '../../../decisions/disruption-state.js';
import type { FirstStep } from '../../../decisions/node-repair/escalation.js';
import type { UnhealthyMatch } from '../../../decisions/node-repair/policies.js';
import { describeMatch } from '../../../decisions/node-repair/policies.js';
import type { NodeClaim, NodePool } from '../../../models/karpenter.js';
import { replacementNameFor } from '../replacements.js';
import type { SweepContext } from '../../sweep-step/sweep-step.js';
import { rebootRecordOf } from './repair-activities.js';
import type { RepairInput } from './repair-workflow.js';

export function repairInputFor(
  context: SweepContext,
  nodePool: NodePool,
  nodeClaim: NodeClaim,
  match: UnhealthyMatch,
  firstStep: Exclude<FirstStep, 'replace'>,
): RepairInput | undefined {
  const vmName = context.deps.cloud.instanceNameOfProviderId(nodeClaim.status?.providerID ?? '');
  if (vmName === undefined) return undefined;
  const { settings } = context.deps;
  const uid = nodeClaim.metadata.uid ?? '';
  const poolName = nodePool.metadata.name;
  const since = Date.parse(match.condition.lastTransitionTime ?? '');
  const noticeAt = Number.isFinite(since) ? since : context.deps.now().getTime();
  return {
    nodeClaim: { name: nodeClaim.metadata.name, uid, nodePool: poolName },
    vmName,
    policy: match.policy,
    condition: {
      type: match.condition.type,
      status: match.condition.status,
      ...(match.condition.reason ? { reason: match.condition.reason } : {}),
    },
    detail: describeMatch(match),
    firstStep,
    previous: rebootRecordOf(nodeClaim),
    escalation: {
      maxReboots: settings.repair.maxReboots,
      recoveryMs: settings.repair.rebootRecoverySeconds * 1000,
    },
    pollSeconds: settings.disruption.replacementPollSeconds,
    ...(firstStep === 'preempted'
      ? { drainBy: new Date(noticeAt + settings.repair.preemptionDrainSeconds * 1000).toISOString() }
      : {}),
    replacement: {
      name: replacementNameFor(poolName, uid, replacementBackoffOf(nodeClaim).attempts),
      nodePool: poolName,
      replacementOf: nodeClaim.metadata.name,
      reason: 'Unhealthy',
    },
    replacementTimeoutMinutes: settings.disruption.replacementTimeoutMinutes,
  };
}
