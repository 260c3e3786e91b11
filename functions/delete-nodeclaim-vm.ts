import { TerminationNames } from '../shared/runtime/function-names.js';
import { getDependencies } from '../shared/lifecycle/dependencies.js';
import {
  deleteNodeClaimVm as deleteVm,
  type TerminationInput,
} from '../shared/lifecycle/termination/termination.js';
import type { ActivityFunctionDefinition } from '../shared/runtime/definitions.js';
import { registerWithAzureFunctions } from '../shared/runtime/azure-functions.js';

/** Activity: stops the launch monitor and deletes the VM; reports 'Gone' once ARM no longer has it. */
export const deleteNodeClaimVm: ActivityFunctionDefinition = {
  kind: 'activity',
  name: TerminationNames.deleteVm,
  handler: (input, context) => deleteVm(getDependencies(), input as TerminationInput, context),
};

registerWithAzureFunctions(deleteNodeClaimVm);
