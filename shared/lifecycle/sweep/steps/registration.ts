// Registration for every launched NodeClaim whose Node has not been synced yet: the sweep's way to the
// same reconcileRegistration that Node events drive.
import { needsRegistration, reconcileRegistration } from '../../node-join/registration.js';
import { forEachObject, nameOf, type SweepStep } from '../../sweep-step/sweep-step.js';

export const registrationStep: SweepStep = {
  name: 'registration',
  run: (context) =>
    forEachObject(
      context,
      'registration',
      context.view.nodeClaims().filter(needsRegistration),
      nameOf,
      async (nodeClaim) => {
        const result = await reconcileRegistration(context.deps, nodeClaim, context.view.nodesFor(nodeClaim));
        if (result.outcome === 'nodeclaim-gone') {
          context.view.removeNodeClaim(nodeClaim);
          return false;
        }
        if (result.outcome === 'skipped') return false;
        context.view.updateNodeClaim(result.nodeClaim);
        if (result.outcome !== 'registered') return result.nodeClaim !== nodeClaim;
        context.view.updateNode(result.node);
        return result.nodeWritten || result.statusWritten;
      },
    ),
};
