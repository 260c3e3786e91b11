import { ReplacementNames } from '../shared/runtime/function-names.js';
import { getDependencies } from '../shared/lifecycle/dependencies.js';
import { checkReplacement, type ReplacementInput } from '../shared/lifecycle/disruption/replacement.js';
import type { ActivityFunctionDefinition } from '../shared/runtime/definitions.js';
import { registerWithAzureFunctions } from '../shared/runtime/azure-functions.js';

/** Activity: reports whether the replacement NodeClaim is Initialized, pending or failed. */
export const checkReplacementNodeClaim: ActivityFunctionDefinition = {
  kind: 'activity',
  name: ReplacementNames.check,
  handler: (input) => checkReplacement(getDependencies(), input as ReplacementInput),
};

registerWithAzureFunctions(checkReplacementNodeClaim);
