// Replays one orchestrator against a history the test writes, episode by episode, through the local
// host's replay (local/host/replay.ts: durable-functions' own engine), the way the Durable Task framework
// drives it: each episode replays the whole history plus one new event (an activity's result, a fired
// timer, a raised event), and the orchestrator's new actions become scheduling events with the sequence
// numbers the engine expects. The test answers each scheduled action itself, so it can assert exactly
// what the orchestrator schedules next, at what time, and how it ends, without any activity running.
import type { OrchestrationHandler } from 'durable-functions';
import type { StoredEvent } from '../../local/host/history.js';
import { createReplayer, type OrchestratorAction, type ReplayResult } from '../../local/host/replay.js';
import { silentLogger } from '../../shared/observability/logger.js';

/** An action the orchestrator scheduled that has no answer in the history yet. */
export interface PendingAction {
  action: OrchestratorAction;
  /** The sequence number of an activity or a timer (an external event has none). */
  eventId?: number;
  /** The activity's input, parsed. */
  input?: unknown;
}

/**
 * How the history answers a pending action: an activity's result or failure, a timer fired (at its time),
 * or an external event raised; `at` moves the clock forward first (an answer that arrives later).
 */
export type Answer = ({ result: unknown } | { failure: string } | { fire: true } | { raise: unknown }) & {
  at?: Date;
};

/** Picks the next action to answer and how, or undefined to stop replaying. */
export type Responder = (
  pending: readonly PendingAction[],
  now: Date,
) => { to: PendingAction; answer: Answer } | undefined;

export interface ReplayRun {
  /** The last replay's result: running (with its actions), completed, continued as new or failed. */
  result: ReplayResult;
  /** Every action in the order the orchestrator scheduled it. */
  scheduled: OrchestratorAction[];
  /** What was answered, in order: the action's name (or 'timer') and the time it was answered. */
  answered: { name: string; at: Date; input?: unknown }[];
  /** Unanswered when the replay stopped. */
  pending: PendingAction[];
  /** The time of the last episode. */
  now: Date;
  history: StoredEvent[];
}

const parse = (text: string | undefined): unknown => (text === undefined ? undefined : JSON.parse(text));

/** The name of an action as `answered` lists it. */
export function actionName(action: OrchestratorAction): string {
  if (action.kind === 'activity' || action.kind === 'subOrchestration') return action.name;
  if (action.kind === 'externalEvent') return `event:${action.name}`;
  return action.kind;
}

