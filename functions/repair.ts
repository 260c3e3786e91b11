// The repair workflow of one unhealthy NodeClaim: reboot its VM and wait for the condition to clear, or
// escalate to a replacement; a spot eviction notice replaces at once and drains within the notice.
import { getDependencies } from '../shared/lifecycle/dependencies.js';
import {
  checkReplacement,
  launchReplacement,
  type ReplacementSpec,
} from '../shared/lifecycle/disruption/replacements.js';
import { outageTolerantActivity } from '../shared/lifecycle/outage-retry.js';
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
  repairOrchestrator,
  type RepairInput,
  type ReplaceOldInput,
} from '../shared/lifecycle/disruption/repair/repair-workflow.js';
import type { RebootRecord } from '../shared/decisions/node-repair/escalation.js';
import { orchestration, type FunctionDefinition } from '../shared/runtime/definitions.js';
import { RepairNames } from '../shared/runtime/function-names.js';

type Recorded = { repair: RepairInput; record: RebootRecord };

export const repairFunctions: readonly FunctionDefinition[] = [
  orchestration(RepairNames.orchestration, repairOrchestrator),
  // Marks the NodeClaim DisruptionReason=True (Unhealthy) and taints its Node.
  outageTolerantActivity(RepairNames.begin, (input: RepairInput) => beginRepair(getDependencies(), input)),
  // POST restart of the VM; returns the serialized poller.
  outageTolerantActivity(RepairNames.reboot, (input: RepairInput) => rebootVm(getDependencies(), input)),
  // One poll of the restart's operation.
  outageTolerantActivity(RepairNames.pollReboot, (pollerState: string) =>
    pollReboot(getDependencies(), pollerState),
  ),
  // The reboot on the NodeClaim's annotations, and its event.
  outageTolerantActivity(RepairNames.recordReboot, (input: Recorded) =>
    recordReboot(getDependencies(), input),
  ),
  // Whether a repair policy still matches the Node.
  outageTolerantActivity(RepairNames.check, (input: RepairInput) => checkHealth(getDependencies(), input)),
  // The reboot helped: untaint, unmark, event.
  outageTolerantActivity(RepairNames.recover, (input: Recorded) => finishRecovered(getDependencies(), input)),
  // The preempted spot offering into the unavailable-offerings table.
  outageTolerantActivity(RepairNames.learnPreemption, (input: RepairInput) =>
    learnPreemption(getDependencies(), input),
  ),
  // Creates the replacement NodeClaim from the NodePool's current template and launches it.
  outageTolerantActivity(RepairNames.launchReplacement, (input: ReplacementSpec, context) =>
    launchReplacement(getDependencies(), input, context),
  ),
  // Whether the replacement is Initialized, pending or failed.
  outageTolerantActivity(RepairNames.checkReplacement, (name: string) =>
    checkReplacement(getDependencies(), name),
  ),
  // Deletes the unhealthy NodeClaim; termination drains it.
  outageTolerantActivity(RepairNames.replace, (input: ReplaceOldInput, context) =>
    deleteRepaired(getDependencies(), input, context),
  ),
];
