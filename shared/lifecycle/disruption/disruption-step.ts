// The sweep's disruption step: per in-scope NodePool, first tend the commands in flight, then ask every
// disruption method (methods/methods.ts, in order) for commands within its budget and start one
// executor workflow (executor.ts) per command, or the method's own workflow for a command that names one
// (repair's reboot). It knows no method by name: what differs between methods is in their
// DisruptionMethod (reason, class, workflow key, computeCommands, validate) and their commands.
//
// - Budgets: a graceful method is given allowedDisruptions(NodePool, its reason, …), which subtracts every
//   node already disrupting for any reason; the candidates of its commands are cut to that number here
//   too, so no method can exceed its budget. Forceful methods have none.
// - Marks: a command carried out as decided is marked (DisruptionReason=True) by this step before its
//   workflow starts, so the budget counts it from this moment on and the next method of this pass sees
//   it. A command its method validates is marked by its workflow once valid (marked, it would no longer
//   be a candidate when re-checked); its NodePool-keyed workflow keeps other such commands out meanwhile.
// - In flight: a marked NodeClaim whose workflow is running is left alone. One whose workflow ended
//   without releasing it (it failed, or the process stopped), or never started (after a grace, for the
//   step that marked it may still be starting it), is put back in service: replacements that never
//   initialized deleted, untainted, unmarked; a per-candidate workflow that ended is counted as a failed
//   attempt with its backoff. The method then decides afresh, in this same pass.
// - Records: every pass of a NodePool yields a DisruptionRecord (decisions/explain/disruption-record.ts):
//   what each method noted while it decided (the nodes it kept and why, its commands' prices and pods),
//   what this step decided on top (the budget's cut, the commands it started). The record goes to the
//   step's onRecord sink; the per-cause counts of the nodes kept go to a gauge and the NodePool's status.
import { writeDecisionRecord } from '../decision-records/record-writes.js';
import { allowedDisruptions } from '../../decisions/budgets.js';
import { findCondition, setCondition } from '../../decisions/conditions.js';
import {
  budgetNodesOf,
  DisruptionAnnotations,
  disruptionReasonOf,
} from '../../decisions/disruption-state.js';
import {
  blockedByCause,
  budgetBlockedMessage,
  commandDecisionOf,
  disruptionRecordOf,
  type BlockedCount,
} from '../../decisions/explain/disruption-record.js';
import type {
  CandidateCause,
  CandidateDecision,
  CommandDecision,
  DisruptionRecord,
} from '../../decisions/explain/decision-record.js';
import { priceOf } from '../../decisions/prices/price-book.js';
import {
  ConditionTypes,
  WellKnown,
  type CapacityType,
  type NodeClaim,
  type NodePool,
} from '../../models/karpenter.js';
import type { Node } from '../../models/kube.js';
import {
  isOrchestrationActive,
  type OrchestrationClient,
  type OrchestrationStatus,
} from '../../runtime/definitions.js';
import { DisruptionNames } from '../../runtime/function-names.js';
import { nodeClaimTarget } from '../nodeclaims/nodeclaim-writes.js';
import {
  forEachObject,
  type StepReport,
  type SweepContext,
  type SweepStep,
} from '../sweep-step/sweep-step.js';
import { reportBudgetValidity } from './budget-status.js';
import { currentCandidate, releaseCandidate } from './candidate-release.js';
import { commandInstanceId, instanceIdOf, type ExecutorInput } from './command-workflow.js';
import type {
  CommandFacts,
  DisruptionCommand,
  DisruptionMethod,
  MethodPass,
  PassRecorder,
} from './methods/method.js';
import { publishBlockedCandidates, retainBlockedCandidatesPools } from './blocked-candidates.js';
import { disruptionMethods, methodNamed } from './methods/methods.js';
import { MARKS_PER_ROUND, markUnderLease, markWithinBudget } from './budget-at-mark.js';
import { deleteUninitializedReplacement, markForDisruption } from './replacements.js';
import { nodeClaimsByPool, nodePoolsInScope } from './scope.js';