export async function replayOrchestration(options: {
  name: string;
  handler: OrchestrationHandler;
  instanceId: string;
  input: unknown;
  start: Date;
  respond: Responder;
  /** Stops a runaway orchestrator (each answer is one episode). */
  maxEpisodes?: number;
}): Promise<ReplayRun> {
  const replay = createReplayer(options.name, options.handler);
  let now = options.start.getTime();
  const iso = (): string => new Date(now).toISOString();
  const history: StoredEvent[] = [];
  const scheduled: OrchestratorAction[] = [];
  const answered: ReplayRun['answered'] = [];
  let pending: PendingAction[] = [];
  let consumed = 0;
  let nextEventId = 0;
  let episode: StoredEvent[] = [
    { type: 'OrchestratorStarted', timestamp: iso() },
    {
      type: 'ExecutionStarted',
      timestamp: iso(),
      name: options.name,
      input: JSON.stringify(options.input),
    },
  ];
  const run = (result: ReplayResult): ReplayRun => ({
    result,
    scheduled,
    answered,
    pending,
    now: new Date(now),
    history,
  });
  for (let episodes = 0; episodes < (options.maxEpisodes ?? 500); episodes++) {
    const result = await replay({
      instanceId: options.instanceId,
      history: [...history, ...episode],
      playedCount: history.length,
      // Parsed afresh for every episode, as the host does: an orchestrator that mutates its input must
      // not see the previous replay's changes.
      input: JSON.parse(JSON.stringify(options.input)),
      log: silentLogger,
    });
    history.push(...episode);
    if (result.status !== 'running') return run(result);
    // As the host checks it: a replay must issue again every action its history records.
    scheduled.forEach((recorded, index) => {
      const replayed = result.actions[index];
      if (!replayed || actionName(replayed) !== actionName(recorded)) {
        throw new Error(
          `non-deterministic replay: action ${index} was ${actionName(recorded)}, now ${replayed ? actionName(replayed) : 'missing'}`,
        );
      }
    });
    for (let index = consumed; index < result.actions.length; index++) {
      const action = result.actions[index]!;
      scheduled.push(action);
      if (action.kind === 'activity') {
        const eventId = nextEventId++;
        history.push({
          type: 'TaskScheduled',
          timestamp: iso(),
          eventId,
          name: action.name,
          input: action.input,
        });
        pending.push({ action, eventId, input: parse(action.input) });
      } else if (action.kind === 'timer') {
        const eventId = nextEventId++;
        history.push({
          type: 'TimerCreated',
          timestamp: iso(),
          eventId,
          fireAt: action.fireAt.toISOString(),
        });
        pending.push({ action, eventId });
      } else if (action.kind === 'externalEvent') {
        pending.push({ action });
      } else {
        throw new Error(`the replay harness does not answer ${action.kind} actions`);
      }
    }
    consumed = result.actions.length;
    history.push({ type: 'OrchestratorCompleted', timestamp: iso() });
    const next = options.respond(pending, new Date(now));
    if (!next) return run(result);
    const { to, answer } = next;
    pending = pending.filter((p) => p !== to);
    if (answer.at) now = Math.max(now, answer.at.getTime());
    let event: StoredEvent;
    if ('fire' in answer) {
      if (to.action.kind !== 'timer' || to.eventId === undefined) throw new Error('only a timer fires');
      now = Math.max(now, to.action.fireAt.getTime());
      event = {
        type: 'TimerFired',
        timestamp: iso(),
        timerId: to.eventId,
        fireAt: to.action.fireAt.toISOString(),
      };
    } else if ('raise' in answer) {
      if (to.action.kind !== 'externalEvent') throw new Error('only an external event is raised');
      event = {
        type: 'EventRaised',
        timestamp: iso(),
        name: to.action.name,
        input: JSON.stringify(answer.raise),
      };
    } else {
      if (to.action.kind !== 'activity' || to.eventId === undefined)
        throw new Error('only an activity answers');
      event =
        'result' in answer
          ? {
              type: 'TaskCompleted',
              timestamp: iso(),
              taskScheduledId: to.eventId,
              result: JSON.stringify(answer.result) ?? 'null',
            }
          : {
              type: 'TaskFailed',
              timestamp: iso(),
              taskScheduledId: to.eventId,
              failure: { errorType: 'Error', errorMessage: answer.failure },
            };
    }
    answered.push({
      name: actionName(to.action),
      at: new Date(now),
      ...(to.input !== undefined ? { input: to.input } : {}),
    });
    episode = [{ type: 'OrchestratorStarted', timestamp: iso() }, event];
  }
  throw new Error(`${options.name} was still running after ${options.maxEpisodes ?? 500} episodes`);
}

/**
 * A responder for orchestrators that wait on one thing at a time: every timer fires when due, and each
 * activity is answered by `answer` (by name, with its parsed input and the call's number among that
 * name's calls, from 1); undefined from `answer` stops the replay there, with that activity pending.
 */
export function sequential(
  answer: (name: string, input: unknown, call: number, now: Date) => Answer | undefined,
): Responder {
  const calls = new Map<string, number>();
  return (pending, now) => {
    const first = pending[0];
    if (!first) return undefined;
    if (first.action.kind === 'timer') return { to: first, answer: { fire: true } };
    if (first.action.kind !== 'activity') return undefined;
    const name = first.action.name;
    const call = (calls.get(name) ?? 0) + 1;
    const reply = answer(name, first.input, call, now);
    if (!reply) return undefined;
    calls.set(name, call);
    return { to: first, answer: reply };
  };
}

/** The outage-tolerant activities' answer for a transient failure (the tag their wrapper writes). */
export const transientAnswer = (message: string): Answer => ({
  result: { tag: 'outage-retry/v1', transient: message },
});
