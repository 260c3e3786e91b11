// Every latency of the local stack, at speed 1 and scaled by --speed: the emulated VM creation and
// deletion, ARM's Retry-After, the launch monitor's poll interval, the lifecycle sweep's period and the
// simulated kubelet's boot, Ready and startup-taint delays. Pure, so the scaling is easy to check.

export interface StackTimings {
  speed: number;
  vmCreateMs: number;
  vmDeleteMs: number;
  /** Whole seconds (an HTTP header); 0 lets the launch monitor fall back to its 0.1 s floor. */
  retryAfterSeconds: number;
  pollIntervalSeconds: number;
  maxPollIntervalSeconds: number;
  /** NCRONTAB with seconds. */
  sweepSchedule: string;
  sweepPeriodSeconds: number;
  /** Replacement and drain orchestrations' poll. */
  disruptionPollSeconds: number;
  /** How long a disruption waits for its replacements' wakes before it looks (REPLACEMENT_FALLBACK_SECONDS). */
  replacementFallbackSeconds: number;
  replacementBackoffMinutes: number;
  /** Upstream's 15 s wait before a consolidation decision is checked again and acts. */
  consolidationValidationSeconds: number;
  /** Unscaled: the kubelet simulator divides them by `speed` itself. */
  kubelet: { bootDelayMs: number; readyDelayMs: number; startupTaintDelayMs: number };
  /**
   * Node repair: a VM restart, how long Ready may be False or Unknown before repair (the Azure provider's
   * 10 minutes, shortened), the time a rebooted node has to recover, Azure's spot eviction notice.
   */
  repair: {
    restartMs: number;
    readyTolerationSeconds: number;
    rebootRecoverySeconds: number;
    preemptionNoticeMs: number;
    preemptionDrainSeconds: number;
  };
  /**
   * Rollouts (ROLLOUT_*): the workflow's poll, each wave's soak, and the gates' bounds on a replacement
   * becoming Initialized and its pods Ready. The app's defaults (10 s, 5 minutes, 10 and 5 minutes) are
   * sized for Azure's minutes-long VM creations; here a VM is up in seconds, so they shrink with the rest.
   */
  rollout: {
    pollSeconds: number;
    soakSeconds: number;
    initializedWithinSeconds: number;
    podReadyWithinSeconds: number;
  };
}

/** Roughly what the real thing takes, shortened so a scenario plays in about a minute at speed 1. */
const atSpeedOne = {
  vmCreateMs: 8_000,
  vmDeleteMs: 3_000,
  pollIntervalSeconds: 1,
  maxPollIntervalSeconds: 4,
  sweepPeriodSeconds: 5,
  disruptionPollSeconds: 1,
  // The app's default is 3 minutes, two to four times an Azure VM's creation and join; here a replacement
  // is Initialized in about 15 s, so a minute keeps that proportion with room, and a lost wake (a host
  // killed between a write and its raise, in the outage tests) costs a minute.
  replacementFallbackSeconds: 60,
  // The app's default is 5 minutes; a scenario would sit idle that long after one failed replacement.
  replacementBackoffMinutes: 0.25,
  consolidationValidationSeconds: 15,
  kubelet: { bootDelayMs: 3_000, readyDelayMs: 2_000, startupTaintDelayMs: 2_000 },
  // Azure's notice is about 30 s; the node is drained once its replacement is Initialized, at the latest
  // 25 s into the notice, so the pods have moved before the eviction. Ready's toleration is the Azure
  // provider's 10 minutes cut to 2 (a scenario that stops a kubelet would otherwise idle 10 minutes): still
  // far above how long a new node is Ready=False (the kubelet's ready delay), so nothing healthy is
  // repaired. The kube-controller-manager's grace period before Ready=Unknown runs on real time on top.
  repair: {
    restartMs: 3_000,
    readyTolerationSeconds: 120,
    rebootRecoverySeconds: 60,
    preemptionNoticeMs: 30_000,
    preemptionDrainSeconds: 25,
  },
  // The soak is long enough for a crash-looping pod to restart past ROLLOUT_MAX_POD_RESTARTS (the kubelet
  // simulator restarts a crashing container every 10 s), short enough that a ten-node rollout of five
  // waves plays in a few minutes. A pod gets 30 s to be Ready on a node that is up, where a healthy one
  // takes about two (the simulator's start delay); a replacement 60 s to initialize, about 15 normally.
  rollout: { pollSeconds: 2, soakSeconds: 30, initializedWithinSeconds: 60, podReadyWithinSeconds: 30 },
};

/** The launch monitor's own floor (MIN_POLL_INTERVAL_SECONDS). */
const minPollSeconds = 0.1;

export function stackTimings(speed: number): StackTimings {
  if (!(speed > 0) || !Number.isFinite(speed))
    throw new Error(`speed must be a positive number, got ${speed}`);
  const pollIntervalSeconds = Math.max(minPollSeconds, round(atSpeedOne.pollIntervalSeconds / speed));
  // The NCRONTAB seconds field cannot go below one second.
  const sweepPeriodSeconds = Math.max(1, Math.round(atSpeedOne.sweepPeriodSeconds / speed));
  return {
    speed,
    vmCreateMs: Math.round(atSpeedOne.vmCreateMs / speed),
    vmDeleteMs: Math.round(atSpeedOne.vmDeleteMs / speed),
    retryAfterSeconds: Math.round(1 / speed),
    pollIntervalSeconds,
    maxPollIntervalSeconds: Math.max(pollIntervalSeconds, round(atSpeedOne.maxPollIntervalSeconds / speed)),
    sweepSchedule: `*/${sweepPeriodSeconds} * * * * *`,
    sweepPeriodSeconds,
    disruptionPollSeconds: Math.max(minPollSeconds, round(atSpeedOne.disruptionPollSeconds / speed)),
    replacementFallbackSeconds: Math.max(1, round(atSpeedOne.replacementFallbackSeconds / speed)),
    replacementBackoffMinutes: round(atSpeedOne.replacementBackoffMinutes / speed),
    consolidationValidationSeconds: round(atSpeedOne.consolidationValidationSeconds / speed),
    kubelet: atSpeedOne.kubelet,
    repair: {
      restartMs: Math.round(atSpeedOne.repair.restartMs / speed),
      readyTolerationSeconds: round(atSpeedOne.repair.readyTolerationSeconds / speed),
      rebootRecoverySeconds: round(atSpeedOne.repair.rebootRecoverySeconds / speed),
      preemptionNoticeMs: Math.round(atSpeedOne.repair.preemptionNoticeMs / speed),
      preemptionDrainSeconds: round(atSpeedOne.repair.preemptionDrainSeconds / speed),
    },
    rollout: {
      pollSeconds: Math.max(minPollSeconds, round(atSpeedOne.rollout.pollSeconds / speed)),
      soakSeconds: round(atSpeedOne.rollout.soakSeconds / speed),
      initializedWithinSeconds: round(atSpeedOne.rollout.initializedWithinSeconds / speed),
      podReadyWithinSeconds: round(atSpeedOne.rollout.podReadyWithinSeconds / speed),
    },
  };
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}