/** How long a mark may wait for the workflow its step is starting before it counts as abandoned. */
export const UNSTARTED_COMMAND_GRACE_MS = 60_000;

export const disruptionStep: SweepStep = disruptionStepOf(disruptionMethods);

/** Where each pass's DisruptionRecord goes; a failure is logged, never fatal. */
export type OnDisruptionRecord = (record: DisruptionRecord) => void | Promise<void>;

export interface DisruptionStepOptions {
  /** In place of the decision-record store (deps.decisionRecords, repeats left out): for tests. */
  onRecord?: OnDisruptionRecord;
}

/**
 * The disruption step asking only `methods` (in their list order): an event that concerns one method
 * (a spot eviction notice: repair) runs it at once without deciding everything else as well. The
 * commands in flight are tended as in the whole step. Only a pass of every method, in a sweep not
 * confined to a label selector, publishes the blocked counts: a partial one would undercount them.
 */
export function disruptionStepOf(
  methods: readonly DisruptionMethod[],
  options: DisruptionStepOptions = {},
): SweepStep {
  const everyMethod = disruptionMethods.every((m) => methods.includes(m));
  return {
    name: 'disruption',
    async run(context) {
      const report: StepReport = { step: 'disruption', examined: 0, acted: 0, failed: 0 };
      const pools = nodePoolsInScope(context);
      const counts = everyMethod && !context.nodeClaimSelector;
      if (counts) {
        retainBlockedCandidatesPools(context.deps.metrics, new Set(pools.map((p) => p.metadata.name)));
      }
      for (const nodePool of pools) {
        if (context.stopping()) break;
        report.examined += 1;
        try {
          // The store also gets the pass's decision before its first command starts (below); a test's
          // sink gets only the final record.
          const beforeStart = options.onRecord
            ? undefined
            : (record: DisruptionRecord) => recordPass(context, record);
          const pass = await disruptPool(context, nodePool, methods, beforeStart);
          report.acted += pass.started;
          if (counts && !context.stopping()) {
            await publishBlockedCandidates(context.deps, nodePool, pass.blocked);
          }
          if (options.onRecord) await writeRecord(context, options.onRecord, pass.record);
          else await recordPass(context, pass.record);
        } catch (error) {
          report.failed += 1;
          context.log.warn('disruption failed for one NodePool', { nodePool: nodePool.metadata.name, error });
        }
      }
      return report;
    },
  };
}

async function writeRecord(
  context: SweepContext,
  onRecord: OnDisruptionRecord,
  record: DisruptionRecord,
): Promise<void> {
  try {
    await onRecord(record);
  } catch (error) {
    context.log.warn('disruption record not written', { record: record.id, error });
  }
}

/**
 * A steady NodePool decides the same every sweep (the same nodes kept for the same causes, no command):
 * such a pass is written once, and again only after RECORD_REFRESH_MS, so the store holds changes and a
 * recent "still so" rather than one row per NodePool per sweep. Kept in the process, as the event dedupe
 * is: after a restart the first pass is written again.
 */
export const RECORD_REFRESH_MS = 10 * 60_000;
const lastRecorded = new Map<string, { digest: string; at: number }>();

async function recordPass(context: SweepContext, record: DisruptionRecord): Promise<void> {
  const { at: _at, id: _id, ...decided } = record;
  const digest = JSON.stringify(decided);
  const now = Date.parse(record.at);
  const last = lastRecorded.get(record.nodePool);
  if (last && last.digest === digest && now - last.at < RECORD_REFRESH_MS) return;
  if (await writeDecisionRecord(context.deps, record)) lastRecorded.set(record.nodePool, { digest, at: now });
}

export interface PoolPass {
  started: number;
  record: DisruptionRecord;
  blocked: BlockedCount[];
}

/** getStatus once per instance ID within one NodePool's pass. */
function statusReader(
  orchestrations: OrchestrationClient,
): (instanceId: string) => Promise<OrchestrationStatus | undefined> {
  const read = new Map<string, Promise<OrchestrationStatus | undefined>>();
  return (instanceId) => {
    let status = read.get(instanceId);
    if (!status) {
      status = orchestrations.getStatus(instanceId);
      read.set(instanceId, status);
    }
    return status;
  };
}

