// Expiration, as upstream Karpenter: a NodeClaim whose expireAfter has passed since its creation is
// deleted, forcefully. No budget applies and no replacement is launched first: termination drains the node
// (bounded by its terminationGracePeriod) and the evicted pods, pending again, are provisioned for.
import { expiresAt, isExpired } from '../../decisions/consolidation/timing.js';
import { isManagedNodeClaim } from '../../decisions/ownership.js';
import { WellKnown } from '../../models/karpenter.js';
import { forEachObject, type SweepStep } from '../sweep/step.js';
import { deleteNodeClaim } from '../termination/termination.js';
import { publishTerminating } from './blocked-events.js';

export const expirationStep: SweepStep = {
  name: 'expiration',
  run(context) {
    const now = context.deps.now();
    return forEachObject(
      context,
      'expiration',
      context.view.nodeClaims().filter((c) => isManagedNodeClaim(c) && isExpired(c, now)),
      (c) => c.metadata.name,
      async (nodeClaim) => {
        const { deps } = context;
        if (!(await deleteNodeClaim(deps, nodeClaim, context))) {
          context.view.removeNodeClaim(nodeClaim);
          return false;
        }
        await publishTerminating(deps, nodeClaim, context.view.nodesFor(nodeClaim), 'Expired');
        deps.metrics.increment('karpenter_nodeclaims_disrupted_total', {
          nodepool: nodeClaim.metadata.labels?.[WellKnown.nodePoolLabel] ?? '',
          reason: 'expired',
          outcome: 'deleted',
        });
        deps.log.info('deleting expired nodeclaim', {
          nodeClaim: nodeClaim.metadata.name,
          expireAfter: nodeClaim.spec.expireAfter,
          expiredAt: expiresAt(nodeClaim)?.toISOString(),
        });
        return true;
      },
    );
  },
};
