// The disruption executor, second version: the same steps as the first (executor.ts: validate, begin,
// launch, wait, complete or abandon), woken by its replacements instead of polling them. A replacement
// raises an external event on its command when node-join sets Initialized=True or its launch fails
// (replacement-wake.ts); an Initialized wake is taken as it is, any other wake checks that replacement
// with one read, and a fallback timer (REPLACEMENT_FALLBACK_SECONDS, 3 minutes, doubled after each look
// that found the replacements still on their way) checks every replacement no wake has answered, so a
// lost wake costs only time.
//
// Why: the first version's wait is a durable timer and a check that waits inside its activity for up to
// 45 s, round after round. Its Durable cost and the activity slot each waiting check holds both grow
// with how long a replacement takes; at 1,000 nodes, where a replacement took 77 s because the slots
// were full, it was 17 of a NodeClaim's 25 actions and half of the slot-seconds. A woken wait costs one
// event however long it lasts, and holds no slot.
//
// It is a new orchestration beside the first, which stays registered, unchanged, for the instances
// started before the upgrade (docs/design.md, "Names are history"); the instance ID is the same
// (command-workflow.ts), so the disruption step's "is it running" finds either version.
import type * as df from 'durable-functions';
import { DisruptionNames } from '../../runtime/function-names.js';
import { durableActivity } from '../durable/durable-activity.js';
import type { LifecycleDependencies } from '../dependencies.js';
import type { ExecutorInput } from './command-workflow.js';
import {
  executeCommand,
  replacementSpecs,
  specOf,
  type ExecutorOutcome,
  type ReplacementStep,
  type ReplacementWaitVersion,
} from './executor.js';
import type { ReplacementWake } from '../nodeclaims/replacement-wake.js';
import { checkReplacement, type ReplacementCheck } from './replacements.js';

/**
 * How long the wait gives the wakes before it looks at every replacement itself. A wake is lost only to a
 * host killed between its write and its raise, or to a replacement made before the annotation; a launch
 * deferred (ARM throttled it, or the bridge was launching the same NodeClaim) is launched by the bridge or
 * the sweep and wakes as any other. So the period is sized for cost: REPLACEMENT_FALLBACK_SECONDS (3
 * minutes) is longer than an Azure VM's creation and join, and a look that finds the replacements still
 * on their way shows their wakes are not lost but not yet due, so the next period doubles, up to
 * FALLBACK_MAX_DOUBLINGS times (a wake, or a look that finds a lost one, starts it over): a replacement
 * slowed by a capacity crunch or a busy cluster then costs a look or two, not one per period, and a lost
 * wake still holds its command up by 12 minutes at most.
 * At 1,000 nodes on one machine, where replacements took 47 to 87 s against a fallback of 9 s, the looks
 * were half of the executor's actions.
 */
export function fallbackMs(input: ExecutorInput, looksInARow: number): number {
  if (input.fallbackSeconds === undefined) {
    // Started before the setting: the same timers on replay as when it ran.
    return input.pollSeconds * LEGACY_POLLS_PER_FALLBACK * 1000;
  }
  return input.fallbackSeconds * 1000 * 2 ** Math.min(looksInARow, FALLBACK_MAX_DOUBLINGS);
}

/** The fallback's doublings after looks in a row that found nothing lost: at most 4× the setting. */
export const FALLBACK_MAX_DOUBLINGS = 2;

/** The fallback of a workflow started before REPLACEMENT_FALLBACK_SECONDS: this many polls. */
const LEGACY_POLLS_PER_FALLBACK = 36;

const checkNow = durableActivity<ReplacementStep, ReplacementCheck>(DisruptionNames.checkNow);

const wokenByReplacements: ReplacementWaitVersion = {
  round: function* (context, input, until, looksInARow) {
    const now = context.df.currentUtcDateTime.getTime();
    const fallbackAt = now + fallbackMs(input, looksInARow);
    const wake = yield* wakeOrTimer(context, new Date(Math.min(until.getTime(), fallbackAt)));
    if (!wake) return { check: 'all' };
    const index = replacementSpecs(input.command).findIndex((spec) => spec.name === wake.replacement);
    // A wake naming none of this command's replacements (a stale one) is a reason to look at all.
    if (index < 0) return { check: 'all' };
    return wake.status === 'Initialized' ? { initialized: index } : { check: index };
  },
  check: checkNow,
};

/** The activity this version calls that the first does not: functions/disruption.ts registers it. */
export const DisruptionV2Activities = { checkNow };

export function* disruptionOrchestratorV2(
  context: df.OrchestrationContext,
): Generator<df.Task, ExecutorOutcome | undefined, unknown> {
  return yield* executeCommand(context, wokenByReplacements);
}

/**
 * The replacements' next wake, or undefined when the timer at `at` came first. The timer is left to fire
 * on its own: a timer that fires after its command has ended is dropped by the engine.
 */
function* wakeOrTimer(
  context: df.OrchestrationContext,
  at: Date,
): Generator<df.Task, ReplacementWake | undefined, unknown> {
  const wake = context.df.waitForExternalEvent(DisruptionNames.replacementChanged);
  const timer = context.df.createTimer(at);
  const first = yield context.df.Task.any([wake, timer]);
  return first === wake ? (wake.result as ReplacementWake) : undefined;
}

/**
 * Reads one replacement once. Unlike the first version's check it does not wait inside the activity:
 * wakes answer most waits, and a check holding a slot for 45 s is what filled the host's activity slots
 * at 1,000 nodes (21,400 slot-seconds in one drift).
 */
export function checkCommandReplacementNow(
  deps: LifecycleDependencies,
  step: ReplacementStep,
): Promise<ReplacementCheck> {
  return checkReplacement(deps, specOf(step).name);
}