type StatusOf = ReturnType<typeof statusReader>;

const claimsOf = (context: SweepContext, nodePool: NodePool): NodeClaim[] =>
  nodeClaimsByPool(context.view.nodeClaims()).get(nodePool.metadata.name) ?? [];

/** Runs one pass of the NodePool: how many commands it started, its record and its blocked counts. */
async function disruptPool(
  context: SweepContext,
  nodePool: NodePool,
  methods: readonly DisruptionMethod[],
  beforeStart?: (record: DisruptionRecord) => Promise<void>,
): Promise<PoolPass> {
  const { deps } = context;
  const passAt = deps.now();
  const notes = passNotes(context, nodePool);
  await reportBudgetValidity(deps, nodePool);
  const statusOf = statusReader(context.orchestrations);
  const clock = () => performance.now();
  const passStarted = clock();
  await tendInFlight(context, nodePool, statusOf);
  // Where a pass's time goes, on the line of each method that starts commands (passes at 1,000 nodes
  // took seconds, and what to make faster depends on which part).
  const tendMs = Math.round(clock() - passStarted);

  const shared = new Map<string, Promise<unknown>>();
  const sharedWork = <T>(key: string, compute: () => Promise<T>): Promise<T> => {
    let work = shared.get(key) as Promise<T> | undefined;
    if (!work) {
      work = compute();
      shared.set(key, work);
    }
    return work;
  };
  /** NodePool-keyed workflows running, or started in this pass: their methods wait. */
  const busy = new Set<string>();
  let started = 0;
  for (const method of methods) {
    if (context.stopping()) break;
    if (!method.appliesTo(nodePool)) continue;
    const { per, instancePrefix } = method.workflow;
    if (per === 'nodePool') {
      if (busy.has(instancePrefix)) continue;
      const id = instanceIdOf(method.workflow, {
        candidateUid: '',
        nodePoolUid: nodePool.metadata.uid ?? '',
      });
      if (isOrchestrationActive(await statusOf(id))) {
        busy.add(instancePrefix);
        continue;
      }
    }
    const claims = claimsOf(context, nodePool);
    const nodesFor = (c: NodeClaim) => context.view.nodesFor(c);
    const now = deps.now();
    const allowed =
      method.class === 'graceful'
        ? allowedDisruptions(nodePool, method.reason, budgetNodesOf(claims, nodesFor), now).allowed
        : Number.POSITIVE_INFINITY;
    const pass: MethodPass = {
      sweep: context,
      nodePool,
      nodeClaims: claims,
      nodesFor,
      now,
      allowed,
      shared: sharedWork,
      recorder: notes.recorderFor(method),
    };
    const computeStarted = clock();
    const computed = await method.computeCommands(pass);
    const computeMs = Math.round(clock() - computeStarted);
    const commands = withinBudget(method, computed, allowed);
    for (const cut of computed.slice(commands.length)) notes.cut(method, cut);
    if (commands.length === 0) continue;
    if (per === 'nodePool') busy.add(instancePrefix);
    const toStart = per === 'nodePool' ? commands.slice(0, 1) : commands;
    // The record says what the pass decided before anything is marked: a host killed between a mark and
    // the pass's end would otherwise leave a disruption no record explains (the executor carries the
    // command on after a restart). The record at the pass's end, under the same ID, replaces this one
    // with what was started.
    await beforeStart?.(
      disruptionRecordOf({ nodePool: nodePool.metadata.name, at: passAt, ...notes.startingAlso(toStart) }),
    );
    const startStarted = clock();
    const startTimings = new StartTimings();
    const result = await forEachObject(
      context,
      'disruption',
      toStart,
      (c) => `${c.method} ${c.candidates.map((x) => x.name).join(',')}`,
      async (command) => {
        const outcome = await startCommand(context, command, startTimings);
        if (outcome === true) notes.started(command);
        else notes.notStarted(method, command, outcome);
        return outcome === true;
      },
      // Every command the pass computed and the budget allows is started: computing them is the pass's
      // cost (seconds at 1,000 nodes), and commands left for the next sweep would be computed again.
      // All at once, up to a marks round's size: a mark waits for the round after the one being served
      // (seconds at 1,000 nodes), so eight at a time put one pass's commands into successive rounds.
      { ms: Number.POSITIVE_INFINITY, concurrency: MARKS_PER_ROUND },
    );
    started += result.acted;
    context.log.info('disruption commands started', {
      nodePool: nodePool.metadata.name,
      method: method.name,
      reason: method.reason,
      started: result.acted,
      ...(Number.isFinite(allowed) ? { allowed } : {}),
      candidates: commands.flatMap((c) => c.candidates.map((x) => x.name)),
      timingsMs: { tend: tendMs, compute: computeMs, start: Math.round(clock() - startStarted) },
      startPartsMs: startTimings.summary(),
    });
  }
  const record = disruptionRecordOf({
    nodePool: nodePool.metadata.name,
    at: passAt,
    candidates: notes.candidates,
    commands: notes.commands,
  });
  return { started, record, blocked: blockedByCause(notes.candidates) };
}

