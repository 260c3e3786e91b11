import { LaunchMonitorNames } from '../shared/runtime/function-names.js';
import { getDependencies } from '../shared/lifecycle/dependencies.js';
import { type LaunchMonitorInput } from '../shared/lifecycle/launch/launch-monitor.js';
import { recordLaunchSuccess as record } from '../shared/lifecycle/launch/launch-outcome.js';
import type { ActivityFunctionDefinition } from '../shared/runtime/definitions.js';
import { registerWithAzureFunctions } from '../shared/runtime/azure-functions.js';

/** Activity: Launched=True, imageID, capacity and allocatable on the NodeClaim. */
export const recordLaunchSuccess: ActivityFunctionDefinition = {
  kind: 'activity',
  name: LaunchMonitorNames.recordLaunchSuccess,
  handler: (input) => record(getDependencies(), input as LaunchMonitorInput),
};

registerWithAzureFunctions(recordLaunchSuccess);
