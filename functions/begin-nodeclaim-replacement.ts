import { ReplacementNames } from '../shared/runtime/function-names.js';
import { getDependencies } from '../shared/lifecycle/dependencies.js';
import { beginReplacement, type ReplacementInput } from '../shared/lifecycle/disruption/replacement.js';
import type { ActivityFunctionDefinition } from '../shared/runtime/definitions.js';
import { registerWithAzureFunctions } from '../shared/runtime/azure-functions.js';

/** Activity: marks the old NodeClaim and taints its Node karpenter.sh/disrupted:NoSchedule. */
export const beginNodeClaimReplacement: ActivityFunctionDefinition = {
  kind: 'activity',
  name: ReplacementNames.begin,
  handler: (input) => beginReplacement(getDependencies(), input as ReplacementInput),
};

registerWithAzureFunctions(beginNodeClaimReplacement);
