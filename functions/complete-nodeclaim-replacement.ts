import { ReplacementNames } from '../shared/runtime/function-names.js';
import { getDependencies } from '../shared/lifecycle/dependencies.js';
import { completeReplacement, type ReplacementInput } from '../shared/lifecycle/disruption/replacement.js';
import type { ActivityFunctionDefinition } from '../shared/runtime/definitions.js';
import { registerWithAzureFunctions } from '../shared/runtime/azure-functions.js';

/** Activity: deletes the old NodeClaim once its replacement is Initialized. */
export const completeNodeClaimReplacement: ActivityFunctionDefinition = {
  kind: 'activity',
  name: ReplacementNames.complete,
  handler: (input, context) => completeReplacement(getDependencies(), input as ReplacementInput, context),
};

registerWithAzureFunctions(completeNodeClaimReplacement);
