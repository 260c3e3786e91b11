// The safety net for launch: a NodeClaim that still has no providerID some seconds after it was created
// (its bridge event was lost, or its launch was blocked by a class that has since appeared) is launched
// here. The grace period leaves the event path to go first; a race between the two is harmless, as the
// launch claims the NodeClaim with a resourceVersion-guarded write before any PUT.
import { randomUUID } from 'node:crypto';
import { findCondition } from '../../../decisions/conditions.js';
import { isManagedNodeClaim } from '../../../decisions/ownership.js';
import type { NodeClaim } from '../../../models/index.js';
import { ConditionTypes } from '../../../models/karpenter.js';
import { isRetriedLaunchBlock } from '../../launch/block-reasons.js';
import { LaunchInProgressError, reconcileLaunch } from '../../launch/launch.js';
import { forEachObject, nameOf, type SweepStep } from '../../sweep-step/sweep-step.js';

export const LAUNCH_GRACE_MS = 10_000;

export const launchStep: SweepStep = {
  name: 'launch',
  run: (context) => {
    const now = context.deps.now().getTime();
    return forEachObject(
      context,
      'launch',
      context.view.nodeClaims().filter((nodeClaim) => awaitsLaunch(nodeClaim, now)),
      nameOf,
      async (nodeClaim) => {
        try {
          const result = await reconcileLaunch(context.deps, nodeClaim.metadata.name, {
            orchestrations: context.orchestrations,
            invocationId: randomUUID(),
          });
          return result.action === 'launched' || result.action === 'failed';
        } catch (error) {
          // Another launch of the same NodeClaim is in flight: it will finish what this one started.
          if (error instanceof LaunchInProgressError) return false;
          throw error;
        }
      },
    );
  },
};

function awaitsLaunch(nodeClaim: NodeClaim, now: number): boolean {
  if (
    !isManagedNodeClaim(nodeClaim) ||
    nodeClaim.metadata.deletionTimestamp ||
    nodeClaim.status?.providerID
  ) {
    return false;
  }
  const created = Date.parse(nodeClaim.metadata.creationTimestamp ?? '');
  if (!Number.isFinite(created) || now - created < LAUNCH_GRACE_MS) return false;
  const launched = findCondition(nodeClaim.status?.conditions, ConditionTypes.launched);
  return launched === undefined || (launched.status === 'False' && isRetriedLaunchBlock(launched.reason));
}
