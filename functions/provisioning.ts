// The provisioning workflow: a singleton orchestration batches provisionable-pod signals into windows,
// and one activity per window solves every provisionable pod and creates its NodeClaims.
import { getDependencies } from '../shared/lifecycle/dependencies.js';
import { provisioningBatcher, type ProvisionWindowInput } from '../shared/lifecycle/provisioning/batcher.js';
import { provisionPendingPods } from '../shared/lifecycle/provisioning/provision.js';
import { activity, orchestration, type FunctionDefinition } from '../shared/runtime/definitions.js';
import { ProvisioningNames } from '../shared/runtime/function-names.js';

export const provisioningFunctions: readonly FunctionDefinition[] = [
  orchestration(ProvisioningNames.orchestration, provisioningBatcher),
  activity(ProvisioningNames.activity, (input: ProvisionWindowInput) =>
    provisionPendingPods(getDependencies(), input.windowId),
  ),
];
