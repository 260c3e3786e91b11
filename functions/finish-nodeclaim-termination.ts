import { TerminationNames } from '../shared/runtime/function-names.js';
import { getDependencies } from '../shared/lifecycle/dependencies.js';
import {
  finishNodeClaimTermination as finish,
  type TerminationInput,
} from '../shared/lifecycle/termination/termination.js';
import type { ActivityFunctionDefinition } from '../shared/runtime/definitions.js';
import { registerWithAzureFunctions } from '../shared/runtime/azure-functions.js';

/** Activity: deletes the Node and removes the NodeClaim's termination finalizer. */
export const finishNodeClaimTermination: ActivityFunctionDefinition = {
  kind: 'activity',
  name: TerminationNames.finish,
  handler: (input) => finish(getDependencies(), input as TerminationInput),
};

registerWithAzureFunctions(finishNodeClaimTermination);
