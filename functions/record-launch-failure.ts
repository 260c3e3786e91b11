import { LaunchMonitorNames } from '../shared/runtime/function-names.js';
import { getDependencies } from '../shared/lifecycle/dependencies.js';
import { type RecordLaunchFailureInput } from '../shared/lifecycle/launch/launch-monitor.js';
import { recordMonitorFailure } from '../shared/lifecycle/launch/launch-outcome.js';
import type { ActivityFunctionDefinition } from '../shared/runtime/definitions.js';
import { registerWithAzureFunctions } from '../shared/runtime/azure-functions.js';

/** Activity: Launched=False with the classified reason, offering marked unavailable, VM and NodeClaim deleted. */
export const recordLaunchFailure: ActivityFunctionDefinition = {
  kind: 'activity',
  name: LaunchMonitorNames.recordLaunchFailure,
  handler: (input, context) =>
    recordMonitorFailure(getDependencies(), input as RecordLaunchFailureInput, context),
};

registerWithAzureFunctions(recordLaunchFailure);
