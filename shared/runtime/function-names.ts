// Every function's name, in one place. The Functions host registers each function under its name,
// orchestrations call their activities by it, and the lifecycle starts orchestrations by it. The names
// are recorded in durable histories (an orchestration replays its calls by name), so renaming one
// strands the instances in flight.

/** The functions triggered from outside the app: a queue and two timers. */
export const TriggerNames = {
  objectEvents: 'objectEvents',
  lifecycleSweep: 'lifecycleSweep',
  collectOrphanVms: 'collectOrphanVms',
} as const;

export const LaunchMonitorNames = {
  orchestration: 'launchMonitor',
  pollVmCreation: 'pollVmCreation',
  recordLaunchSuccess: 'recordLaunchSuccess',
  recordLaunchFailure: 'recordLaunchFailure',
} as const;

export const TerminationNames = {
  orchestration: 'terminateNodeClaim',
  drain: 'drainNodeClaim',
  deleteVm: 'deleteNodeClaimVm',
  finish: 'finishNodeClaimTermination',
} as const;

export const RepairNames = {
  orchestration: 'repairNodeClaim',
  begin: 'beginNodeClaimRepair',
  reboot: 'rebootNodeClaimVm',
  pollReboot: 'pollNodeClaimVmReboot',
  recordReboot: 'recordNodeClaimReboot',
  check: 'checkNodeClaimHealth',
  recover: 'finishRecoveredNodeClaimRepair',
  learnPreemption: 'learnSpotPreemption',
  launchReplacement: 'launchRepairReplacement',
  checkReplacement: 'checkRepairReplacement',
  replace: 'deleteRepairedNodeClaim',
} as const;

/**
 * The one disruption executor (shared/lifecycle/disruption/executor.ts), for every method's commands. It
 * replaced replaceNodeClaim and consolidateNodePool, whose instances in flight at an upgrade cannot be
 * replayed by it: see the disruption README ("Upgrading with workflows in flight").
 */
export const DisruptionNames = {
  orchestration: 'executeDisruptionCommand',
  validate: 'validateDisruptionCommand',
  begin: 'beginDisruptionCommand',
  launch: 'launchDisruptionReplacement',
  check: 'checkDisruptionReplacement',
  complete: 'completeDisruptionCommand',
  abandon: 'abandonDisruptionCommand',
} as const;

/**
 * A NodePool change rolled out under gates (shared/lifecycle/disruption/rollout/): one workflow per
 * NodePool and target, `rollout-<NodePool uid>-<target>`, whose state lives in the NodePool's annotation.
 */
export const RolloutNames = {
  orchestration: 'rollOutNodePool',
  begin: 'beginNodePoolRollout',
  poll: 'pollNodePoolRollout',
} as const;

export const ProvisioningNames = {
  orchestration: 'provisioningBatcher',
  activity: 'provisionPendingPods',
  /** The singleton's instance ID. */
  instanceId: 'provisioning-batcher',
  /** The external event a provisionable pod raises. */
  podEvent: 'pod-provisionable',
} as const;
