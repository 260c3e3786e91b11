// The provisioning workflow: a singleton orchestration batches provisionable-pod signals into windows,
// and one activity per window solves every provisionable pod and creates its NodeClaims. Both versions
// of the batcher are registered: signal.ts hands the singleton to the second, and the first stays until
// none runs it (docs/design.md, "Names are history").
import type { DependencySource } from '../shared/lifecycle/dependencies.js';
import { ProvisioningActivities, provisioningBatcher } from '../shared/lifecycle/provisioning/batcher.js';
import { provisioningBatcherV2 } from '../shared/lifecycle/provisioning/batcher-v2.js';
import { plainRegistration } from '../shared/lifecycle/durable/durable-activity.js';
import { provisionPendingPods } from '../shared/lifecycle/provisioning/provision.js';
import { orchestration, type FunctionDefinition } from '../shared/runtime/definitions.js';
import { ProvisioningNames } from '../shared/runtime/function-names.js';

export function provisioningFunctions(getDependencies: DependencySource): readonly FunctionDefinition[] {
  return [
    orchestration(ProvisioningNames.orchestration, provisioningBatcher),
    orchestration(ProvisioningNames.orchestrationV2, provisioningBatcherV2),
    plainRegistration(ProvisioningActivities.solve, (input) =>
      provisionPendingPods(getDependencies(), input.windowId),
    ),
  ];
}
