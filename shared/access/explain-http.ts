// The explain HTTP functions' request handling: who is asking (their Microsoft Entra ID token, verified
// by the app because the Functions host lets every request through), whether the cluster's RBAC lets
// them read what they ask about (a SubjectAccessReview for that person), and only then the answer. The
// answer itself comes from a dependency (the decision records, read by explainSubject), so nothing here
// knows how answers are made, and nothing there knows who asked.
import type { ExplainAuthSettings } from '../config/settings.js';
import {
  podNamespacesOf,
  withVisiblePods,
  type ExplainAnswer,
  type ExplainSubject,
} from '../decisions/explain/explain-answer.js';
import { bearerToken, validateEntraToken, type JwksCache } from '../azure/entra-token.js';
import type { AccessReviews, ResourceAccess } from '../kube/access-reviews.js';
import type { Logger } from '../observability/logger.js';
import type { HttpRequestData, HttpResponseData } from '../runtime/definitions.js';
import { kubernetesIdentityOf, type KubernetesIdentity } from './kubernetes-identity.js';

export type { ExplainSubject };

export type ExplainSubjectKind = ExplainSubject['kind'];

/** The route of each subject kind, under the host's `api/` prefix. */
export const EXPLAIN_ROUTES: Readonly<Record<ExplainSubjectKind, string>> = {
  pod: 'explain/pod/{namespace}/{name}',
  node: 'explain/node/{name}',
  nodepool: 'explain/nodepool/{name}',
};

export interface ExplainHttpDependencies {
  /** undefined: explain is not configured (EXPLAIN_AUDIENCE unset), and every request is answered 503. */
  auth: { settings: ExplainAuthSettings; keys: JwksCache } | undefined;
  reviews: AccessReviews;
  now: () => Date;
  log: Logger;
  /** The answer about `subject`, or undefined when nothing is recorded about it. */
  answer(subject: ExplainSubject): Promise<ExplainAnswer | undefined>;
}

/**
 * What a caller must be allowed to read to be told about `subject`, as kubectl would need: `get` on the
 * pod in its namespace; `get` on the node and on the NodeClaim of that name (a node is asked about by
 * either name, and its answer is the NodeClaim's too); `get` on the NodePool.
 */
export function accessNeeded(subject: ExplainSubject): ResourceAccess[] {
  switch (subject.kind) {
    case 'pod':
      return [{ verb: 'get', group: '', resource: 'pods', namespace: subject.namespace, name: subject.name }];
    case 'node':
      return [
        { verb: 'get', group: '', resource: 'nodes', name: subject.name },
        { verb: 'get', group: 'karpenter.sh', resource: 'nodeclaims', name: subject.name },
      ];
    case 'nodepool':
      return [{ verb: 'get', group: 'karpenter.sh', resource: 'nodepools', name: subject.name }];
  }
}

/** `get pods in namespace shop`, `get nodepools.karpenter.sh`: a permission as a cluster admin grants it. */
export function describeAccess(access: ResourceAccess): string {
  const resource = access.group === '' ? access.resource : `${access.resource}.${access.group}`;
  return `${access.verb} ${resource}${access.namespace !== undefined ? ` in namespace ${access.namespace}` : ''}`;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** The subject of a request to `kind`'s route, or what is wrong with its names. */
export function explainSubjectOf(
  kind: ExplainSubjectKind,
  params: Readonly<Record<string, string>>,
): ExplainSubject | { problem: string } {
  const name = params['name'] ?? '';
  if (!DNS_SUBDOMAIN.test(name))
    return { problem: `${JSON.stringify(name)} is not a Kubernetes object name` };
  if (kind !== 'pod') return { kind, name };
  const namespace = params['namespace'] ?? '';
  if (!DNS_LABEL.test(namespace)) return { problem: `${JSON.stringify(namespace)} is not a namespace name` };
  return { kind, namespace, name };
}

const REALM = 'nodeclaim-azure explain';

function json(status: number, body: unknown, headers: Record<string, string> = {}): HttpResponseData {
  return {
    status,
    // Answers depend on who asked: no shared cache may keep one.
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers },
    body: JSON.stringify(body),
  };
}

const failure = (status: number, code: string, message: string, more: object = {}, headers = {}) =>
  json(status, { error: { code, message }, ...more }, headers);

/** 401 with the RFC 6750 challenge: bare without a token, `invalid_token` with the reason otherwise. */
function unauthenticated(reason: string, hadToken: boolean): HttpResponseData {
  const challenge = hadToken
    ? `Bearer realm="${REALM}", error="invalid_token", error_description="${reason.replace(/["\\]/g, "'")}"`
    : `Bearer realm="${REALM}"`;
  return failure(401, 'Unauthorized', reason, {}, { 'www-authenticate': challenge });
}

