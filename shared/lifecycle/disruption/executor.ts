// The one durable executor: a workflow per DisruptionCommand (methods/method.ts), whatever method
// decided it. In order, each step an outage-tolerant activity (../durable/outage-retry.ts):
// 1. validate (only for a method that has validate()): wait the command's delay on a durable timer,
//    then the method re-checks the command against fresh state and may drop candidates or call it off;
// 2. begin: mark every candidate DisruptionReason=True (the method's reason) and taint its Nodes
//    karpenter.sh/disrupted:NoSchedule, so nothing new schedules there and every budget counts it; a
//    validated candidate whose pods, listed fresh once it is tainted, differ from what its validation
//    saw is put back (a pod landed after the validation's read: a pod event);
// 3. launch the replacements (if any) and wait until each is Initialized: in the second version
//    (executor-v2.ts, the one started now) each replacement wakes the workflow when it is Initialized or
//    has failed, and a slow fallback timer checks the rest; in the first, kept for the instances started
//    before it, a durable timer, then a check that itself waits, reading the replacement every poll for
//    up to the activity wait window;
// 4. complete: delete the candidates (termination drains them); or, when a replacement fails, abandon:
//    delete the replacements that never initialized, untaint and unmark the candidates, and remember
//    the failure (on the NodePool under the command's key, or on each candidate) with a backoff.
// The instance ID and the input are command-workflow.ts's, shared with the disruption step that starts
// the workflow; releasing a candidate is candidate-release.ts's, which the step uses too. The wait for the
// replacements can last REPLACEMENT_TIMEOUT_MINUTES (up to a day): it continues as new once an execution
// has yielded EXECUTOR_TASKS_PER_EXECUTION tasks, carrying the validated command, the wait's deadline and
// the replacements already Initialized, and the next execution goes straight back to waiting (validate,
// begin and the launches are not run again), so the history stays bounded (../durable/history-budget.ts).
import type * as df from 'durable-functions';
import { activePodsDigest } from '../../decisions/consolidation/pod-events.js';
import { disruptionReasonOf } from '../../decisions/disruption-state.js';
import { toConsolidationPod } from '../../kube/pods.js';
import type { NodeClaim } from '../../models/karpenter.js';
import type { Node } from '../../models/kube.js';
import type { HandlerContext } from '../../runtime/definitions.js';
import { DisruptionNames } from '../../runtime/function-names.js';
import type { LifecycleDependencies } from '../dependencies.js';
import { nodesOfNodeClaim } from '../nodeclaims/nodeclaim-nodes.js';
import { nodeClaimTarget } from '../nodeclaims/nodeclaim-writes.js';
import { taintNodeDisrupted } from '../nodeclaims/node-taints.js';
import { callThroughOutages, durableActivity, type DurableActivity } from '../durable/durable-activity.js';
import { countingTasks, timerUntil, type TaskCount } from '../durable/history-budget.js';
import {
  ACTIVITY_WAIT_WINDOW_SECONDS,
  realActivityTimer,
  type ActivityTimer,
} from '../durable/activity-wait.js';
import { deleteNodeClaim } from '../termination/termination.js';
import { publishTerminating } from './blocked-events.js';
import { currentCandidate, releaseCandidate } from './candidate-release.js';
import { commandInstanceId, type ExecutorInput, type ExecutorProgress } from './command-workflow.js';
import { forgetConsolidationFailures, rememberFailedConsolidation } from './command-memory.js';
import type { CommandCandidate, CommandValidation, DisruptionCommand } from './methods/method.js';
import { methodNamed } from './methods/methods.js';
import { markWithinBudget } from './budget-at-mark.js';
import {
  checkReplacement,
  deleteUninitializedReplacement,
  launchReplacement,
  markForDisruption,
  metricReason,
  replacementNameFor,
  type ReplacementCheck,
  type ReplacementSpec,
} from './replacements.js';
import { nodeClaimLifecycleLabels } from '../../decisions/cluster-gauges.js';