/**
 * What one pass notes for its record: the methods' own notes (through their recorder), the candidates
 * the budget cut, and each command started with its prices and pods (the method's facts; for what it
 * did not state, the candidates' listed prices from their Nodes' labels, a template replacement priced
 * as the node it replaces).
 */
function passNotes(context: SweepContext, nodePool: NodePool) {
  const candidates: CandidateDecision[] = [];
  const commands: CommandDecision[] = [];
  const facts = new Map<DisruptionCommand, CommandFacts>();
  // Indexed on first use: most passes keep no node and start nothing.
  let claims: Map<string, NodeClaim> | undefined;
  const nodeOf = (name: string): Node | undefined => {
    claims ??= new Map(claimsOf(context, nodePool).map((c) => [c.metadata.name, c]));
    const claim = claims.get(name);
    return claim ? context.view.nodesFor(claim)[0] : undefined;
  };
  const note = (
    method: DisruptionMethod,
    nodeClaim: string,
    node: string | undefined,
    decision: Pick<CandidateDecision, 'decision' | 'cause' | 'message'>,
  ) => {
    // A method that did not name the Node (a verdict without one) gets it from the view.
    const nodeName = node ?? nodeOf(nodeClaim)?.metadata.name;
    candidates.push({ nodeClaim, ...(nodeName ? { node: nodeName } : {}), method: method.name, ...decision });
  };
  const listedPrice = (name: string): number => {
    const labels = nodeOf(name)?.metadata.labels ?? {};
    const capacityType = (labels[WellKnown.capacityTypeLabel] ?? 'on-demand') as CapacityType;
    const type = labels[WellKnown.instanceTypeLabel];
    if (!type) return Number.NaN;
    return priceOf(context.deps.cloud.prices(), type, capacityType) ?? Number.NaN;
  };
  const templateTypes = (): string[] => {
    const types = nodePool.spec.template.spec.requirements.find(
      (r) => r.key === WellKnown.instanceTypeLabel && r.operator === 'In',
    );
    return types?.values?.length ? [...types.values] : [`NodePool ${nodePool.metadata.name} template`];
  };
  return {
    candidates,
    commands,
    recorderFor: (method: DisruptionMethod): PassRecorder => ({
      keep: (nodeClaim, node, cause, message) =>
        note(method, nodeClaim, node, { decision: 'keep', cause, message }),
      command: (command, known) => facts.set(command, known),
    }),
    notStarted(method: DisruptionMethod, command: DisruptionCommand, why: NotStarted) {
      for (const c of command.candidates) {
        note(method, c.name, nodeOf(c.name)?.metadata.name, { decision: 'keep', ...why });
      }
    },
    cut(method: DisruptionMethod, command: DisruptionCommand) {
      for (const c of command.candidates) {
        note(method, c.name, nodeOf(c.name)?.metadata.name, {
          decision: 'keep',
          cause: 'Budget',
          message: budgetBlockedMessage(command.reason),
        });
      }
    },
    started(command: DisruptionCommand) {
      const decided = decisionsOf(command);
      candidates.push(...decided.candidates);
      commands.push(decided.command);
    },
    /** The notes so far with `starting` stated as started, without noting them. */
    startingAlso(starting: readonly DisruptionCommand[]) {
      const decided = starting.map(decisionsOf);
      return {
        candidates: [...candidates, ...decided.flatMap((d) => d.candidates)],
        commands: [...commands, ...decided.map((d) => d.command)],
      };
    },
  };

  /** What starting `command` states: its candidates disrupted, and the command with its $/h and pods. */
  function decisionsOf(command: DisruptionCommand): {
    candidates: CandidateDecision[];
    command: CommandDecision;
  } {
    const known = facts.get(command) ?? {};
    const replaces = command.replacements.length > 0;
    return {
      candidates: command.candidates.map((c) => {
        const node = nodeOf(c.name)?.metadata.name;
        return {
          nodeClaim: c.name,
          ...(node ? { node } : {}),
          method: command.method,
          decision: 'disrupt' as const,
          cause: 'Disrupted' as const,
          message: command.detail,
        };
      }),
      command: commandDecisionOf({
        method: command.method,
        reason: command.reason,
        candidates: command.candidates.map((c) => c.name),
        replacements: replaces ? (known.replacementTypes ?? templateTypes()) : [],
        candidatePrices: known.candidatePrices ?? command.candidates.map((c) => listedPrice(c.name)),
        ...(known.replacementPrice !== undefined ? { replacementPrice: known.replacementPrice } : {}),
        podsMoved: known.podsMoved ?? [],
        replaces,
      }),
    };
  }
}