/** The caller as the cluster knows them, from their token; or the response that refuses them. */
async function authenticate(
  deps: Pick<ExplainHttpDependencies, 'auth' | 'now' | 'log'>,
  request: HttpRequestData,
): Promise<KubernetesIdentity | HttpResponseData> {
  if (!deps.auth)
    return failure(
      503,
      'NotConfigured',
      'explain is not configured on this app: EXPLAIN_AUDIENCE (the app registration users get tokens for) is unset',
    );

  const token = bearerToken(request.headers['authorization']);
  if (token === undefined)
    return unauthenticated(
      'a Microsoft Entra ID bearer token is required (Authorization: Bearer <token>)',
      false,
    );
  const verified = await validateEntraToken(token, deps.auth.keys, {
    tenantId: deps.auth.settings.tenantId,
    audiences: deps.auth.settings.audiences,
    now: deps.now(),
  });
  if (!verified.ok) {
    deps.log.info('explain refused a token', { reason: verified.reason });
    return unauthenticated(`the token was refused: ${verified.reason}`, true);
  }
  return (
    kubernetesIdentityOf(verified.claims) ?? unauthenticated('the token names no user and no object ID', true)
  );
}

const isResponse = (value: KubernetesIdentity | HttpResponseData): value is HttpResponseData =>
  'status' in value;

/** 403 naming the permission the cluster's RBAC refused, or undefined when every one is allowed. */
async function refusal(
  deps: Pick<ExplainHttpDependencies, 'reviews' | 'log'>,
  identity: KubernetesIdentity,
  needed: readonly ResourceAccess[],
): Promise<HttpResponseData | undefined> {
  const denied = await firstDenied(deps.reviews, identity, needed);
  if (denied) {
    deps.log.info('explain denied by RBAC', {
      user: identity.username,
      access: describeAccess(denied.access),
      reason: denied.reason,
    });
    const overage = identity.groupsOverage
      ? ' (your token carried no groups, because you are in too many: bindings to your groups could not count; see docs/explain.md)'
      : '';
    return failure(
      403,
      'Forbidden',
      `${identity.username} may not ${describeAccess(denied.access)}${denied.access.name ? ` (${denied.access.name})` : ''}${overage}`,
      { denied: { user: identity.username, ...denied.access } },
    );
  }
  return undefined;
}

/**
 * A request whose caller could not be checked (Entra's keys or the API server's reviews unreachable) is
 * answered 503 with what failed, so the caller knows to try again rather than reading a bare 500.
 */
async function unlessUncheckable(
  deps: Pick<ExplainHttpDependencies, 'log'>,
  handle: () => Promise<HttpResponseData>,
): Promise<HttpResponseData> {
  try {
    return await handle();
  } catch (error) {
    deps.log.warn('explain could not answer', { error });
    const reason = error instanceof Error ? error.message : String(error);
    return failure(
      503,
      'Unavailable',
      `explain could not answer now (${reason}): try again in a minute`,
      {},
      {
        'retry-after': '30',
      },
    );
  }
}

/** Handles one request to `kind`'s route, from authentication to the answer. */
export function handleExplainRequest(
  deps: ExplainHttpDependencies,
  kind: ExplainSubjectKind,
  request: HttpRequestData,
): Promise<HttpResponseData> {
  return unlessUncheckable(deps, () => explainRequest(deps, kind, request));
}

async function explainRequest(
  deps: ExplainHttpDependencies,
  kind: ExplainSubjectKind,
  request: HttpRequestData,
): Promise<HttpResponseData> {
  const identity = await authenticate(deps, request);
  if (isResponse(identity)) return identity;

  const subject = explainSubjectOf(kind, request.params);
  if ('problem' in subject) return failure(400, 'BadRequest', subject.problem);

  const refused = await refusal(deps, identity, accessNeeded(subject));
  if (refused) return refused;

  const answer = await deps.answer(subject);
  if (answer === undefined)
    return failure(404, 'NotFound', `nothing is recorded about ${describeSubject(subject)} yet`);
  return json(200, withVisiblePods(answer, await visibleNamespaces(deps.reviews, identity, answer)));
}

/** A node's or NodePool's answer names pods of many namespaces; at most this many are asked about. */
export const MAX_NAMESPACES_REVIEWED = 20;

/** The namespaces, among those the answer's pods are in, where the caller may list pods. */
async function visibleNamespaces(
  reviews: AccessReviews,
  identity: KubernetesIdentity,
  answer: ExplainAnswer,
): Promise<Set<string>> {
  const visible = new Set<string>();
  await Promise.all(
    podNamespacesOf(answer)
      .slice(0, MAX_NAMESPACES_REVIEWED)
      .map(async (namespace) => {
        const decision = await reviews.review(identity, {
          verb: 'list',
          group: '',
          resource: 'pods',
          namespace,
        });
        if (decision.allowed) visible.add(namespace);
      }),
  );
  return visible;
}

