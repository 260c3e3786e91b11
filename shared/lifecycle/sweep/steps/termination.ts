// Deleted NodeClaims whose termination orchestration is missing (a lost bridge event) get one.
import { needsTermination, reconcileTermination } from '../../termination/termination.js';
import { forEachObject, nameOf, type SweepStep } from '../../sweep-step/sweep-step.js';

export const terminationStep: SweepStep = {
  name: 'termination',
  run: (context) =>
    forEachObject(
      context,
      'termination',
      context.view.nodeClaims().filter(needsTermination),
      nameOf,
      async (nodeClaim) => {
        return (await reconcileTermination(context.deps, nodeClaim, context)) === 'started';
      },
    ),
};
