// The explain CLI's side of the function app's explain endpoints: one GET per subject, one POST for a
// what-if, each with a bearer token. Every failure a user can hit (not signed in, not allowed, nothing
// recorded, the wrong URL) becomes one sentence that says what to do next, because the raw status code
// of an HTTP API does not.
import {
  EXPLAIN_DISRUPTION_RECORDS,
  EXPLAIN_PROVISIONING_RECORDS,
  type ExplainAnswer,
  type ExplainSubject,
} from '../../shared/lifecycle/explain/explain-subject.js';

/** A request that did not give an answer, with the message to print. */
export class ExplainRequestError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'ExplainRequestError';
  }
}

export interface ExplainClient {
  /** The function app's URL, e.g. https://my-app.azurewebsites.net (no /api). */
  url: string;
  /** The bearer token, asked for only when a request is about to be sent. */
  token: () => Promise<string>;
  /**
   * A request with no answer after this long fails (default 30 s: the endpoint reads a few hundred
   * records).
   */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** What a request was for, to say it in an error. */
export type ExplainRequest = { kind: 'subject'; subject: ExplainSubject } | { kind: 'what-if' };

const DEFAULT_TIMEOUT_MS = 30_000;

/** `/api/explain/pod/<ns>/<name>`, `/api/explain/node/<name>`, `/api/explain/nodepool/<name>`. */
export function subjectPath(subject: ExplainSubject): string {
  const parts =
    subject.kind === 'pod' ? [subject.kind, subject.namespace, subject.name] : [subject.kind, subject.name];
  return `/api/explain/${parts.map((part) => encodeURIComponent(part)).join('/')}`;
}

/** The answer about a subject. */
export async function getExplanation(client: ExplainClient, subject: ExplainSubject): Promise<ExplainAnswer> {
  const body = await send(client, subjectPath(subject), { method: 'GET' }, { kind: 'subject', subject });
  return body as ExplainAnswer;
}

/**
 * What would happen if the manifest's objects were applied. They are sent as JSON (`{"objects": [...]}`):
 * the CLI reads YAML, so the function app needs no YAML parser of its own.
 */
export async function postWhatIf(client: ExplainClient, objects: readonly unknown[]): Promise<unknown> {
  return send(
    client,
    '/api/explain/what-if',
    {
      method: 'POST',
      body: JSON.stringify({ objects }),
      headers: { 'Content-Type': 'application/json' },
    },
    { kind: 'what-if' },
  );
}

async function send(
  client: ExplainClient,
  path: string,
  init: { method: 'GET' | 'POST'; body?: string; headers?: Record<string, string> },
  request: ExplainRequest,
): Promise<unknown> {
  const base = client.url.replace(/\/+$/, '');
  const target = `${base}${path}`;
  const token = await client.token();
  const doFetch = client.fetch ?? fetch;
  let response: Response;
  try {
    response = await doFetch(target, {
      method: init.method,
      headers: { Accept: 'application/json', Authorization: `Bearer ${token}`, ...init.headers },
      ...(init.body !== undefined ? { body: init.body } : {}),
      signal: AbortSignal.timeout(client.timeoutMs ?? DEFAULT_TIMEOUT_MS),
    });
  } catch (error) {
    throw new ExplainRequestError(connectionErrorMessage(base, error));
  }
  const text = await response.text();
  if (!response.ok)
    throw new ExplainRequestError(httpErrorMessage(response.status, text, request), response.status);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ExplainRequestError(
      `${target} answered ${response.status} but not with JSON: is ${base} the nodeclaim-azure function app? (--url / NODECLAIM_EXPLAIN_URL)`,
    );
  }
}

/** The human name of a subject: `pod shop/web-0`, `node aks-general-1`, `NodePool general`. */
export function describeSubject(subject: ExplainSubject): string {
  switch (subject.kind) {
    case 'pod':
      return `pod ${subject.namespace}/${subject.name}`;
    case 'node':
      return `node ${subject.name}`;
    case 'nodepool':
      return `NodePool ${subject.name}`;
  }
}

