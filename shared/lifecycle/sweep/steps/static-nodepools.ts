// Static NodePools (spec.replicas): the sweep keeps exactly that many NodeClaims, creating missing ones
// from the NodePool's current template (and launching them at once, so a replica does not wait for the
// bridge) and deleting extras through termination. The plan is decisions/static-replicas.ts.
import { randomUUID } from 'node:crypto';
import { deterministicNodeClaimName, nodeClaimFromTemplate } from '../../../decisions/nodeclaim-template.js';
import { planStaticReplicas, staticReplicaNames } from '../../../decisions/static-replicas.js';
import { isAlreadyExists } from '../../../kube/errors.js';
import { WellKnown, type NodeClaim, type NodePool } from '../../../models/karpenter.js';
import type { LifecycleDependencies } from '../../dependencies.js';
import { reconcileLaunch } from '../../launch/launch.js';
import { nodeClaimsByPool, nodePoolsInScope } from '../../disruption/scope.js';
import { deleteNodeClaim } from '../../termination/termination.js';
import {
  forEachObject,
  type StepReport,
  type SweepContext,
  type SweepStep,
} from '../../sweep-step/sweep-step.js';

type Action = { kind: 'create'; nodePool: NodePool; name: string } | { kind: 'remove'; nodeClaim: NodeClaim };

export const staticNodePoolsStep: SweepStep = {
  name: 'static-nodepools',
  async run(context) {
    const byPool = nodeClaimsByPool(context.view.nodeClaims());
    const taken = new Set(context.view.nodeClaims().map((c) => c.metadata.name));
    const actions: Action[] = [];
    for (const nodePool of nodePoolsInScope(context)) {
      if (nodePool.spec.replicas === undefined) continue;
      const claims = byPool.get(nodePool.metadata.name) ?? [];
      const plan = planStaticReplicas(nodePool, claims);
      const seed = nodePool.metadata.uid ?? nodePool.metadata.name;
      for (const name of staticReplicaNames(plan.create, taken, (slot) =>
        deterministicNodeClaimName(nodePool.metadata.name, `static/${seed}/${slot}`),
      )) {
        taken.add(name);
        actions.push({ kind: 'create', nodePool, name });
      }
      const byName = new Map(claims.map((c) => [c.metadata.name, c]));
      for (const name of plan.remove) {
        const nodeClaim = byName.get(name);
        if (nodeClaim) actions.push({ kind: 'remove', nodeClaim });
      }
    }
    const report: StepReport = await forEachObject(
      context,
      'static-nodepools',
      actions,
      (a) => (a.kind === 'create' ? `create ${a.name}` : `remove ${a.nodeClaim.metadata.name}`),
      (a) =>
        a.kind === 'create'
          ? createReplica(context, a.nodePool, a.name)
          : removeReplica(context, a.nodeClaim),
    );
    return report;
  },
};

async function createReplica(context: SweepContext, nodePool: NodePool, name: string): Promise<boolean> {
  const { deps } = context;
  const nodeClass = context.view.snapshot.nodeClasses.find(
    (c) => c.metadata.name === nodePool.spec.template.spec.nodeClassRef.name,
  );
  try {
    const created = await deps.objects.nodeClaims.create(
      nodeClaimFromTemplate({ nodePool, nodeClass, name }),
    );
    context.view.updateNodeClaim(created);
  } catch (error) {
    // A concurrent sweep created the same deterministic name: that replica exists, which is the goal.
    if (isAlreadyExists(error)) return false;
    throw error;
  }
  deps.metrics.increment('karpenter_nodeclaims_created_total', {
    nodepool: nodePool.metadata.name,
    reason: 'static',
    // A static replica is the NodePool's template as written, never solved, so no minValues is lowered.
    min_values_relaxed: 'false',
  });
  deps.log.info('static NodePool replica created', { nodePool: nodePool.metadata.name, nodeClaim: name });
  await launchNow(deps, context, name);
  return true;
}

async function launchNow(deps: LifecycleDependencies, context: SweepContext, name: string): Promise<void> {
  const result = await reconcileLaunch(deps, name, {
    orchestrations: context.orchestrations,
    invocationId: randomUUID(),
  });
  if (result.action !== 'launched')
    deps.log.info('static replica not launched yet', { nodeClaim: name, ...result });
}

async function removeReplica(context: SweepContext, nodeClaim: NodeClaim): Promise<boolean> {
  if (!(await deleteNodeClaim(context.deps, nodeClaim, context))) return false;
  context.deps.log.info('static NodePool extra removed', {
    nodePool: nodeClaim.metadata.labels?.[WellKnown.nodePoolLabel],
    nodeClaim: nodeClaim.metadata.name,
  });
  return true;
}
