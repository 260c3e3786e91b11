// The one description of every function in the app. functions/ lists them, grouped by workflow; the Azure
// Functions registration (azure-functions.ts) and the local in-process host (local/host/) both consume
// these same objects, so nothing is wired twice by hand.
import type { InvocationContext, Timer } from '@azure/functions';
import type { OrchestrationHandler } from 'durable-functions';
import type { Logger } from '../observability/logger.js';

export type OrchestrationRuntimeStatus =
  'Pending' | 'Running' | 'Completed' | 'ContinuedAsNew' | 'Failed' | 'Terminated' | 'Suspended';

/** Not yet finished: such an instance still owns its work, and a second one with its ID cannot start. */
const ACTIVE_STATUSES: ReadonlySet<OrchestrationRuntimeStatus> = new Set([
  'Pending',
  'Running',
  'ContinuedAsNew',
  'Suspended',
]);

export function isOrchestrationActive(
  status: Pick<OrchestrationStatus, 'runtimeStatus'> | undefined,
): boolean {
  return status !== undefined && ACTIVE_STATUSES.has(status.runtimeStatus);
}

export interface OrchestrationStatus {
  instanceId: string;
  name: string;
  runtimeStatus: OrchestrationRuntimeStatus;
  input?: unknown;
  output?: unknown;
  customStatus?: unknown;
  createdTime?: Date;
  lastUpdatedTime?: Date;
}

/**
 * The subset of durable-functions' DurableClient the functions use. In Azure it wraps
 * `df.getClient(context)`; locally the in-process host implements it over its own history store.
 */
export interface OrchestrationClient {
  /** Starts `name` with `instanceId`. Throws if an instance with that ID is already running. */
  startNew(name: string, options: { instanceId: string; input?: unknown }): Promise<string>;
  /** undefined when no instance with that ID exists. */
  getStatus(instanceId: string): Promise<OrchestrationStatus | undefined>;
  /**
   * Delivers an external event to a running instance (waitForExternalEvent). Throws when no instance
   * with that ID is running.
   */
  raiseEvent(instanceId: string, eventName: string, data?: unknown): Promise<void>;
  terminate(instanceId: string, reason: string): Promise<void>;
  /** Removes a finished instance's history. */
  purge(instanceId: string): Promise<void>;
}

export interface HandlerContext {
  invocationId: string;
  functionName: string;
  log: Logger;
  orchestrations: OrchestrationClient;
  /** How many times this queue message has been delivered, starting at 1. */
  dequeueCount?: number;
}

export interface QueueFunctionDefinition {
  kind: 'queue';
  name: string;
  /** App setting name of the queue (resolved at registration), or the literal queue name locally. */
  queueName: string;
  /** App-setting prefix of the storage connection (identity-based in Azure). */
  connection: string;
  handler: (message: unknown, context: HandlerContext) => Promise<void>;
}

export interface TimerFunctionDefinition {
  kind: 'timer';
  name: string;
  /** NCRONTAB with seconds, as Azure Functions expects, e.g. "*\/10 * * * * *". */
  schedule: string;
  runOnStartup?: boolean;
  handler: (timer: Timer | undefined, context: HandlerContext) => Promise<void>;
}

export interface OrchestrationFunctionDefinition {
  kind: 'orchestration';
  name: string;
  handler: OrchestrationHandler;
}

export interface ActivityFunctionDefinition {
  kind: 'activity';
  name: string;
  handler: (input: unknown, context: HandlerContext) => Promise<unknown>;
}

export type FunctionDefinition =
  | QueueFunctionDefinition
  | TimerFunctionDefinition
  | OrchestrationFunctionDefinition
  | ActivityFunctionDefinition;

/**
 * An activity whose handler takes the input its orchestration passes to `callActivity` under `name`.
 * Durable Functions hands an activity its input as deserialized JSON; this app's own orchestrators are the
 * only callers, so the input's type is asserted here, once, instead of in every handler.
 */
export function activity<Input>(
  name: string,
  handler: (input: Input, context: HandlerContext) => Promise<unknown>,
): ActivityFunctionDefinition {
  return { kind: 'activity', name, handler: (input, context) => handler(input as Input, context) };
}

export function orchestration(name: string, handler: OrchestrationHandler): OrchestrationFunctionDefinition {
  return { kind: 'orchestration', name, handler };
}

/** Azure's InvocationContext, re-exported so adapters need not import @azure/functions themselves. */
export type { InvocationContext };
