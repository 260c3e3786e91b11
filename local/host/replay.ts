// One replay of an orchestrator through durable-functions' own engine (the same TaskOrchestrationExecutor
// the Functions host drives): the full history goes in, the orchestrator's complete list of actions (or its
// output, or its failure) comes out. Replay schema V1 is used, where the engine flattens Task.all/Task.any
// into their child actions and timers are never split into "long timers".
import type { OrchestrationHandler } from 'durable-functions';
import {
  DummyOrchestrationContext,
  DurableOrchestrationInput,
  createOrchestrator,
} from 'durable-functions/lib/src/util/testingUtils.js';
import type { Logger } from '../../shared/observability/logger.js';
import { toJson, toLibraryEvent, type RetryPolicy, type StoredEvent } from './history.js';

/** The orchestrator's actions, in the order the engine assigns them sequence numbers. */
export type OrchestratorAction =
  | { kind: 'activity'; name: string; input?: string; retry?: RetryPolicy }
  | { kind: 'timer'; fireAt: Date }
  | { kind: 'subOrchestration'; name: string; instanceId?: string; input?: string }
  | { kind: 'externalEvent'; name: string }
  | { kind: 'continueAsNew'; input?: string }
  | { kind: 'unsupported'; description: string };

export type ReplayResult =
  | { status: 'running'; actions: OrchestratorAction[]; customStatus: unknown }
  | { status: 'completed'; output: unknown; customStatus: unknown }
  | { status: 'continuedAsNew'; input?: string; customStatus: unknown }
  | { status: 'failed'; message: string; customStatus: unknown };

// durable-functions' ActionType enum (lib/src/actions/ActionType.js).
const actionType = {
  CallActivity: 0,
  CallActivityWithRetry: 1,
  CallSubOrchestrator: 2,
  CallSubOrchestratorWithRetry: 3,
  ContinueAsNew: 4,
  CreateTimer: 5,
  WaitForExternalEvent: 6,
  CallEntity: 7,
  CallHttp: 8,
  SignalEntity: 9,
  WhenAny: 11,
  WhenAll: 12,
} as const;

const outOfProcDataLabel = '$OutOfProcData$:';

export type ReplayFunction = (input: {
  instanceId: string;
  history: readonly StoredEvent[];
  /** How many leading history events were already shown to the orchestrator in earlier episodes. */
  playedCount: number;
  input: unknown;
  parentInstanceId?: string;
  log: Logger;
}) => Promise<ReplayResult>;

/** Wraps an orchestration handler in the library's replay engine. */
export function createReplayer(name: string, handler: OrchestrationHandler): ReplayFunction {
  const orchestrator = createOrchestrator(handler);
  let invocation = 0;
  return async ({ instanceId, history, playedCount, input, parentInstanceId, log }) => {
    const events = history.map((event, index) => toLibraryEvent(event, index < playedCount));
    const trigger = new DurableOrchestrationInput(
      instanceId,
      events,
      input,
      undefined,
      undefined,
      undefined,
      0,
      false,
      parentInstanceId ?? '',
    );
    invocation += 1;
    const context = new DummyOrchestrationContext(name, `${instanceId}:${invocation}`, (level, ...args) =>
      forwardLog(log, level, args),
    );
    try {
      const state = await orchestrator(trigger, context);
      const actions = flattenActions(state.actions);
      if (state.isDone) {
        const continuation = actions.find((action) => action.kind === 'continueAsNew');
        if (continuation?.kind === 'continueAsNew') {
          return { status: 'continuedAsNew', input: continuation.input, customStatus: state.customStatus };
        }
        return { status: 'completed', output: state.output, customStatus: state.customStatus };
      }
      return { status: 'running', actions, customStatus: state.customStatus };
    } catch (error) {
      return failureFrom(error);
    }
  };
}

/**
 * The engine reports an orchestrator's exception as an error whose message ends with the JSON of the
 * orchestrator state after `$OutOfProcData$:`; the state's `error` is the orchestrator's own message.
 */
