import { LaunchMonitorNames } from '../shared/runtime/function-names.js';
import { getDependencies } from '../shared/lifecycle/dependencies.js';
import { type PollVmCreationInput } from '../shared/lifecycle/launch/launch-monitor.js';
import { pollVmCreation as poll } from '../shared/lifecycle/launch/launch-outcome.js';
import type { ActivityFunctionDefinition } from '../shared/runtime/definitions.js';
import { registerWithAzureFunctions } from '../shared/runtime/azure-functions.js';

/** Activity: one poll of a VM's creation LRO (restores the serialized SDK poller). */
export const pollVmCreation: ActivityFunctionDefinition = {
  kind: 'activity',
  name: LaunchMonitorNames.pollVmCreation,
  handler: (input) => poll(getDependencies(), input as PollVmCreationInput),
};

registerWithAzureFunctions(pollVmCreation);