/**
 * Tasks one execution yields before the wait for replacements continues as new. A wait round of one
 * replacement is two tasks (the timer, the check that waits up to 45 s), so this is 50 rounds, about 40
 * minutes at the default 5 s poll: longer than the 30-minute default timeout, so only a longer timeout
 * continues, and each execution stays near 400 events plus one round (a round of R replacements is
 * 1 + R tasks).
 */
export const EXECUTOR_TASKS_PER_EXECUTION = 100;

/** What the wait answers when it has continued as new: the orchestrator then returns at once. */
const CONTINUED = Symbol('continued as new');

/** What one round of the wait found: a replacement known to be Initialized, or which ones to check. */
export type WaitRound = { initialized: number } | { check: 'all' | number };

/** What a version of the workflow does differently while it waits for its replacements. */
export interface ReplacementWaitVersion {
  /**
   * Waits, as one durable task, for the next reason to look at the replacements (at most until `until`).
   * `looksInARow` counts the rounds just before this one that ended by looking at all of them and found
   * every replacement still on its way.
   */
  round(
    context: df.OrchestrationContext,
    input: ExecutorInput,
    until: Date,
    looksInARow: number,
  ): Generator<df.Task, WaitRound, unknown>;
  /** The activity that reads one replacement. */
  check: DurableActivity<ReplacementStep, ReplacementCheck>;
}

/** The first version's wait: a durable timer of one poll, then a check of each that itself waits. */
const pollEveryPoll: ReplacementWaitVersion = {
  round: function* (context, input, until) {
    const now = context.df.currentUtcDateTime.getTime();
    yield* timerUntil(context, new Date(Math.min(until.getTime(), now + input.pollSeconds * 1000)));
    return { check: 'all' };
  },
  check: durableActivity<ReplacementStep, ReplacementCheck>(DisruptionNames.check),
};

export interface ReplacementStep {
  input: ExecutorInput;
  index: number;
}

export interface AbandonStep {
  input: ExecutorInput;
  why: string;
}

export type ExecutorOutcome =
  | { outcome: 'Invalid'; why: string }
  | { outcome: 'CandidatesGone' }
  | { outcome: 'Disrupted'; deleted: string[]; replacements: string[] }
  | { outcome: 'Abandoned'; why: string };

/**
 * What begin did: marked and tainted, nothing left to mark, marked nothing because the budget is spent,
 * or called it off because pods arrived on a candidate after the validation read it.
 */
export type BeginOutcome = 'ok' | 'gone' | 'over-budget' | { invalid: string };

/** One descriptor per activity: functions/disruption.ts registers them, the workflow calls them. */
export const DisruptionActivities = {
  validate: durableActivity<ExecutorInput, CommandValidation>(DisruptionNames.validate),
  begin: durableActivity<ExecutorInput, BeginOutcome>(DisruptionNames.begin),
  launch: durableActivity<ReplacementStep, ReplacementCheck>(DisruptionNames.launch),
  check: pollEveryPoll.check,
  complete: durableActivity<ExecutorInput, string[]>(DisruptionNames.complete),
  abandon: durableActivity<AbandonStep>(DisruptionNames.abandon),
};

export function replacementSpecs(command: DisruptionCommand): ReplacementSpec[] {
  const first = command.candidates[0];
  return command.replacements.map((template, index) => ({
    name: replacementNameFor(command.nodePool.name, first?.uid ?? '', command.attempt, index),
    nodePool: command.nodePool.name,
    replacementOf: first?.name ?? '',
    command: commandInstanceId(command),
    reason: command.reason,
    ...(template.requirements ? { requirements: template.requirements } : {}),
    ...(template.zone ? { zone: template.zone } : {}),
  }));
}

/** The first version: polls its replacements (kept, unchanged, for the instances started before the second). */
export function* disruptionOrchestrator(
  context: df.OrchestrationContext,
): Generator<df.Task, ExecutorOutcome | undefined, unknown> {
  return yield* executeCommand(context, pollEveryPoll);
}

