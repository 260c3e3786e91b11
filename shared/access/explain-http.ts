// The explain HTTP functions' request handling: who is asking (their Microsoft Entra ID token, verified
// by the app because the Functions host lets every request through), whether the cluster's RBAC lets
// them read what they ask about (a SubjectAccessReview for that person), and only then the answer. The
// answer itself comes from a dependency (the decision records, read by explainSubject), so nothing here
// knows how answers are made, and nothing there knows who asked.
import type { ExplainAuthSettings } from '../config/settings.js';
import type { ExplainSubject } from '../decisions/explain/explain-answer.js';
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
  /** The JSON-serializable answer about `subject`, or undefined when nothing is recorded about it. */
  answer(subject: ExplainSubject): Promise<unknown>;
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

/** Handles one request to `kind`'s route, from authentication to the answer. */
export async function handleExplainRequest(
  deps: ExplainHttpDependencies,
  kind: ExplainSubjectKind,
  request: HttpRequestData,
): Promise<HttpResponseData> {
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
  const identity = kubernetesIdentityOf(verified.claims);
  if (!identity) return unauthenticated('the token names no user and no object ID', true);

  const subject = explainSubjectOf(kind, request.params);
  if ('problem' in subject) return failure(400, 'BadRequest', subject.problem);

  const denied = await firstDenied(deps.reviews, identity, accessNeeded(subject));
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

  const answer = await deps.answer(subject);
  if (answer === undefined)
    return failure(404, 'NotFound', `nothing is recorded about ${describeSubject(subject)} yet`);
  return json(200, answer);
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
