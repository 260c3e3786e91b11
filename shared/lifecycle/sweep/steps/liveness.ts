// Liveness: a NodeClaim that has not registered within the registration TTL is deleted.
import { reconcileLiveness } from '../../node-join/liveness.js';
import { forEachObject, nameOf, type SweepStep } from '../../sweep-step/sweep-step.js';

export const livenessStep: SweepStep = {
  name: 'liveness',
  run: (context) =>
    forEachObject(context, 'liveness', context.view.nodeClaims(), nameOf, async (nodeClaim) => {
      const result = await reconcileLiveness(context.deps, nodeClaim, context);
      if (result.outcome === 'deleted' || result.outcome === 'gone') context.view.removeNodeClaim(nodeClaim);
      return result.outcome === 'deleted';
    }),
};
