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

/**
 * The launch monitor. `orchestration` and the two activities only it calls (`pollVmCreation`,
 * `recordLaunchSuccess`) are the first version, kept registered for the instances started before the
 * upgrade (docs/design.md, "Names are history"); new monitors start as `orchestrationV2`, which waits for
 * the creation inside `awaitVmCreation` and shares `recordLaunchFailure` with the first.
 */
export const LaunchMonitorNames = {
  orchestration: 'launchMonitor',
  pollVmCreation: 'pollVmCreation',
  recordLaunchSuccess: 'recordLaunchSuccess',
  recordLaunchFailure: 'recordLaunchFailure',
  orchestrationV2: 'launchMonitorV2',
  awaitVmCreation: 'awaitVmCreation',
} as const;

/**
 * Termination. `orchestration` and its three activities are the first version, kept registered for the
 * instances started before the upgrade; new terminations start as `orchestrationV2`, whose one activity
 * `advance` drains, deletes the VM, waits for it to go and finishes, as far as it gets in one call.
 */
export const TerminationNames = {
  orchestration: 'terminateNodeClaim',
  drain: 'drainNodeClaim',
  deleteVm: 'deleteNodeClaimVm',
  finish: 'finishNodeClaimTermination',
  orchestrationV2: 'terminateNodeClaimV2',
  advance: 'advanceNodeClaimTermination',
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
  /** The second version (executor-v2.ts), woken by its replacements; started under the same IDs. */
  orchestrationV2: 'executeDisruptionCommandV2',
  /** The second version's check: one read, no wait inside the activity. */
  checkNow: 'checkDisruptionReplacementNow',
  /** The external event a replacement raises on its command when it is Initialized or has failed. */
  replacementChanged: 'replacement-changed',
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

/**
 * The provisioning batcher. `orchestration` is the first version, kept registered until no batcher runs
 * it (signal.ts hands the singleton over to `orchestrationV2`, which keeps one idle timer per window and
 * calls the same solve).
 */
export const ProvisioningNames = {
  orchestration: 'provisioningBatcher',
  orchestrationV2: 'provisioningBatcherV2',
  activity: 'provisionPendingPods',
  /** The singleton's instance ID. */
  instanceId: 'provisioning-batcher',
  /** The external event a provisionable pod raises. */
  podEvent: 'pod-provisionable',
} as const;

/**
 * The explain HTTP functions, one per subject kind (routes in shared/access/explain-http.ts). Not in
 * any durable history: a rename changes only the name the Functions host lists them under.
 */
export const ExplainNames = {
  pod: 'explainPod',
  node: 'explainNode',
  nodepool: 'explainNodePool',
  whatIf: 'explainWhatIf',
} as const;