/** Validate, begin, wait for the replacements as `awaitReplacements` does, then complete or abandon. */
export function* executeCommand(
  context: df.OrchestrationContext,
  version: ReplacementWaitVersion,
): Generator<df.Task, ExecutorOutcome | undefined, unknown> {
  const { continued, ...started } = context.df.getInput<ExecutorInput>();
  let input = started;
  const { command } = started;
  const tasks: TaskCount = { tasks: 0 };
  const call = <I, O>(activity: DurableActivity<I, O>, activityInput: I) =>
    countingTasks(tasks, callThroughOutages(context, activity, activityInput));
  // The method list is code, the same in every replay: looking a method up is deterministic.
  if (!continued && methodNamed(command.method)?.validate) {
    const validateAt = Date.parse(command.decidedAt) + command.validateAfterSeconds * 1000;
    if (context.df.currentUtcDateTime.getTime() < validateAt) {
      yield* countingTasks(tasks, timerUntil(context, new Date(validateAt)));
    }
    const validation = yield* call(DisruptionActivities.validate, input);
    if ('invalid' in validation) return { outcome: 'Invalid', why: validation.invalid };
    input = { ...input, command: validation.command };
  }
  if (!continued) {
    const begun = yield* call(DisruptionActivities.begin, input);
    if (begun === 'gone') return { outcome: 'CandidatesGone' };
    if (begun === 'over-budget') return { outcome: 'Invalid', why: 'the budget no longer allows it' };
    if (typeof begun === 'object') return { outcome: 'Invalid', why: begun.invalid };
  }

  const replacements = replacementSpecs(input.command).map((r) => r.name);
  if (replacements.length > 0) {
    const why = yield* awaitReplacementsInitialized(context, tasks, input, continued, version);
    if (why === CONTINUED) return undefined;
    if (why !== undefined) {
      const abandon: AbandonStep = { input, why };
      yield* callThroughOutages(context, DisruptionActivities.abandon, abandon);
      return { outcome: 'Abandoned', why };
    }
  }
  const deleted = yield* callThroughOutages(context, DisruptionActivities.complete, input);
  return { outcome: 'Disrupted', deleted, replacements };
}

/**
 * Launches every replacement, then polls until all are Initialized (undefined) or one has failed or the
 * timeout passed (why), launching again one that has no VM yet. Resumed from `resume` after a
 * continuation: the launches are done and the deadline stays where it was.
 */
function* awaitReplacementsInitialized(
  context: df.OrchestrationContext,
  tasks: TaskCount,
  input: ExecutorInput,
  resume: ExecutorProgress | undefined,
  version: ReplacementWaitVersion,
): Generator<df.Task, string | undefined | typeof CONTINUED, unknown> {
  const count = input.command.replacements.length;
  const call = <I, O>(activity: DurableActivity<I, O>, activityInput: I) =>
    countingTasks(tasks, callThroughOutages(context, activity, activityInput));
  const deadline = resume
    ? Date.parse(resume.deadline)
    : context.df.currentUtcDateTime.getTime() + input.timeoutMinutes * 60_000;
  const initialized = new Set<number>(resume?.initialized ?? []);
  let looksInARow = 0;
  if (!resume) {
    for (let index = 0; index < count; index++) {
      const step: ReplacementStep = { input, index };
      const launched = yield* call(DisruptionActivities.launch, step);
      if (launched.status === 'Failed') return launched.why;
    }
  }
  while (initialized.size < count) {
    const now = context.df.currentUtcDateTime.getTime();
    if (now >= deadline) {
      return `the replacement was not Initialized within ${input.timeoutMinutes} minutes`;
    }
    const round = yield* countingTasks(tasks, version.round(context, input, new Date(deadline), looksInARow));
    if ('initialized' in round) {
      looksInARow = 0;
      initialized.add(round.initialized);
      continue;
    }
    // A look at all of them that finds them all still on their way doubles the next period; one that finds
    // a replacement Initialized found a lost wake, and starts the period over, as a wake does.
    let lostWakeFound = false;
    for (let index = 0; index < count; index++) {
      if (initialized.has(index) || (round.check !== 'all' && round.check !== index)) continue;
      const step: ReplacementStep = { input, index };
      let check = yield* call(version.check, step);
      if (check.status === 'NotLaunched') {
        check = yield* call(DisruptionActivities.launch, step);
      }
      if (check.status === 'Failed') return check.why;
      if (check.status === 'Initialized') {
        initialized.add(index);
        lostWakeFound ||= round.check === 'all';
      }
    }
    looksInARow = round.check === 'all' && !lostWakeFound ? looksInARow + 1 : 0;
    if (initialized.size < count && tasks.tasks >= EXECUTOR_TASKS_PER_EXECUTION) {
      const progress: ExecutorProgress = {
        deadline: new Date(deadline).toISOString(),
        initialized: [...initialized].sort((a, b) => a - b),
        continuations: (resume?.continuations ?? 0) + 1,
      };
      context.df.continueAsNew({ ...input, continued: progress } satisfies ExecutorInput);
      return CONTINUED;
    }
  }
  return undefined;
}

