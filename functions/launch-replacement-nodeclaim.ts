import { ReplacementNames } from '../shared/runtime/function-names.js';
import { getDependencies } from '../shared/lifecycle/dependencies.js';
import { launchReplacement, type ReplacementInput } from '../shared/lifecycle/disruption/replacement.js';
import type { ActivityFunctionDefinition } from '../shared/runtime/definitions.js';
import { registerWithAzureFunctions } from '../shared/runtime/azure-functions.js';

/** Activity: creates the replacement NodeClaim from the NodePool's current template and launches it. */
export const launchReplacementNodeClaim: ActivityFunctionDefinition = {
  kind: 'activity',
  name: ReplacementNames.launch,
  handler: (input, context) => launchReplacement(getDependencies(), input as ReplacementInput, context),
};

registerWithAzureFunctions(launchReplacementNodeClaim);