/** A graceful method's commands, cut so that their candidates together fit in its budget. */
function withinBudget(
  method: DisruptionMethod,
  commands: DisruptionCommand[],
  allowed: number,
): DisruptionCommand[] {
  if (method.class === 'forceful') return commands;
  const kept: DisruptionCommand[] = [];
  let used = 0;
  for (const command of commands) {
    if (used + command.candidates.length > allowed) break;
    used += command.candidates.length;
    kept.push(command);
  }
  return kept;
}

type StartPart = 'status' | 'mark' | 'workflow';

/**
 * Where the start of a pass's commands went, per part, for its log line: the workflow's status (read,
 * and purged when it ended), the marks (waiting for the disruption-marks Lease's round, the fresh budget
 * read and the writes) and the workflow's start. At 1,000 nodes a pass took 16 s (median) to start its
 * commands while the freed budget slots waited, and which part to make faster depends on these.
 */
class StartTimings {
  private readonly parts = new Map<StartPart, number[]>();

  async time<T>(part: StartPart, work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await work();
    } finally {
      const values = this.parts.get(part) ?? [];
      values.push(performance.now() - started);
      this.parts.set(part, values);
    }
  }

  /** Per part, the median and the slowest command's milliseconds (the commands start side by side). */
  summary(): Partial<Record<StartPart, [number, number]>> {
    const summary: Partial<Record<StartPart, [number, number]>> = {};
    for (const [part, values] of this.parts) {
      const sorted = [...values].sort((a, b) => a - b);
      summary[part] = [
        Math.round(sorted[Math.floor(sorted.length / 2)] ?? 0),
        Math.round(sorted.at(-1) ?? 0),
      ];
    }
    return summary;
  }
}

/** Why a command decided was not started, for the record: its candidates' cause and line. */
interface NotStarted {
  cause: CandidateCause;
  message: string;
}

const VIEW_BEHIND: NotStarted = {
  cause: 'NotReady',
  message: 'The command was not started: its candidates changed since the view was read',
};

