// Maps FunctionDefinitions onto the Azure Functions v4 programming model and Durable Functions v3.
// The local in-process host consumes the same definitions, so this is the only Azure-specific wiring.
import { createRequire } from 'node:module';
import { app, type HttpRequest, type HttpResponseInit, type InvocationContext } from '@azure/functions';
import * as df from 'durable-functions';
import { createLogger, type LogLevel, type Logger } from '../observability/logger.js';
import { startAzureMonitorMetrics } from '../observability/metric-export.js';
import type {
  FunctionDefinition,
  HandlerContext,
  HttpFunctionDefinition,
  HttpRequestData,
  OrchestrationClient,
  OrchestrationStatus,
} from './definitions.js';

/**
 * True inside the Functions host, whose Node worker provides `@azure/functions-core` (the same probe the
 * `@azure/functions` package makes). Outside it (the local in-process host, tests) registering would only
 * print "test mode" warnings, so the definitions are left to the local host instead.
 */
const insideFunctionsHost: boolean = (() => {
  try {
    createRequire(import.meta.url)('@azure/functions-core');
    return true;
  } catch {
    return false;
  }
})();

let telemetryStarted = false;

/** Inside the Functions host, starts exporting metrics to Application Insights (once; never throws). */
export function startTelemetryInFunctionsHost(): void {
  if (!insideFunctionsHost || telemetryStarted) return;
  telemetryStarted = true;
  void startAzureMonitorMetrics(process.env, createLogger({ component: 'telemetry' }));
}

export function registerWithAzureFunctions(definition: FunctionDefinition): void {
  if (!insideFunctionsHost) return;
  switch (definition.kind) {
    case 'queue':
      app.storageQueue(definition.name, {
        queueName: definition.queueName,
        connection: definition.connection,
        extraInputs: [df.input.durableClient()],
        handler: (message, context) => definition.handler(message, handlerContext(definition.name, context)),
      });
      return;
    case 'timer':
      app.timer(definition.name, {
        schedule: definition.schedule,
        runOnStartup: definition.runOnStartup ?? false,
        extraInputs: [df.input.durableClient()],
        handler: (timer, context) => definition.handler(timer, handlerContext(definition.name, context)),
      });
      return;
    case 'orchestration':
      df.app.orchestration(definition.name, definition.handler);
      return;
    case 'activity':
      df.app.activity(definition.name, {
        extraInputs: [df.input.durableClient()],
        handler: (input: unknown, context) =>
          definition.handler(input, handlerContext(definition.name, context)),
      });
      return;
    case 'http':
      registerHttp(definition);
      return;
  }
}

function registerHttp(definition: HttpFunctionDefinition): void {
  app.http(definition.name, {
    route: definition.route,
    methods: [...definition.methods],
    // Anonymous to the Functions host, on purpose: a function key is one shared secret that says nothing
    // about who calls, and the answer depends on who calls. The handler itself verifies the caller's
    // Microsoft Entra ID token (shared/azure/entra-token.ts) and asks the cluster's RBAC what that
    // caller may read; a request without a valid token is refused there with 401.
    authLevel: 'anonymous',
    extraInputs: [df.input.durableClient()],
    handler: async (request, context): Promise<HttpResponseInit> => {
      const response = await definition.handler(
        await httpRequestData(request),
        handlerContext(definition.name, context),
      );
      return {
        status: response.status,
        ...(response.headers ? { headers: { ...response.headers } } : {}),
        ...(response.body !== undefined ? { body: response.body } : {}),
      };
    },
  });
}

async function httpRequestData(request: HttpRequest): Promise<HttpRequestData> {
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => {
    headers[name.toLowerCase()] = value;
  });
  const query: Record<string, string> = {};
  for (const [name, value] of request.query) if (!(name in query)) query[name] = value;
  return {
    method: request.method,
    params: { ...request.params },
    query,
    headers,
    body: await request.text(),
  };
}

function handlerContext(functionName: string, context: InvocationContext): HandlerContext {
  const dequeueCount = context.triggerMetadata?.dequeueCount;
  return {
    invocationId: context.invocationId,
    functionName,
    log: invocationLogger(context, functionName),
    orchestrations: durableOrchestrationClient(df.getClient(context)),
    ...(typeof dequeueCount === 'number' ? { dequeueCount } : {}),
  };
}

/** Structured lines through the invocation's logger, so Application Insights correlates them. */
function invocationLogger(context: InvocationContext, functionName: string): Logger {
  const sinks: Record<LogLevel, (line: string) => void> = {
    debug: (line) => context.debug(line),
    info: (line) => context.info(line),
    warn: (line) => context.warn(line),
    error: (line) => context.error(line),
  };
  return createLogger({
    component: functionName,
    fields: { invocationId: context.invocationId },
    sink: (level, line) => sinks[level](line),
  });
}

export function durableOrchestrationClient(client: df.DurableClient): OrchestrationClient {
  return {
    startNew: (name, options) =>
      client.startNew(name, { instanceId: options.instanceId, input: options.input }),
    async getStatus(instanceId): Promise<OrchestrationStatus | undefined> {
      try {
        const status = await client.getStatus(instanceId, { showInput: false });
        if (!status?.runtimeStatus) return undefined;
        return {
          instanceId: status.instanceId,
          name: status.name,
          runtimeStatus: status.runtimeStatus as OrchestrationStatus['runtimeStatus'],
          output: status.output,
          customStatus: status.customStatus,
          createdTime: status.createdTime,
          lastUpdatedTime: status.lastUpdatedTime,
        };
      } catch (error) {
        if (isUnknownInstanceError(error)) return undefined;
        throw error;
      }
    },
    raiseEvent: (instanceId, eventName, data) => client.raiseEvent(instanceId, eventName, data),
    terminate: (instanceId, reason) => client.terminate(instanceId, reason),
    async purge(instanceId) {
      await client.purgeInstanceHistory(instanceId);
    },
  };
}

/**
 * durable-functions 3 raises the extension's HTTP 404 for an unknown instance as a plain Error with no
 * status property; its message starts with this sentence (DurableClient.getStatus), whatever the
 * instance ID, so the ID itself can never make an error look like "not found".
 */
const UNKNOWN_INSTANCE_MESSAGE =
  'DurableClient error: Durable Functions extension replied with HTTP 404 response.';

export function isUnknownInstanceError(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith(UNKNOWN_INSTANCE_MESSAGE);
}