function failureFrom(error: unknown): ReplayResult {
  const message = error instanceof Error ? error.message : String(error);
  const at = message.indexOf(outOfProcDataLabel);
  if (at >= 0) {
    try {
      const state = JSON.parse(message.slice(at + outOfProcDataLabel.length)) as {
        error?: string;
        customStatus?: unknown;
      };
      return {
        status: 'failed',
        message: state.error ?? message.slice(0, at).trim(),
        customStatus: state.customStatus,
      };
    } catch {
      // Fall through to the raw message.
    }
  }
  return { status: 'failed', message, customStatus: undefined };
}

interface RawAction {
  actionType?: number;
  functionName?: string;
  input?: unknown;
  instanceId?: string;
  fireAt?: Date;
  retryOptions?: {
    firstRetryIntervalInMilliseconds?: number;
    maxNumberOfAttempts?: number;
    backoffCoefficient?: number;
    maxRetryIntervalInMilliseconds?: number;
  };
  compoundActions?: unknown[];
  externalEventName?: string;
}

/**
 * Flattens the engine's action list. A task that is yielded again inside Task.any/Task.all appears a second
 * time as the same object; it is counted once, so the list stays stable from one replay to the next.
 */
export function flattenActions(groups: readonly unknown[][]): OrchestratorAction[] {
  const seen = new Set<unknown>();
  const result: OrchestratorAction[] = [];
  const visit = (raw: unknown): void => {
    if (seen.has(raw)) return;
    seen.add(raw);
    const action = raw as RawAction;
    if (Array.isArray(action.compoundActions)) {
      for (const child of action.compoundActions) visit(child);
      return;
    }
    result.push(convert(action));
  };
  for (const group of groups) for (const raw of group) visit(raw);
  return result;
}

/** Activity and continue-as-new inputs arrive pre-serialized when they are strings (Utils.processInput). */
function inputText(input: unknown): string | undefined {
  return typeof input === 'string' ? input : toJson(input);
}

function convert(action: RawAction): OrchestratorAction {
  switch (action.actionType) {
    case actionType.CallActivity:
      return { kind: 'activity', name: action.functionName ?? '', input: inputText(action.input) };
    case actionType.CallActivityWithRetry: {
      const options = action.retryOptions ?? {};
      return {
        kind: 'activity',
        name: action.functionName ?? '',
        input: inputText(action.input),
        retry: {
          firstRetryIntervalMs: options.firstRetryIntervalInMilliseconds ?? 1000,
          maxNumberOfAttempts: options.maxNumberOfAttempts ?? 1,
          backoffCoefficient: options.backoffCoefficient ?? 1,
          maxRetryIntervalMs: options.maxRetryIntervalInMilliseconds,
        },
      };
    }
    case actionType.CallSubOrchestrator:
      return {
        kind: 'subOrchestration',
        name: action.functionName ?? '',
        instanceId: action.instanceId || undefined,
        input: toJson(action.input),
      };
    case actionType.ContinueAsNew:
      return { kind: 'continueAsNew', input: inputText(action.input) };
    case actionType.CreateTimer:
      return { kind: 'timer', fireAt: new Date(action.fireAt ?? 0) };
    case actionType.WaitForExternalEvent:
      return { kind: 'externalEvent', name: action.externalEventName ?? '' };
    default:
      return {
        kind: 'unsupported',
        description: `action type ${String(action.actionType)} (${describe(action.actionType)})`,
      };
  }
}

function describe(type: number | undefined): string {
  const entry = Object.entries(actionType).find(([, value]) => value === type);
  return entry?.[0] ?? 'unknown';
}

function forwardLog(log: Logger, level: string, args: unknown[]): void {
  const message = args.map((arg) => (typeof arg === 'string' ? arg : JSON.stringify(arg))).join(' ');
  if (level === 'error' || level === 'critical') log.error(message);
  else if (level === 'warning') log.warn(message);
  else if (level === 'information') log.info(message);
  else log.debug(message);
}
