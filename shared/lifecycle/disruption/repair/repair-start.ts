// Starting the repair workflow for one NodeClaim the repair method chose to reboot or to treat as
// preempted: its input from the match, the NodeClaim and the settings, then `repair-<uid>`, unless a
// repair of it is still running. The workflow marks the NodeClaim itself; the sweep's view is marked
// here at once, so the methods after repair in this pass count it as disrupting.
import { setCondition } from '../../../decisions/conditions.js';
import { replacementBackoffOf } from '../../../decisions/disruption-state.js';
import type { FirstStep } from '../../../decisions/node-repair/escalation.js';
import type { UnhealthyMatch } from '../../../decisions/node-repair/policies.js';
import { describeMatch } from '../../../decisions/node-repair/policies.js';
import { parseProviderId } from '../../../decisions/vm-spec.js';
import { ConditionTypes, type NodeClaim, type NodePool } from '../../../models/karpenter.js';
import { isOrchestrationActive } from '../../../runtime/definitions.js';
import { RepairNames } from '../../../runtime/function-names.js';
import { replacementNameFor } from '../replacements.js';
import type { SweepContext } from '../../sweep-step/sweep-step.js';
import { rebootRecordOf } from './repair-activities.js';
import { repairInstanceId, type RepairInput } from './repair-workflow.js';

export function repairInputFor(
  context: SweepContext,
  nodePool: NodePool,
  nodeClaim: NodeClaim,
  match: UnhealthyMatch,
  firstStep: Exclude<FirstStep, 'replace'>,
): RepairInput | undefined {
  const vm = parseProviderId(nodeClaim.status?.providerID ?? '');
  if (!vm) return undefined;
  const { settings } = context.deps;
  const uid = nodeClaim.metadata.uid ?? '';
  const poolName = nodePool.metadata.name;
  const since = Date.parse(match.condition.lastTransitionTime ?? '');
  const noticeAt = Number.isFinite(since) ? since : context.deps.now().getTime();
  return {
    nodeClaim: { name: nodeClaim.metadata.name, uid, nodePool: poolName },
    vmName: vm.vmName,
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

/** Starts `repair-<uid>`; false when a repair of this NodeClaim is running or it cannot be repaired. */
export async function startRepairWorkflow(
  context: SweepContext,
  nodePool: NodePool,
  nodeClaim: NodeClaim,
  match: UnhealthyMatch,
  firstStep: Exclude<FirstStep, 'replace'>,
): Promise<boolean> {
  const input = repairInputFor(context, nodePool, nodeClaim, match, firstStep);
  if (!input) return false;
  const { orchestrations, view, deps } = context;
  const instanceId = repairInstanceId(input.nodeClaim.uid);
  const existing = await orchestrations.getStatus(instanceId);
  if (isOrchestrationActive(existing)) return false;
  if (existing) await orchestrations.purge(instanceId);
  await orchestrations.startNew(RepairNames.orchestration, { instanceId, input });
  view.updateNodeClaim({
    ...nodeClaim,
    status: {
      ...nodeClaim.status,
      conditions: setCondition(
        nodeClaim.status?.conditions,
        { type: ConditionTypes.disruptionReason, status: 'True', reason: 'Unhealthy', message: input.detail },
        deps.now(),
      ),
    },
  });
  deps.log.info('node repair workflow started', {
    nodeClaim: nodeClaim.metadata.name,
    step: firstStep,
    detail: input.detail,
  });
  return true;
}