async function startCommand(
  context: SweepContext,
  command: DisruptionCommand,
  timings: StartTimings,
): Promise<true | NotStarted> {
  const { deps, orchestrations, view } = context;
  const instanceId = commandInstanceId(command);
  const existing = await timings.time('status', () => orchestrations.getStatus(instanceId));
  // An earlier command is still winding down (it has released its candidates but not returned yet).
  if (isOrchestrationActive(existing)) {
    return {
      cause: 'NotReady',
      message: `The command was not started: its workflow ${instanceId} is still winding down`,
    };
  }
  if (existing) await timings.time('status', () => orchestrations.purge(instanceId));
  if (command.ownWorkflow) return startOwnWorkflow(context, command, command.ownWorkflow, instanceId);
  const method = methodNamed(command.method);
  if (method?.validate) {
    // A validated command holds its NodePool's workflow until it is validated; decided on a view that
    // is behind (the watch-fed cache just after an outage), its candidates may already be deleting or
    // marked, and it would keep the NodePool's next real command waiting for nothing.
    const behind = await candidatesBehind(context, command);
    if (behind.length > 0) {
      context.log.info('disruption command not started: its candidates changed since the view was read', {
        nodePool: command.nodePool.name,
        method: command.method,
        candidates: behind,
      });
      return VIEW_BEHIND;
    }
  } else {
    const byName = new Map(view.nodeClaims().map((c) => [c.metadata.name, c]));
    const markAll = async (): Promise<boolean> => {
      for (const candidate of command.candidates) {
        const nodeClaim = byName.get(candidate.name);
        const marked = nodeClaim
          ? await markForDisruption(deps, nodeClaim, command.reason, command.detail)
          : undefined;
        if (!marked) {
          if (nodeClaim) view.removeNodeClaim(nodeClaim);
          // Marks already made are released by tendInFlight once the grace has passed.
          return false;
        }
        view.updateNodeClaim(marked);
      }
      return true;
    };
    // Every mark is made under the disruption-marks Lease; a graceful method's on a budget read again.
    const outcome = await timings.time('mark', () =>
      method?.class === 'graceful'
        ? markWithinBudget(deps, command.nodePool.name, method.reason, command.candidates.length, markAll)
        : markUnderLease(deps, markAll),
    );
    if (!outcome.marked) {
      context.log.info('disruption command not started: the budget, read again, no longer allows it', {
        nodePool: command.nodePool.name,
        method: command.method,
        candidates: command.candidates.map((c) => c.name),
        why: outcome.why,
      });
      return { cause: 'Budget', message: budgetBlockedMessage(command.reason) };
    }
    if (!outcome.value) return VIEW_BEHIND;
  }
  const settings = deps.settings.disruption;
  const input: ExecutorInput = {
    command,
    pollSeconds: settings.replacementPollSeconds,
    fallbackSeconds: settings.replacementFallbackSeconds,
    timeoutMinutes: settings.replacementTimeoutMinutes,
  };
  await timings.time('workflow', () =>
    orchestrations.startNew(DisruptionNames.orchestrationV2, { instanceId, input }),
  );
  return true;
}

/**
 * A command its method's own workflow carries out (repair's reboot), started in place of the executor's
 * under the same instance ID. That workflow marks the candidates itself; the view marks them now, so the
 * methods after this one in the pass count them as disrupting.
 */
async function startOwnWorkflow(
  context: SweepContext,
  command: DisruptionCommand,
  workflow: NonNullable<DisruptionCommand['ownWorkflow']>,
  instanceId: string,
): Promise<true> {
  const { deps, orchestrations, view } = context;
  await orchestrations.startNew(workflow.orchestration, { instanceId, input: workflow.input });
  const byName = new Map(view.nodeClaims().map((c) => [c.metadata.name, c]));
  for (const candidate of command.candidates) {
    const nodeClaim = byName.get(candidate.name);
    if (!nodeClaim) continue;
    const mark = {
      type: ConditionTypes.disruptionReason,
      status: 'True' as const,
      reason: command.reason,
      message: command.detail,
    };
    view.updateNodeClaim({
      ...nodeClaim,
      status: {
        ...nodeClaim.status,
        conditions: setCondition(nodeClaim.status?.conditions, mark, deps.now()),
      },
    });
  }
  deps.log.info("disruption command started in its method's own workflow", {
    nodePool: command.nodePool.name,
    method: command.method,
    workflow: workflow.orchestration,
    instanceId,
    candidates: command.candidates.map((c) => c.name),
    detail: command.detail,
  });
  return true;
}

