// The sweep step that keeps each NodePool's rollout workflow running when the NodePool needs one: drifted
// NodeClaims and no rollout of its current target yet (a change to roll out), a rollout in progress whose
// workflow is gone (a host killed, a workflow failed after an outage), or a halted one the user asked to
// resume. The workflow's instance ID is rollout-<NodePool uid>-<target>, so starts that race find each
// other (host.json and the local host refuse to restart a running instance), and a finished instance of
// the same ID is purged first, as the disruption step does. The step runs after drift marking and
// before the disruption step: a NodePool that drifted in this sweep starts its rollout in it, though its
// canary is replaced only from the next pass, once the workflow has written the floor.
import {
  isDrifted,
  rolloutInstanceId,
  rolloutTargetOf,
  rolloutWorkflowWanted,
} from '../../../decisions/rollout.js';
import type { NodePool } from '../../../models/karpenter.js';
import { isOrchestrationActive } from '../../../runtime/definitions.js';
import { RolloutNames } from '../../../runtime/function-names.js';
import { forEachObject, type SweepContext, type SweepStep } from '../../sweep-step/sweep-step.js';
import { nodeClaimsByPool, nodePoolsInScope } from '../scope.js';
import type { RolloutInput } from './rollout-workflow.js';

export const rolloutStep: SweepStep = {
  name: 'rollout',
  run(context) {
    const policy = context.deps.settings.rollout.policy;
    const classes = new Map(context.view.snapshot.nodeClasses.map((c) => [c.metadata.name, c]));
    const byPool = nodeClaimsByPool(context.view.nodeClaims());
    const work = nodePoolsInScope(context).flatMap((nodePool) => {
      const target = rolloutTargetOf(nodePool, classes.get(nodePool.spec.template.spec.nodeClassRef.name));
      const drifted = (byPool.get(nodePool.metadata.name) ?? []).some(isDrifted);
      const wanted = rolloutWorkflowWanted(nodePool, target, drifted, policy);
      return wanted === undefined ? [] : [{ nodePool, target: wanted }];
    });
    return forEachObject(
      context,
      'rollout',
      work,
      (w) => w.nodePool.metadata.name,
      (w) => ensureRollout(context, w.nodePool, w.target),
    );
  },
};

/** Starts the rollout workflow of `target` unless it runs; true when it started one. */
async function ensureRollout(context: SweepContext, nodePool: NodePool, target: string): Promise<boolean> {
  const { orchestrations, deps } = context;
  const instanceId = rolloutInstanceId(nodePool.metadata.uid ?? '', target);
  const existing = await orchestrations.getStatus(instanceId);
  if (isOrchestrationActive(existing)) return false;
  if (existing) await orchestrations.purge(instanceId);
  const input: RolloutInput = {
    nodePool: { name: nodePool.metadata.name, uid: nodePool.metadata.uid ?? '' },
    target,
    pollSeconds: deps.settings.rollout.pollSeconds,
  };
  await orchestrations.startNew(RolloutNames.orchestration, { instanceId, input });
  deps.log.info('rollout workflow started', {
    nodePool: nodePool.metadata.name,
    target,
    instanceId,
    ...(existing ? { previous: existing.runtimeStatus } : {}),
  });
  return true;
}
