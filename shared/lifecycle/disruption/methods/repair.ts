// Node repair (FEATURE_GATES=NodeRepair=true), upstream's node health controller as a disruption method
// with reason Unhealthy (v1.15's repair as disruption): a node whose condition matches a repair policy
// (decisions/node-repair/policies.ts, REPAIR_POLICIES) past its toleration is repaired, longest-unhealthy
// first, within the budget for Unhealthy, unless more than 20% of the NodePool's nodes are unhealthy (the
// breaker; NodeRepairBlocked on each held node). A policy that allows a reboot becomes a command for the
// repair workflow (../repair/repair-workflow.ts: reboot, wait, escalate), and so does a spot eviction
// notice (replacement at once, drained within the notice, neither paced by budget nor breaker; run from
// the notice's Node event too, ../../bridge-events/eviction-notice.ts, so it need not wait for the
// sweep): the command names that workflow (ownWorkflow) and the disruption step starts it. A policy that
// replaces, or a node whose reboots are used up, becomes a command for the executor (a replacement, then
// the node deleted). Like every method, repair only decides: it starts no workflow itself.
//
// Forceful in the executor's terms, because the executor's budget counts a NotReady node as disrupting,
// and an unhealthy node is NotReady by nature: with it, one NotReady node would use up its own NodePool's
// budget and never be repaired. Repair computes its Unhealthy budget itself (decisions/node-repair/
// candidates.ts), counting nodes being disrupted but not nodes that are merely unhealthy. Like upstream's
// repair, it ignores karpenter.sh/do-not-disrupt: a broken node protects nothing.
import { allowedDisruptions } from '../../../decisions/budgets.js';
import {
  hasDisruptedTaint,
  isMarkedForDisruption,
  replacementBackoffOf,
} from '../../../decisions/disruption-state.js';
import { breakerMessage } from '../../../decisions/node-repair/breaker.js';
import { selectRepairs } from '../../../decisions/node-repair/candidates.js';
import { firstStep } from '../../../decisions/node-repair/escalation.js';
import { describeMatch } from '../../../decisions/node-repair/policies.js';
import { isConditionTrue } from '../../../decisions/conditions.js';
import { ConditionTypes, type NodeClaim } from '../../../models/karpenter.js';
import { RepairNames } from '../../../runtime/function-names.js';
import { rebootRecordOf } from '../repair/repair-activities.js';
import { publishRepairBlocked } from '../repair/repair-events.js';
import { repairInputFor } from '../repair/repair-input.js';
import { REPAIR_WORKFLOW } from '../repair/repair-workflow.js';
import { candidateOf, commandFor } from './command.js';
import type { DisruptionCommand, DisruptionMethod } from './method.js';

export const repairMethod: DisruptionMethod = {
  name: 'repair',
  reason: 'Unhealthy',
  class: 'forceful',
  consolidationType: '',
  workflow: REPAIR_WORKFLOW,
  appliesTo: () => true,
  async computeCommands(pass) {
    const { deps } = pass.sweep;
    const settings = deps.settings.repair;
    if (!settings.enabled) return [];
    const now = pass.now;
    const held = (c: NodeClaim) => {
      const until = Date.parse(replacementBackoffOf(c).backoffUntil ?? '');
      return Number.isFinite(until) && until > now.getTime();
    };
    const inputs = pass.nodeClaims.map((nodeClaim) => {
      const nodes = pass.nodesFor(nodeClaim);
      return {
        name: nodeClaim.metadata.name,
        node: nodes[0],
        initialized: isConditionTrue(nodeClaim.status?.conditions, ConditionTypes.initialized),
        disrupting:
          Boolean(nodeClaim.metadata.deletionTimestamp) ||
          isMarkedForDisruption(nodeClaim) ||
          nodes.some(hasDisruptedTaint) ||
          held(nodeClaim),
      };
    });
    const selection = selectRepairs({
      nodeClaims: inputs,
      breakerNodes: pass.nodeClaims.flatMap((c) => pass.nodesFor(c)),
      policies: settings.policies,
      allowed: (budgetNodes) => allowedDisruptions(pass.nodePool, 'Unhealthy', budgetNodes, now).allowed,
      now,
    });
    const byName = new Map(pass.nodeClaims.map((c) => [c.metadata.name, c]));
    for (const blocked of selection.blocked) {
      const nodeClaim = byName.get(blocked.name);
      if (!nodeClaim) continue;
      await publishRepairBlocked(deps, nodeClaim, pass.nodesFor(nodeClaim)[0], breakerMessage('nodepool'));
    }
    if (selection.blocked.length > 0) {
      deps.log.warn('node repair held by the breaker', {
        nodePool: pass.nodePool.metadata.name,
        unhealthy: selection.breaker.unhealthy,
        total: selection.breaker.total,
        threshold: selection.breaker.threshold,
      });
    }
    const commands: DisruptionCommand[] = [];
    for (const { name, match } of selection.start) {
      const nodeClaim = byName.get(name);
      if (!nodeClaim) continue;
      const step = firstStep(match.policy.action, rebootRecordOf(nodeClaim), escalationOf(settings), now);
      if (step === 'replace') {
        commands.push(
          commandFor(repairMethod, pass, {
            candidates: [candidateOf(nodeClaim)],
            replacements: [{}],
            detail: describeMatch(match),
            attempt: replacementBackoffOf(nodeClaim).attempts,
          }),
        );
      } else {
        const input = repairInputFor(pass.sweep, pass.nodePool, nodeClaim, match, step);
        if (!input) continue;
        commands.push(
          commandFor(repairMethod, pass, {
            candidates: [candidateOf(nodeClaim)],
            detail: input.detail,
            attempt: replacementBackoffOf(nodeClaim).attempts,
            ownWorkflow: { orchestration: RepairNames.orchestration, input },
          }),
        );
      }
    }
    return commands;
  },
};

function escalationOf(settings: { maxReboots: number; rebootRecoverySeconds: number }) {
  return { maxReboots: settings.maxReboots, recoveryMs: settings.rebootRecoverySeconds * 1000 };
}
