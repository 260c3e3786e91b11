// The repair workflow of one unhealthy NodeClaim (instance `repair-<uid>`), for the repairs that are more
// than a replacement: reboot before replace, and the spot preemption fast path. A plain replacement is
// the disruption executor's (methods/repair.ts decides which).
//
// Reboot: mark the NodeClaim (DisruptionReason=True, Unhealthy) and taint its Node, restart the VM
// through ARM (an LRO, polled like a create), then wait on durable timers for the condition to clear
// within REPAIR_REBOOT_RECOVERY_SECONDS: cleared → untaint and unmark; not cleared → reboot again while
// REPAIR_MAX_REBOOTS allows, else escalate: launch a replacement, wait until it is Initialized (or
// failed), delete the unhealthy NodeClaim. Every reboot and its time are in this orchestration's history
// (and its custom status), so a host killed anywhere replays to the same place: a reboot whose activity
// completed is never sent again, and an escalation that began goes on.
//
// Preemption: the spot offering is remembered as unavailable, a replacement launched at once (so it
// avoids that offering), and the old node drained when the replacement is Initialized or at the latest
// PREEMPTION_DRAIN_SECONDS after the notice, so its pods move before Azure evicts the VM.
import type * as df from 'durable-functions';
import type { RebootProgress, RebootStart } from '../../../cloudprovider/types.js';
import {
  afterReboot,
  rebootsLeftInRepair,
  type EscalationSettings,
  type FirstStep,
  type RebootRecord,
} from '../../../decisions/node-repair/escalation.js';
import type { RepairPolicy } from '../../../decisions/node-repair/policies.js';
import { RepairNames } from '../../../runtime/function-names.js';
import type { ReplacementCheck, ReplacementSpec } from '../replacements.js';
import { callThroughOutages, durableActivity } from '../../durable-activity.js';

/**
 * One repair at a time per NodeClaim, `repair-<uid>`: this workflow and the executor's replacement for the
 * repair method share the key, so the disruption step tends both alike.
 */
export const REPAIR_WORKFLOW = { per: 'candidate', instancePrefix: 'repair' } as const;

export const repairInstanceId = (nodeClaimUid: string): string =>
  `${REPAIR_WORKFLOW.instancePrefix}-${nodeClaimUid}`;

export interface RepairInput {
  nodeClaim: { name: string; uid: string; nodePool: string };
  vmName: string;
  policy: RepairPolicy;
  /** The matched condition's type and status, checked again after a reboot. */
  condition: { type: string; status: string; reason?: string };
  /** The DisruptionReason message and the events' words: the policy and the condition. */
  detail: string;
  firstStep: Exclude<FirstStep, 'replace'>;
  /** Reboots a previous repair of this NodeClaim tried (from its output). */
  previous: RebootRecord;
  escalation: EscalationSettings;
  pollSeconds: number;
  /** Preemption: drain the old node at the latest at this time (RFC 3339). */
  drainBy?: string;
  /** The replacement, should the repair come to one. */
  replacement: ReplacementSpec;
  /** How long a replacement may take to be Initialized (REPLACEMENT_TIMEOUT_MINUTES). */
  replacementTimeoutMinutes: number;
}

export type RepairOutput =
  | ({ outcome: 'Recovered' } & RebootRecord)
  | ({ outcome: 'Replaced'; replacement: string; replacementReady: boolean } & RebootRecord)
  | ({ outcome: 'Gone' } & RebootRecord);

export type RepairBegin = 'ok' | 'gone';
export type HealthCheck = 'healthy' | 'unhealthy' | 'gone';

/** The reboot as written on the NodeClaim (its annotations and event). */
export interface RecordedReboot {
  repair: RepairInput;
  record: RebootRecord;
}

/** One descriptor per activity: functions/repair.ts registers them, this workflow calls them. */
export const RepairActivities = {
  begin: durableActivity<RepairInput, RepairBegin>(RepairNames.begin),
  reboot: durableActivity<RepairInput, RebootStart>(RepairNames.reboot),
  pollReboot: durableActivity<string, RebootProgress>(RepairNames.pollReboot),
  recordReboot: durableActivity<RecordedReboot>(RepairNames.recordReboot),
  check: durableActivity<RepairInput, HealthCheck>(RepairNames.check),
  recover: durableActivity<RecordedReboot>(RepairNames.recover),
  learnPreemption: durableActivity<RepairInput>(RepairNames.learnPreemption),
  launchReplacement: durableActivity<ReplacementSpec, ReplacementCheck>(RepairNames.launchReplacement),
  checkReplacement: durableActivity<string, ReplacementCheck>(RepairNames.checkReplacement),
  replace: durableActivity<ReplaceOldInput>(RepairNames.replace),
};

export interface RepairStatus extends RebootRecord {
  phase: 'rebooting' | 'waiting-for-recovery' | 'replacing' | 'preempted';
}

export interface ReplaceOldInput {
  repair: RepairInput;
  /** Whether the replacement initialized: the event and log say so. */
  replacementReady: boolean;
  why: string;
}