/** The candidates that, read fresh, are gone, recreated, deleting or already marked. */
async function candidatesBehind(context: SweepContext, command: DisruptionCommand): Promise<string[]> {
  const fresh = await Promise.all(command.candidates.map((c) => currentCandidate(context.deps, c)));
  return command.candidates
    .filter((_, i) => {
      const nodeClaim = fresh[i];
      return (
        !nodeClaim || nodeClaim.metadata.deletionTimestamp || disruptionReasonOf(nodeClaim) !== undefined
      );
    })
    .map((c) => c.name);
}

/** The method whose workflow holds a mark of `reason` (the first listed with that reason). */
const methodOfReason = (reason: string): DisruptionMethod | undefined =>
  disruptionMethods.find((m) => m.reason === reason);

async function tendInFlight(context: SweepContext, nodePool: NodePool, statusOf: StatusOf): Promise<void> {
  const marked = claimsOf(context, nodePool).filter((c) => disruptionReasonOf(c) !== undefined);
  await forEachObject(
    context,
    'disruption',
    marked,
    (c) => c.metadata.name,
    async (nodeClaim) => {
      await tendOne(context, nodePool, nodeClaim, statusOf);
      return false;
    },
  );
}

async function tendOne(
  context: SweepContext,
  nodePool: NodePool,
  nodeClaim: NodeClaim,
  statusOf: StatusOf,
): Promise<void> {
  const { deps, orchestrations, view } = context;
  const reason = disruptionReasonOf(nodeClaim) ?? '';
  const method = methodOfReason(reason);
  const instanceId = method
    ? instanceIdOf(method.workflow, {
        candidateUid: nodeClaim.metadata.uid ?? '',
        nodePoolUid: nodePool.metadata.uid ?? '',
      })
    : undefined;
  const status = instanceId ? await statusOf(instanceId) : undefined;
  const perCandidate = method?.workflow.per === 'candidate';
  if (nodeClaim.metadata.deletionTimestamp) {
    if (instanceId && perCandidate && status && !isOrchestrationActive(status)) {
      await orchestrations.purge(instanceId);
    }
    return;
  }
  if (isOrchestrationActive(status)) return;
  const markedAt = Date.parse(
    findCondition(nodeClaim.status?.conditions, ConditionTypes.disruptionReason)?.lastTransitionTime ?? '',
  );
  if (!status && perCandidate && deps.now().getTime() - markedAt < UNSTARTED_COMMAND_GRACE_MS) return;

  // The view may lag: only a fresh read can show that the workflow deleted it meanwhile.
  const current = await deps.objects.nodeClaims.get(nodeClaim.metadata.name);
  if (!current || current.metadata.uid !== nodeClaim.metadata.uid) {
    view.removeNodeClaim(nodeClaim);
    return;
  }
  for (const replacement of view.nodeClaims()) {
    if (replacement.metadata.annotations?.[DisruptionAnnotations.replacementOf] !== nodeClaim.metadata.name) {
      continue;
    }
    await deleteUninitializedReplacement(deps, replacement.metadata.name);
  }
  const failed = perCandidate && status !== undefined;
  const released = await releaseCandidate(deps, current, reason, failed ? { failed } : {});
  if (released) {
    view.updateNodeClaim(released);
    const why = status
      ? `its workflow ${instanceId ?? ''} ended ${status.runtimeStatus}`
      : `no workflow carried out its ${reason} command`;
    if (failed) {
      await deps.events.warning(
        nodeClaimTarget(current),
        'DisruptionReplacementFailed',
        `Disruption (${reason}) abandoned: ${why}; node untainted, retried after a backoff`,
      );
    }
    deps.log.info('disruption mark released', { nodeClaim: nodeClaim.metadata.name, reason, why });
  }
  if (instanceId && perCandidate && status) await orchestrations.purge(instanceId);
}
