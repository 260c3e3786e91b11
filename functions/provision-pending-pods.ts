import { getDependencies } from '../shared/lifecycle/dependencies.js';
import { ProvisioningNames, type ProvisionWindowInput } from '../shared/lifecycle/provisioning/batcher.js';
import { provisionPendingPods } from '../shared/lifecycle/provisioning/provision.js';
import type { ActivityFunctionDefinition } from '../shared/runtime/definitions.js';
import { registerWithAzureFunctions } from '../shared/runtime/azure-functions.js';

/** Activity: one provisioning window's solve over every provisionable pod, and its NodeClaims. */
export const provisionPendingPodsFunction: ActivityFunctionDefinition = {
  kind: 'activity',
  name: ProvisioningNames.activity,
  handler: (input) => provisionPendingPods(getDependencies(), (input as ProvisionWindowInput).windowId),
};

registerWithAzureFunctions(provisionPendingPodsFunction);
