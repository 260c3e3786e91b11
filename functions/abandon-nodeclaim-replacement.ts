import { ReplacementNames } from '../shared/runtime/function-names.js';
import { getDependencies } from '../shared/lifecycle/dependencies.js';
import { abandonReplacement, type AbandonInput } from '../shared/lifecycle/disruption/replacement.js';
import type { ActivityFunctionDefinition } from '../shared/runtime/definitions.js';
import { registerWithAzureFunctions } from '../shared/runtime/azure-functions.js';

/** Activity: puts the old node back in service after a failed replacement, with a backoff. */
export const abandonNodeClaimReplacement: ActivityFunctionDefinition = {
  kind: 'activity',
  name: ReplacementNames.abandon,
  handler: (input) => abandonReplacement(getDependencies(), input as AbandonInput),
};

registerWithAzureFunctions(abandonNodeClaimReplacement);
