// A spot eviction notice answered from the bridge's Node event: Azure evicts about 30 s after the notice
// (PreemptionScheduled=True on the Node), and waiting for the next sweep (every 15 s, and a sweep takes
// seconds) could spend most of that. As upstream's interruption controller reacts to each message, the
// Node event runs node repair at once: the sweep's disruption step with only the repair method, confined
// to the Node's NodePool (as freed-slot.ts runs it for a freed budget slot), which starts the repair
// workflow (replacement at once, drain within the notice).
//
// Level-triggered and safe to repeat or race with a sweep: the Node and its NodeClaim are read fresh;
// nothing runs unless NodeRepair is on and a repair policy treats the condition as a due preemption;
// a node already marked, tainted or deleting is left alone, and otherwise repair's own checks decide
// again. The workflow's instance ID is `repair-<uid>`, and a running one is never started twice; every
// write of the step is guarded, as the sweep's are, so it needs no lease.
import { evictionNoticeMatch, evictionNoticeVerdict } from '../../decisions/node-repair/eviction-notice.js';
import { WellKnown } from '../../models/karpenter.js';
import type { Node } from '../../models/kube.js';
import { isOrchestrationActive, type HandlerContext } from '../../runtime/definitions.js';
import type { LifecycleDependencies } from '../dependencies.js';
import { disruptionStepOf } from '../disruption/disruption-step.js';
import { repairMethod } from '../disruption/methods/repair.js';
import { repairInstanceId } from '../disruption/repair/repair-workflow.js';
import { nodeClaimForProviderId } from '../nodeclaims/nodeclaim-nodes.js';
import { runSweepSteps, type SweepResult } from '../sweep/sweep.js';

const repairStep = disruptionStepOf([repairMethod]);

export type EvictionNoticeOutcome =
  | { outcome: 'repair-off' }
  | { outcome: 'left'; why: string }
  | {
      outcome: 'repair-run';
      nodePool: string;
      nodeClaim: string;
      result: SweepResult;
      /** Whether `repair-<uid>` is running (or pending) after the pass, started by it or before. */
      workflowActive: boolean;
    };

export async function repairOnEvictionNotice(
  deps: LifecycleDependencies,
  context: Pick<HandlerContext, 'orchestrations' | 'log'>,
  node: Node,
): Promise<EvictionNoticeOutcome> {
  const settings = deps.settings.repair;
  if (!settings.enabled) return { outcome: 'repair-off' };
  const now = deps.now();
  // Most Node events carry no notice: decided before the NodeClaim is looked up.
  const match = evictionNoticeMatch(node, settings.policies, now);
  if (!match) return { outcome: 'left', why: 'no eviction notice' };
  const providerID = node.spec.providerID;
  const found = providerID ? await nodeClaimForProviderId(deps, providerID) : undefined;
  const verdict = evictionNoticeVerdict({ node, nodeClaim: found, match, now });
  if (!verdict.repairNow) return { outcome: 'left', why: verdict.why };
  const { nodeClaim } = verdict;
  const result = await runSweepSteps(deps, context, {
    steps: [repairStep],
    nodeClaimSelector: `${WellKnown.nodePoolLabel}=${verdict.nodePool}`,
  });
  const workflow = await context.orchestrations.getStatus(repairInstanceId(nodeClaim.metadata.uid ?? ''));
  return {
    outcome: 'repair-run',
    nodePool: verdict.nodePool,
    nodeClaim: nodeClaim.metadata.name,
    result,
    workflowActive: isOrchestrationActive(workflow),
  };
}

/** The outcome for a log line: what was decided, and what the repair pass did. */
export function describeEvictionNoticeOutcome(
  outcome: EvictionNoticeOutcome,
): Record<string, string | number | boolean> {
  switch (outcome.outcome) {
    case 'repair-off':
      return { outcome: outcome.outcome };
    case 'left':
      return { outcome: outcome.outcome, why: outcome.why };
    case 'repair-run': {
      const report = outcome.result.status === 'skipped' ? undefined : outcome.result.steps[0];
      return {
        outcome: outcome.outcome,
        nodePool: outcome.nodePool,
        nodeClaim: outcome.nodeClaim,
        workflowActive: outcome.workflowActive,
        ...(outcome.result.status === 'skipped' ? { skipped: outcome.result.reason } : {}),
        commandsStarted: report?.acted ?? 0,
        poolsFailed: report?.failed ?? 0,
      };
    }
  }
}
