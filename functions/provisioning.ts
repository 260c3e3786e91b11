// The provisioning workflow: a singleton orchestration batches provisionable-pod signals into windows,
// and one activity per window solves every provisionable pod and creates its NodeClaims.
import type { DependencySource } from '../shared/lifecycle/dependencies.js';
import { ProvisioningActivities, provisioningBatcher } from '../shared/lifecycle/provisioning/batcher.js';
import { plainRegistration } from '../shared/lifecycle/durable/durable-activity.js';
import { provisionPendingPods } from '../shared/lifecycle/provisioning/provision.js';
import { orchestration, type FunctionDefinition } from '../shared/runtime/definitions.js';
import { ProvisioningNames } from '../shared/runtime/function-names.js';

export function provisioningFunctions(getDependencies: DependencySource): readonly FunctionDefinition[] {
  return [
    orchestration(ProvisioningNames.orchestration, provisioningBatcher),
    plainRegistration(ProvisioningActivities.solve, (input) =>
      provisionPendingPods(getDependencies(), input.windowId),
    ),
  ];
}
