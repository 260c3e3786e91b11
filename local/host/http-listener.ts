// The local host's HTTP trigger: one listener on a loopback port that routes `/api/<route>` to the HTTP
// functions, as the Functions host does in Azure, so the explain CLI and the tests call the app's own
// handlers over the network exactly as they would call the Function App. HTTPS when given a certificate
// (the local stack's, signed by its development CA, as its other servers are): the requests carry
// bearer tokens.
import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../../shared/observability/logger.js';
import {
  HTTP_ROUTE_PREFIX,
  matchHttpRoute,
  type HandlerContext,
  type HttpFunctionDefinition,
  type HttpRequestData,
  type HttpResponseData,
} from '../../shared/runtime/definitions.js';
import { readRequestBody } from '../http/request-body.js';
import type { PemKeyPair } from '../tls/dev-ca.js';
import type { HostEventBus } from './events.js';
import type { WorkTracker } from './work-tracker.js';

/** The body cap of an HTTP trigger's request: far above any the app's functions take. */
const MAX_HTTP_BODY_BYTES = 1024 * 1024;

export interface HttpListenerOptions {
  definitions: readonly HttpFunctionDefinition[];
  /** Serves HTTPS with this certificate and key; plain HTTP without. */
  tls?: PemKeyPair;
  /** Default 0: a free port. */
  port?: number;
  log: Logger;
  events: HostEventBus;
  work: WorkTracker;
  contextFor: (functionName: string, invocationId: string) => HandlerContext;
}

export interface HttpListener {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** `https://127.0.0.1:PORT/api` (or http://) while listening; undefined otherwise. */
  baseUrl(): string | undefined;
}

export function createHttpListener(options: HttpListenerOptions): HttpListener {
  const handle = (request: IncomingMessage, response: ServerResponse): void => {
    serve(request, response).catch((error: unknown) => {
      options.log.error('http listener failed a request', { error });
      if (!response.headersSent) send(response, { status: 500, body: 'internal error' });
      else response.destroy();
    });
  };
  const server = options.tls
    ? createHttpsServer({ cert: options.tls.certPem, key: options.tls.keyPem }, handle)
    : createHttpServer(handle);
  let address: AddressInfo | undefined;

  async function serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://host.invalid');
    const method = (request.method ?? 'GET').toUpperCase();
    const prefix = `/${HTTP_ROUTE_PREFIX}/`;
    const path = url.pathname.startsWith(prefix) ? url.pathname.slice(prefix.length) : undefined;
    const matches =
      path === undefined
        ? []
        : options.definitions.flatMap((definition) => {
            const params = matchHttpRoute(definition.route, path);
            return params ? [{ definition, params }] : [];
          });
    const match = matches.find(({ definition }) =>
      (definition.methods as readonly string[]).includes(method),
    );
    if (!match) {
      request.resume();
      send(response, matches.length > 0 ? { status: 405 } : { status: 404 });
      return;
    }
    let body: Buffer;
    try {
      body = await readRequestBody(request, MAX_HTTP_BODY_BYTES);
    } catch (error) {
      send(response, { status: 413, body: error instanceof Error ? error.message : String(error) });
      return;
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers))
      if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
    const query: Record<string, string> = {};
    for (const [name, value] of url.searchParams) if (!(name in query)) query[name] = value;
    const data: HttpRequestData = {
      method,
      params: match.params,
      query,
      headers,
      body: body.toString('utf8'),
    };

    const { definition } = match;
    const invocationId = randomUUID();
    const done = options.work.begin();
    const started = Date.now();
    options.events.emit({
      type: 'function.invoked',
      functionName: definition.name,
      trigger: 'http',
      invocationId,
    });
    try {
      const result = await definition.handler(data, options.contextFor(definition.name, invocationId));
      options.events.emit({
        type: 'function.succeeded',
        functionName: definition.name,
        trigger: 'http',
        invocationId,
        durationMs: Date.now() - started,
      });
      send(response, result);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      options.events.emit({
        type: 'function.failed',
        functionName: definition.name,
        trigger: 'http',
        invocationId,
        durationMs: Date.now() - started,
        error: message,
      });
      options.log.error('http function failed', {
        functionName: definition.name,
        invocationId,
        error: message,
      });
      // The Functions host answers an unhandled exception with a bare 500, never its message.
      send(response, { status: 500 });
    } finally {
      done();
    }
  }

  return {
    start: () =>
      new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(options.port ?? 0, '127.0.0.1', () => {
          address = server.address() as AddressInfo;
          resolve();
        });
      }),
    stop: () =>
      new Promise<void>((resolve, reject) => {
        if (!server.listening) {
          resolve();
          return;
        }
        server.closeIdleConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
    baseUrl: () =>
      address && server.listening
        ? `${options.tls ? 'https' : 'http'}://127.0.0.1:${address.port}/${HTTP_ROUTE_PREFIX}`
        : undefined,
  };
}

function send(response: ServerResponse, result: HttpResponseData): void {
  response.writeHead(result.status, { ...result.headers });
  response.end(result.body ?? '');
}