export function* repairOrchestrator(
  context: df.OrchestrationContext,
): Generator<df.Task, RepairOutput, unknown> {
  const input = context.df.getInput<RepairInput>();
  let record: RebootRecord = { ...input.previous };
  const begun = yield* callThroughOutages(context, RepairActivities.begin, input);
  if (begun === 'gone') return { outcome: 'Gone', ...record };

  if (input.firstStep === 'preempted') {
    context.df.setCustomStatus({ phase: 'preempted', ...record } satisfies RepairStatus);
    yield* callThroughOutages(context, RepairActivities.learnPreemption, input);
    const drainBy = Date.parse(input.drainBy ?? '') || context.df.currentUtcDateTime.getTime();
    return yield* replaceOld(context, input, record, drainBy, 'spot eviction notice');
  }

  let why = '';
  // What the previous reboots leave is judged once, when the repair begins; this repair's own reboots
  // then count one by one, however long the checks between them take.
  const begunAt = context.df.currentUtcDateTime;
  let triedHere = 0;
  while (rebootsLeftInRepair(input.previous, triedHere, input.escalation, begunAt) > 0) {
    context.df.setCustomStatus({ phase: 'rebooting', ...record } satisfies RepairStatus);
    const rebooted = yield* rebootOnce(context, input);
    if (rebooted === 'gone') return { outcome: 'Gone', ...record };
    if (typeof rebooted === 'object') {
      why = `the restart failed: ${rebooted.failed}`;
      break;
    }
    triedHere += 1;
    record = { rebootsTried: record.rebootsTried + 1, lastRebootAt: rebooted };
    context.df.setCustomStatus({ phase: 'waiting-for-recovery', ...record } satisfies RepairStatus);
    yield* callThroughOutages(context, RepairActivities.recordReboot, { repair: input, record });
    const rebootedAt = new Date(rebooted);
    for (;;) {
      const now = context.df.currentUtcDateTime;
      yield context.df.createTimer(new Date(now.getTime() + input.pollSeconds * 1000));
      const health = yield* callThroughOutages(context, RepairActivities.check, input);
      if (health === 'gone') return { outcome: 'Gone', ...record };
      const next = afterReboot(
        health === 'healthy',
        rebootedAt,
        context.df.currentUtcDateTime,
        input.escalation,
      );
      if (next === 'recovered') {
        yield* callThroughOutages(context, RepairActivities.recover, { repair: input, record });
        return { outcome: 'Recovered', ...record };
      }
      if (next === 'escalate') break;
    }
    why = `${input.condition.type}=${input.condition.status} did not clear within ${input.escalation.recoveryMs / 1000} s of reboot ${record.rebootsTried}`;
  }
  if (!why) why = 'no reboot left';
  context.df.setCustomStatus({ phase: 'replacing', ...record } satisfies RepairStatus);
  // The replacement's time limit counts from the escalation, not from when the repair began.
  const until = context.df.currentUtcDateTime.getTime() + input.replacementTimeoutMinutes * 60_000;
  return yield* replaceOld(context, input, record, until, why);
}

/** Sends the restart and polls its operation; the time it finished, 'gone', or why it failed. */
function* rebootOnce(
  context: df.OrchestrationContext,
  input: RepairInput,
): Generator<df.Task, string | 'gone' | { failed: string }, unknown> {
  const started = yield* callThroughOutages(context, RepairActivities.reboot, input);
  if (started === 'gone' || 'failed' in started) return started;
  let pollerState = started.pollerState;
  for (;;) {
    const now = context.df.currentUtcDateTime.getTime();
    yield context.df.createTimer(new Date(now + input.pollSeconds * 1000));
    const polled = yield* callThroughOutages(context, RepairActivities.pollReboot, pollerState);
    if (polled.status === 'Succeeded') return context.df.currentUtcDateTime.toISOString();
    if (polled.status === 'Failed') return { failed: polled.error.message };
    pollerState = polled.pollerState;
  }
}

/**
 * Launches the replacement and waits until it is Initialized, it failed, or `until`; then the unhealthy
 * NodeClaim is deleted whatever became of the replacement: the node is broken (or about to be evicted),
 * and its pods are better pending, where provisioning sees them, than on it.
 */
function* replaceOld(
  context: df.OrchestrationContext,
  input: RepairInput,
  record: RebootRecord,
  until: number,
  why: string,
): Generator<df.Task, RepairOutput, unknown> {
  let check = yield* callThroughOutages(context, RepairActivities.launchReplacement, input.replacement);
  while (check.status !== 'Initialized' && check.status !== 'Failed') {
    const now = context.df.currentUtcDateTime.getTime();
    if (now >= until) break;
    yield context.df.createTimer(new Date(Math.min(until, now + input.pollSeconds * 1000)));
    check = yield* callThroughOutages(context, RepairActivities.checkReplacement, input.replacement.name);
    if (check.status === 'NotLaunched') {
      check = yield* callThroughOutages(context, RepairActivities.launchReplacement, input.replacement);
    }
  }
  const replacementReady = check.status === 'Initialized';
  const detail = check.status === 'Failed' ? `${why}; ${check.why}` : why;
  yield* callThroughOutages(context, RepairActivities.replace, {
    repair: input,
    replacementReady,
    why: detail,
  } satisfies ReplaceOldInput);
  return { outcome: 'Replaced', replacement: input.replacement.name, replacementReady, ...record };
}