function describeSubject(subject: ExplainSubject): string {
  return subject.kind === 'pod'
    ? `pod ${subject.namespace}/${subject.name}`
    : `${subject.kind} ${subject.name}`;
}

async function firstDenied(
  reviews: AccessReviews,
  identity: KubernetesIdentity,
  needed: readonly ResourceAccess[],
): Promise<{ access: ResourceAccess; reason: string | undefined } | undefined> {
  const decisions = await Promise.all(needed.map((access) => reviews.review(identity, access)));
  const index = decisions.findIndex((decision) => !decision.allowed);
  if (index < 0) return undefined;
  const decision = decisions[index];
  return { access: needed[index] as ResourceAccess, reason: decision?.reason ?? decision?.evaluationError };
}

export const WHAT_IF_ROUTE = 'explain/what-if';
/** A what-if's body at most: a few objects' manifests, not a cluster's. */
export const WHAT_IF_MAX_BODY_BYTES = 1024 * 1024;
export const WHAT_IF_MAX_OBJECTS = 500;

export interface WhatIfHttpDependencies extends Omit<ExplainHttpDependencies, 'answer'> {
  /** What applying `objects` would do; throws an error whose name is `WhatIfInputError` for bad input. */
  whatIf(objects: readonly unknown[]): Promise<unknown>;
}

/**
 * What a caller must be allowed to do to ask what applying `objects` would do: apply them (create the
 * pods in their namespace, update the NodePool or AKSNodeClass), and list nodes, since the answer names
 * the cluster's nodes, their prices and what would replace them. Undefined for an object that is none of
 * the three: the what-if itself refuses it with its own message.
 */
export function whatIfAccessNeeded(objects: readonly unknown[]): ResourceAccess[] {
  const needed: ResourceAccess[] = [{ verb: 'list', group: '', resource: 'nodes' }];
  for (const object of objects) {
    if (typeof object !== 'object' || object === null) continue;
    const { kind, metadata } = object as {
      kind?: unknown;
      metadata?: { name?: unknown; namespace?: unknown };
    };
    const name = typeof metadata?.name === 'string' ? metadata.name : undefined;
    if (kind === 'Pod') {
      const namespace = typeof metadata?.namespace === 'string' ? metadata.namespace : 'default';
      needed.push({ verb: 'create', group: '', resource: 'pods', namespace });
    } else if (kind === 'NodePool') {
      needed.push({
        verb: 'update',
        group: 'karpenter.sh',
        resource: 'nodepools',
        ...(name ? { name } : {}),
      });
    } else if (kind === 'AKSNodeClass') {
      needed.push({
        verb: 'update',
        group: 'karpenter.azure.com',
        resource: 'aksnodeclasses',
        ...(name ? { name } : {}),
      });
    }
  }
  // One review per distinct permission.
  const seen = new Set<string>();
  return needed.filter((access) => {
    const key = JSON.stringify(access);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The objects of a what-if body: `{ "objects": [...] }` in JSON (the CLI turns YAML into this). */
export function whatIfObjectsOf(body: string | undefined): unknown[] | { problem: string } {
  if (body === undefined || body.trim() === '')
    return { problem: 'the body must be JSON: {"objects": [<Pod, NodePool or AKSNodeClass>, ...]}' };
  if (Buffer.byteLength(body) > WHAT_IF_MAX_BODY_BYTES)
    return {
      problem: `the body is over ${WHAT_IF_MAX_BODY_BYTES / 1024} KiB: ask about fewer objects at once`,
    };
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (error) {
    return { problem: `the body is not JSON (${(error as Error).message})` };
  }
  const objects = (parsed as { objects?: unknown } | null)?.objects;
  if (!Array.isArray(objects) || objects.length === 0)
    return { problem: 'the body must hold a non-empty "objects" list' };
  if (objects.length > WHAT_IF_MAX_OBJECTS)
    return { problem: `${objects.length} objects: at most ${WHAT_IF_MAX_OBJECTS} at once` };
  return objects;
}

/** Handles one what-if request: authentication, the right to apply what it names, then the answer. */
export function handleWhatIfRequest(
  deps: WhatIfHttpDependencies,
  request: HttpRequestData,
): Promise<HttpResponseData> {
  return unlessUncheckable(deps, () => whatIfRequest(deps, request));
}

async function whatIfRequest(
  deps: WhatIfHttpDependencies,
  request: HttpRequestData,
): Promise<HttpResponseData> {
  const identity = await authenticate(deps, request);
  if (isResponse(identity)) return identity;
  const objects = whatIfObjectsOf(request.body);
  if (!Array.isArray(objects)) return failure(400, 'BadRequest', objects.problem);
  const refused = await refusal(deps, identity, whatIfAccessNeeded(objects));
  if (refused) return refused;
  try {
    return json(200, await deps.whatIf(objects));
  } catch (error) {
    if (error instanceof Error && error.name === 'WhatIfInputError')
      return failure(400, 'BadRequest', error.message);
    throw error;
  }
}