export async function validateCommand(
  deps: LifecycleDependencies,
  input: ExecutorInput,
  context: Pick<HandlerContext, 'orchestrations' | 'invocationId'>,
): Promise<CommandValidation> {
  const method = methodNamed(input.command.method);
  if (!method) return { invalid: `no disruption method named ${input.command.method}` };
  if (!method.validate) return { command: input.command };
  const validation = await method.validate(deps, input.command, context);
  if ('invalid' in validation) {
    deps.log.info('disruption command no longer valid', {
      nodePool: input.command.nodePool.name,
      method: input.command.method,
      why: validation.invalid,
    });
  }
  return validation;
}

/**
 * Marks each candidate (if the sweep has not) and taints its Nodes. 'gone' when there is nothing left
 * to do: no candidate left, or one of a command with replacements is gone (the replacement was sized
 * for all of them).
 */
export async function beginCommand(deps: LifecycleDependencies, input: ExecutorInput): Promise<BeginOutcome> {
  const { command } = input;
  const method = methodNamed(command.method);
  // Read once: the budget check and the marks below work from the same versions (a mark that meets a
  // newer one is retried on conflict by updateNodeClaimStatus).
  const candidates = await Promise.all(
    command.candidates.map(async (candidate) => ({
      candidate,
      current: await currentCandidate(deps, candidate),
    })),
  );
  const markAll = async (): Promise<number | 'gone' | { invalid: string }> => {
    const begun: NodeClaim[] = [];
    let skipped: string | undefined;
    for (const { candidate, current } of candidates) {
      const marked =
        current && !current.metadata.deletionTimestamp
          ? await markForDisruption(deps, current, command.reason, command.detail)
          : undefined;
      if (!marked) {
        if (command.replacements.length === 0) continue;
        await abandonCommand(deps, { input, why: `${candidate.name} is gone` });
        return 'gone';
      }
      const nodes = await nodesOfNodeClaim(deps, marked);
      for (const node of nodes) await taintNodeDisrupted(deps, node);
      const arrived = await podsChangedSinceValidation(deps, candidate, nodes);
      if (arrived) {
        // Tainted now, so nothing new lands: what the fresh list shows is all that arrived in time.
        skipped = `${candidate.name}: ${arrived}`;
        deps.log.info('disruption candidate called off at its mark', {
          nodePool: command.nodePool.name,
          method: command.method,
          candidate: candidate.name,
          why: arrived,
        });
        await releaseCandidate(deps, marked, command.reason);
        if (command.replacements.length === 0) continue;
        // The replacement was sized for every candidate: the ones marked already go back too.
        for (const other of begun) await releaseCandidate(deps, other, command.reason);
        return { invalid: skipped };
      }
      begun.push(marked);
    }
    return begun.length === 0 && skipped ? { invalid: skipped } : begun.length;
  };
  let begun: number | 'gone' | { invalid: string };
  if (method?.class === 'graceful') {
    // Another writer may have marked since the decision or its validation: the budget is read again,
    // under the disruption-marks Lease.
    const unmarked = candidates
      .filter(
        ({ current }) =>
          current && !current.metadata.deletionTimestamp && disruptionReasonOf(current) === undefined,
      )
      .map(({ candidate }) => candidate.name);
    const outcome = await markWithinBudget(
      deps,
      command.nodePool.name,
      method.reason,
      unmarked.length,
      markAll,
    );
    if (!outcome.marked) {
      deps.log.info('disruption command called off before its marks: the budget no longer allows it', {
        nodePool: command.nodePool.name,
        method: command.method,
        candidates: unmarked,
        why: outcome.why,
      });
      return 'over-budget';
    }
    begun = outcome.value;
  } else {
    begun = await markAll();
  }
  if (typeof begun === 'object') return begun;
  if (begun === 'gone' || begun === 0) return 'gone';
  // Upstream counts only graceful (voluntary) methods' decisions here; expiration and repair are not.
  if (method?.class === 'graceful') {
    deps.metrics.increment('karpenter_voluntary_disruption_decisions_total', {
      decision: command.replacements.length > 0 ? 'replace' : 'delete',
      reason: metricReason(command.reason),
      consolidation_type: command.consolidationType,
    });
  }
  deps.log.info('disruption command begun: candidates marked and tainted', {
    nodePool: command.nodePool.name,
    method: command.method,
    reason: command.reason,
    candidates: command.candidates.map((c) => c.name),
    replacements: replacementSpecs(command).map((r) => r.name),
    ...(command.savings !== undefined ? { savings: command.savings } : {}),
  });
  return 'ok';
}

