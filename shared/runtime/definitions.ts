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

export type HttpMethod = 'GET' | 'POST';

/**
 * What an HTTP function reads of a request: small, plain data, so one handler runs under the Functions
 * host (azure-functions.ts converts its HttpRequest) and under the local host's listener alike.
 */
export interface HttpRequestData {
  method: string;
  /** The route's parameters, e.g. `{ namespace, name }` for `explain/pod/{namespace}/{name}`. */
  params: Readonly<Record<string, string>>;
  /** The query string's parameters (the first value of a repeated one). */
  query: Readonly<Record<string, string>>;
  /** Header values by lower-cased name. */
  headers: Readonly<Record<string, string>>;
  /** The body as text ('' when there is none). */
  body: string;
}

export interface HttpResponseData {
  status: number;
  headers?: Readonly<Record<string, string>>;
  body?: string;
}

export interface HttpFunctionDefinition {
  kind: 'http';
  name: string;
  /**
   * The route under the host's prefix (`api/` by default, as host.json leaves it): literal segments and
   * `{parameter}` segments, which match one path segment each.
   */
  route: string;
  methods: readonly HttpMethod[];
  handler: (request: HttpRequestData, context: HandlerContext) => Promise<HttpResponseData>;
}

export type FunctionDefinition =
  | QueueFunctionDefinition
  | TimerFunctionDefinition
  | OrchestrationFunctionDefinition
  | ActivityFunctionDefinition
  | HttpFunctionDefinition;

/** The prefix the Functions host serves HTTP routes under (host.json extensions.http.routePrefix unset). */
export const HTTP_ROUTE_PREFIX = 'api';

/**
 * The parameters of `path` (no query, no leading prefix) under `route`, or undefined when it does not
 * match: literal segments compare case-insensitively, as the Functions host's routing does; `{name}`
 * takes one non-empty segment, percent-decoded.
 */
export function matchHttpRoute(route: string, path: string): Record<string, string> | undefined {
  const routeSegments = route.split('/').filter((segment) => segment !== '');
  const pathSegments = path.split('/').filter((segment) => segment !== '');
  if (routeSegments.length !== pathSegments.length) return undefined;
  const params: Record<string, string> = {};
  for (const [index, routeSegment] of routeSegments.entries()) {
    const segment = pathSegments[index] as string;
    const parameter = /^\{(\w+)\}$/.exec(routeSegment)?.[1];
    if (parameter !== undefined) {
      let value: string;
      try {
        value = decodeURIComponent(segment);
      } catch {
        return undefined;
      }
      if (value === '') return undefined;
      params[parameter] = value;
    } else if (routeSegment.toLowerCase() !== segment.toLowerCase()) return undefined;
  }
  return params;
}

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
