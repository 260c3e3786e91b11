// The repair workflow of one unhealthy NodeClaim: reboot its VM and wait for the condition to clear, or
// escalate to a replacement; a spot eviction notice replaces at once and drains within the notice.
import type { DependencySource } from '../shared/lifecycle/dependencies.js';
import { checkReplacement, launchReplacement } from '../shared/lifecycle/disruption/replacements.js';
import { outageTolerantRegistration } from '../shared/lifecycle/durable/durable-activity.js';
import {
  beginRepair,
  checkHealth,
  deleteRepaired,
  finishRecovered,
  learnPreemption,
  pollReboot,
  rebootVm,
  recordReboot,
} from '../shared/lifecycle/disruption/repair/repair-activities.js';
import {
  RepairActivities,
  repairOrchestrator,
} from '../shared/lifecycle/disruption/repair/repair-workflow.js';
import { orchestration, type FunctionDefinition } from '../shared/runtime/definitions.js';
import { RepairNames } from '../shared/runtime/function-names.js';

export function repairFunctions(getDependencies: DependencySource): readonly FunctionDefinition[] {
  return [
    orchestration(RepairNames.orchestration, repairOrchestrator),
    // Marks the NodeClaim DisruptionReason=True (Unhealthy) and taints its Node.
    outageTolerantRegistration(RepairActivities.begin, (input) => beginRepair(getDependencies(), input)),
    // POST restart of the VM; returns the serialized poller.
    outageTolerantRegistration(RepairActivities.reboot, (input) => rebootVm(getDependencies(), input)),
    // One poll of the restart's operation.
    outageTolerantRegistration(RepairActivities.pollReboot, (pollerState) =>
      pollReboot(getDependencies(), pollerState),
    ),
    // The reboot on the NodeClaim's annotations, and its event.
    outageTolerantRegistration(RepairActivities.recordReboot, (input) =>
      recordReboot(getDependencies(), input),
    ),
    // Whether a repair policy still matches the Node.
    outageTolerantRegistration(RepairActivities.check, (input) => checkHealth(getDependencies(), input)),
    // The reboot helped: untaint, unmark, event.
    outageTolerantRegistration(RepairActivities.recover, (input) =>
      finishRecovered(getDependencies(), input),
    ),
    // The preempted spot offering into the unavailable-offerings table.
    outageTolerantRegistration(RepairActivities.learnPreemption, (input) =>
      learnPreemption(getDependencies(), input),
    ),
    // Creates the replacement NodeClaim from the NodePool's current template and launches it.
    outageTolerantRegistration(RepairActivities.launchReplacement, (input, context) =>
      launchReplacement(getDependencies(), input, context),
    ),
    // Whether the replacement is Initialized, pending or failed.
    outageTolerantRegistration(RepairActivities.checkReplacement, (name) =>
      checkReplacement(getDependencies(), name),
    ),
    // Deletes the unhealthy NodeClaim; termination drains it.
    outageTolerantRegistration(RepairActivities.replace, (input, context) =>
      deleteRepaired(getDependencies(), input, context),
    ),
  ];
}