/**
 * Why the candidate's pods are no longer those its validation saw (read fresh from the API server, after
 * the taint), or undefined when they are, or when the command was not validated on its pods. The
 * validation's read may be the watch-fed cache and an activity or two old: a pod bound meanwhile is a
 * pod event, and its node is not consolidated within consolidateAfter of it.
 */
async function podsChangedSinceValidation(
  deps: LifecycleDependencies,
  candidate: CommandCandidate,
  nodes: readonly Node[],
): Promise<string | undefined> {
  if (candidate.podsDigest === undefined) return undefined;
  const pods = (
    await Promise.all(nodes.map(async (node) => (await deps.drainPods.onNode(node.metadata.name)).pods))
  ).flat();
  return activePodsDigest(pods.map(toConsolidationPod)) === candidate.podsDigest
    ? undefined
    : 'its pods changed since the validation (a pod event)';
}

export function specOf(step: ReplacementStep): ReplacementSpec {
  const spec = replacementSpecs(step.input.command)[step.index];
  if (!spec) throw new Error(`command has no replacement ${step.index}`);
  return spec;
}

export function launchCommandReplacement(
  deps: LifecycleDependencies,
  step: ReplacementStep,
  context: Pick<HandlerContext, 'orchestrations' | 'invocationId'>,
): Promise<ReplacementCheck> {
  return launchReplacement(deps, specOf(step), context);
}

/**
 * Polls a replacement inside one check, at most this many reads: 45 s at the default 5 s poll, the
 * activity wait window, and a few seconds where a test or the local stack polls faster.
 */
export const REPLACEMENT_READS_PER_CHECK = 9;

/**
 * Reports one replacement, waiting inside the activity (../durable/activity-wait.ts) while it is Pending:
 * it reads the replacement every poll until it is Initialized, failed or not launched, or until
 * REPLACEMENT_READS_PER_CHECK reads or the wait window are spent. The workflow's wait is then one timer
 * and one check per window instead of per poll: a replacement that initialized in 25 s cost about ten
 * timers and ten checks, and the executor was most of a drifted NodeClaim's Durable actions.
 */