/** The Kubernetes permission that lets a user read what explain tells about a subject. */
function permissionFor(request: ExplainRequest): string {
  if (request.kind === 'what-if')
    return 'list on nodes, and the right to apply the manifest (create its pods, update its NodePool or AKSNodeClass)';
  const subject = request.subject;
  switch (subject.kind) {
    case 'pod':
      return `get on pods in namespace ${subject.namespace}`;
    case 'node':
      return 'get on nodes and nodeclaims.karpenter.sh (cluster-wide)';
    case 'nodepool':
      return 'get on nodepools.karpenter.sh (cluster-wide)';
  }
}

/** The server's own explanation, when its error body carries one (`{"error": …}` or `{"message": …}`). */
function serverMessage(body: string): string | undefined {
  const trimmed = body.trim();
  if (trimmed === '') return undefined;
  try {
    const parsed = JSON.parse(trimmed) as unknown;
    if (parsed && typeof parsed === 'object') {
      for (const key of ['error', 'message'] as const) {
        const value = (parsed as Record<string, unknown>)[key];
        if (typeof value === 'string' && value !== '') return value;
        if (value && typeof value === 'object') {
          const nested = (value as Record<string, unknown>)['message'];
          if (typeof nested === 'string' && nested !== '') return nested;
        }
      }
    }
    return undefined;
  } catch {
    // Plain text; a long HTML error page says nothing a terminal can use.
    return trimmed.length <= 300 && !trimmed.startsWith('<') ? trimmed : undefined;
  }
}

/** One sentence per status a user can meet, saying what to do next. */
export function httpErrorMessage(status: number, body: string, request: ExplainRequest): string {
  const said = serverMessage(body);
  const because = said ? ` (the app says: ${said})` : '';
  const what = request.kind === 'what-if' ? 'a what-if' : describeSubject(request.subject);
  switch (status) {
    case 400:
      return request.kind === 'what-if'
        ? `The app could not use the manifest${because}: -f takes Pod, NodePool and AKSNodeClass manifests, YAML or JSON.`
        : `The app rejected the request for ${what}${because}.`;
    case 401:
      return `Not signed in (401)${because}: sign in: az login, or pass --token (NODECLAIM_EXPLAIN_TOKEN); the token's audience must be the app's (--audience / NODECLAIM_EXPLAIN_AUDIENCE).`;
    case 403:
      return `You may not read ${what} (403)${because}: ask your cluster admin for ${permissionFor(request)}.`;
    case 404:
      if (request.kind === 'what-if' || said === undefined) {
        return `Not found (404)${because}: the app has no explain endpoint here; check --url (NODECLAIM_EXPLAIN_URL) is the function app's URL and that it runs a version with explain.`;
      }
      return `Nothing recorded about ${what} yet${because}: explain reads the newest ${EXPLAIN_PROVISIONING_RECORDS} provisioning windows and ${EXPLAIN_DISRUPTION_RECORDS} disruption passes, and decisions are kept only some hours. Check the name; a pod is recorded once a provisioning window considers it, a node once a disruption pass judges it.`;
    case 429:
    case 503:
      return `The app is busy (${status})${because}: try again in a minute.`;
    default:
      return status >= 500
        ? `The app failed to answer (${status})${because}: try again; if it persists, look at the function app's logs.`
        : `The app answered ${status}${because}.`;
  }
}

/** Why the app could not be reached, naming the URL that was tried. */
export function connectionErrorMessage(url: string, error: unknown): string {
  const code = errorCode(error);
  if (code === 'TimeoutError' || code === 'AbortError') {
    return `No answer from ${url} in time: check the function app is running, or try again.`;
  }
  const why = code ? ` (${code})` : error instanceof Error ? ` (${error.message})` : '';
  return `Could not reach ${url}${why}: check --url (NODECLAIM_EXPLAIN_URL) is the function app's URL, e.g. https://<app>.azurewebsites.net.`;
}

function errorCode(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  if (error.name === 'TimeoutError' || error.name === 'AbortError') return error.name;
  // fetch wraps the socket's error (ECONNREFUSED, ENOTFOUND, …) as its cause.
  const cause = (error as Error & { cause?: unknown }).cause;
  if (cause && typeof cause === 'object') {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    // A URL fetch refuses before connecting (a port browsers block, say) has a reason but no code.
    if (cause instanceof Error && cause.message !== '') return cause.message;
  }
  return undefined;
}