export async function checkCommandReplacement(
  deps: LifecycleDependencies,
  step: ReplacementStep,
  timer: ActivityTimer = realActivityTimer(),
): Promise<ReplacementCheck> {
  const name = specOf(step).name;
  const pollMs = step.input.pollSeconds * 1000;
  const windowMs = Math.min(ACTIVITY_WAIT_WINDOW_SECONDS * 1000, REPLACEMENT_READS_PER_CHECK * pollMs);
  for (;;) {
    const check = await checkReplacement(deps, name);
    if (check.status !== 'Pending' || timer.elapsedMs() + pollMs >= windowMs) return check;
    await timer.sleep(pollMs);
  }
}

/** Every replacement is Initialized (or there are none): delete the candidates; termination drains them. */
export async function completeCommand(
  deps: LifecycleDependencies,
  input: ExecutorInput,
  context: Pick<HandlerContext, 'orchestrations'>,
): Promise<string[]> {
  const { command } = input;
  const replacements = replacementSpecs(command).map((r) => r.name);
  const deleted: string[] = [];
  for (const candidate of command.candidates) {
    const nodeClaim = await currentCandidate(deps, candidate);
    if (!nodeClaim || nodeClaim.metadata.deletionTimestamp) continue;
    const nodes = await nodesOfNodeClaim(deps, nodeClaim);
    // Termination starts at once rather than on the bridge's event or the next sweep.
    if (!(await deleteNodeClaim(deps, nodeClaim, context))) continue;
    deleted.push(candidate.name);
    await publishTerminating(deps, nodeClaim, nodes, command.reason);
    if (replacements.length > 0) {
      await deps.events.normal(
        nodeClaimTarget(nodeClaim),
        'DisruptionReplaced',
        `Replaced by NodeClaim ${replacements.join(', ')} (${command.reason}); terminating`,
      );
    }
    deps.metrics.increment('karpenter_nodeclaims_disrupted_total', {
      reason: metricReason(command.reason),
      nodepool: command.nodePool.name,
      capacity_type: nodeClaimLifecycleLabels(nodeClaim).capacity_type,
      consolidation_policy: command.consolidationPolicy ?? '',
      termination_mode: methodNamed(command.method)?.class ?? 'graceful',
    });
  }
  if (command.key !== undefined) await forgetConsolidationFailures(deps, command.nodePool.name);
  deps.log.info('disruption command completed', {
    nodePool: command.nodePool.name,
    method: command.method,
    reason: command.reason,
    deleted,
    replacements,
  });
  return deleted;
}

/**
 * A replacement failed: delete the replacements that never initialized, remember the failure, and put
 * every candidate back in service. Idempotent: a candidate no longer marked for this reason was
 * released already (or taken by another command) and is left alone.
 */
export async function abandonCommand(deps: LifecycleDependencies, step: AbandonStep): Promise<void> {
  const { command } = step.input;
  for (const spec of replacementSpecs(command)) await deleteUninitializedReplacement(deps, spec.name);
  const held =
    command.key !== undefined
      ? await rememberFailedConsolidation(deps, command.nodePool.name, { key: command.key, why: step.why })
      : undefined;
  const replacements = replacementSpecs(command).map((r) => r.name);
  for (const candidate of command.candidates) {
    const nodeClaim = await currentCandidate(deps, candidate);
    if (!nodeClaim) continue;
    const released = await releaseCandidate(deps, nodeClaim, command.reason, {
      // Without a key, the failure is held on the node itself.
      ...(command.key === undefined ? { failed: true } : {}),
    });
    if (!released) continue;
    await deps.events.warning(
      nodeClaimTarget(nodeClaim),
      'DisruptionReplacementFailed',
      `Replacement ${replacements.join(', ')} failed: ${step.why}; node untainted` +
        (held
          ? `; the same consolidation is not tried again before ${held.until}`
          : ', retried after a backoff'),
    );
  }
  deps.log.warn('disruption command abandoned; candidates back in service', {
    nodePool: command.nodePool.name,
    method: command.method,
    replacements,
    why: step.why,
  });
}
