// The explain functions' request handling without a cluster: the order of its answers (503 unconfigured,
// 401 before anything else, 400, 403 naming the first denied permission, 404, 200), the permissions each
// subject needs, the Kubernetes user a token maps to, and the route matching both hosts share.
import { describe, expect, it } from 'vitest';
import { JwksCache, type EntraClaims } from '../../shared/azure/entra-token.js';
import {
  accessNeeded,
  handleExplainRequest,
  handleWhatIfRequest,
  whatIfAccessNeeded,
  whatIfObjectsOf,
  type ExplainHttpDependencies,
  type ExplainSubject,
} from '../../shared/access/explain-http.js';
import { kubernetesIdentityOf } from '../../shared/access/kubernetes-identity.js';
import type { ExplainAnswer, NodePoolAnswer } from '../../shared/decisions/explain/explain-answer.js';
import type { ResourceAccess, ReviewedUser } from '../../shared/kube/access-reviews.js';
import { silentLogger } from '../../shared/observability/logger.js';
import { matchHttpRoute, type HttpRequestData } from '../../shared/runtime/definitions.js';
import { createSigningKey, entraAccessTokenClaims, signJwt } from '../../local/entra-emulator/tokens.js';

const tenantId = '11111111-2222-3333-4444-555555555555';
const audience = 'api://explain-test';
const key = createSigningKey('k1');

function deps(
  allowed: (user: ReviewedUser, access: ResourceAccess) => boolean,
  answers: Map<string, ExplainAnswer> = new Map(),
): ExplainHttpDependencies & { reviewed: ResourceAccess[]; asked: ExplainSubject[] } {
  const reviewed: ResourceAccess[] = [];
  const asked: ExplainSubject[] = [];
  return {
    reviewed,
    asked,
    auth: {
      settings: { tenantId, audiences: [audience], jwksUri: 'https://keys.invalid' },
      keys: new JwksCache(() => Promise.resolve([key.publicJwk])),
    },
    reviews: {
      review: (user, access) => {
        reviewed.push(access);
        return Promise.resolve({ allowed: allowed(user, access) });
      },
    },
    now: () => new Date(),
    log: silentLogger,
    answer: (subject) => {
      asked.push(subject);
      return Promise.resolve(answers.get(JSON.stringify(subject)));
    },
  };
}

const token = (name = 'alice@contoso.example', groups: string[] = []) =>
  signJwt(entraAccessTokenClaims({ tenantId, audience, subject: { kind: 'user', name, groups } }), key);

const request = (params: Record<string, string>, bearer?: string): HttpRequestData => ({
  method: 'GET',
  params,
  query: {},
  headers: bearer === undefined ? {} : { authorization: `Bearer ${bearer}` },
  body: '',
});

const errorOf = (body: string | undefined) =>
  (JSON.parse(body ?? '{}') as { error?: { message: string } }).error;

describe('handleExplainRequest', () => {
  it('answers 503 when explain is not configured, whatever the request', async () => {
    const response = await handleExplainRequest(
      { ...deps(() => true), auth: undefined },
      'pod',
      request({ namespace: 'shop', name: 'web-0' }, token()),
    );
    expect(response.status).toBe(503);
  });

  it('authenticates before anything else: 401 without a token, even for a malformed name, and asks RBAC nothing', async () => {
    const d = deps(() => true);
    const response = await handleExplainRequest(d, 'pod', request({ namespace: 'Bad_NS', name: 'x' }));
    expect(response.status).toBe(401);
    expect(response.headers?.['www-authenticate']).toBe('Bearer realm="nodeclaim-azure explain"');
    expect(d.reviewed).toEqual([]);
  });

  it('400 for a name that is no Kubernetes name, once authenticated', async () => {
    const response = await handleExplainRequest(
      deps(() => true),
      'pod',
      request({ namespace: 'Bad_NS', name: 'x' }, token()),
    );
    expect(response.status).toBe(400);
  });

  it('403 naming the denied permission; the answer is not read', async () => {
    const d = deps(() => false);
    const response = await handleExplainRequest(
      d,
      'pod',
      request({ namespace: 'shop', name: 'web-0' }, token()),
    );
    expect(response.status).toBe(403);
    expect(errorOf(response.body)?.message).toBe(
      'alice@contoso.example may not get pods in namespace shop (web-0)',
    );
    expect(d.asked).toEqual([]);
  });

  it('a node needs get on the node and on the NodeClaim of that name: the missing one is named', async () => {
    const d = deps((_user, access) => access.resource === 'nodes');
    const response = await handleExplainRequest(d, 'node', request({ name: 'aks-general-1' }, token()));
    expect(response.status).toBe(403);
    expect(errorOf(response.body)?.message).toBe(
      'alice@contoso.example may not get nodeclaims.karpenter.sh (aks-general-1)',
    );
  });

  it('404 with a message when nothing is recorded, 200 with the answer as JSON otherwise (never cached)', async () => {
    const answers = new Map([[JSON.stringify({ kind: 'nodepool', name: 'general' }), poolAnswer]]);
    const d = deps(() => true, answers);
    const missing = await handleExplainRequest(d, 'nodepool', request({ name: 'gpu' }, token()));
    expect(missing.status).toBe(404);
    expect(errorOf(missing.body)?.message).toBe('nothing is recorded about nodepool gpu yet');
    const found = await handleExplainRequest(d, 'nodepool', request({ name: 'general' }, token()));
    expect(found.status).toBe(200);
    expect(JSON.parse(found.body ?? '')).toEqual(poolAnswer);
    expect(found.headers?.['cache-control']).toBe('no-store');
  });

  it('names only the moved pods of namespaces where the caller may list pods; the others are counted', async () => {
    const answers = new Map([[JSON.stringify({ kind: 'nodepool', name: 'general' }), poolAnswer]]);
    const d = deps((_user, access) => access.resource !== 'pods' || access.namespace === 'shop', answers);
    const found = await handleExplainRequest(d, 'nodepool', request({ name: 'general' }, token()));
    const body = JSON.parse(found.body ?? '') as NodePoolAnswer;
    expect(body.pass?.commands[0]).toMatchObject({ podsMoved: ['shop/web-0'], podsMovedHidden: 2 });
    expect(d.reviewed.filter((a) => a.resource === 'pods').map((a) => a.namespace)).toEqual([
      'payroll',
      'shop',
    ]);
  });
});

const poolAnswer: NodePoolAnswer = {
  kind: 'nodepool',
  name: 'general',
  summary: '1 command',
  pass: {
    id: 'general-1',
    at: '2026-12-06T12:00:00Z',
    candidates: 1,
    causes: [],
    commands: [
      {
        pass: { id: 'general-1', at: '2026-12-06T12:00:00Z' },
        method: 'emptiness',
        reason: 'Underutilized',
        candidates: ['general-a'],
        replacements: [],
        pricePerHourBefore: 0.1,
        pricePerHourAfter: 0,
        podsMoved: ['shop/web-0', 'payroll/run-1', 'payroll/run-2'],
      },
    ],
    pricePerHourDelta: -0.1,
  },
  provisioning: { windows: 0, excluded: [], launches: 0, launchPricePerHour: 0 },
};

describe('accessNeeded', () => {
  it('asks for get on the object itself, by name', () => {
    expect(accessNeeded({ kind: 'pod', namespace: 'shop', name: 'web-0' })).toEqual([
      { verb: 'get', group: '', resource: 'pods', namespace: 'shop', name: 'web-0' },
    ]);
    expect(accessNeeded({ kind: 'nodepool', name: 'general' })).toEqual([
      { verb: 'get', group: 'karpenter.sh', resource: 'nodepools', name: 'general' },
    ]);
  });
});

describe('kubernetesIdentityOf', () => {
  const base: EntraClaims = {
    issuer: 'i',
    audience: 'a',
    tenantId,
    objectId: 'oid-1',
    upn: undefined,
    preferredUsername: undefined,
    identityType: undefined,
    groups: ['g1'],
    groupsOverage: false,
    expiresAt: new Date(),
  };
  it('names a user by upn, else preferred_username; groups plus system:authenticated; the object ID as extra', () => {
    expect(kubernetesIdentityOf({ ...base, upn: 'a@c.example', preferredUsername: 'p@c.example' })).toEqual({
      kind: 'user',
      username: 'a@c.example',
      groups: ['g1', 'system:authenticated'],
      extra: { oid: ['oid-1'] },
      groupsOverage: false,
    });
    expect(kubernetesIdentityOf({ ...base, preferredUsername: 'p@c.example' })?.username).toBe('p@c.example');
  });
  it('names an application by its object ID (idtyp app, or no user name at all)', () => {
    expect(kubernetesIdentityOf({ ...base, identityType: 'app', preferredUsername: 'x' })).toMatchObject({
      kind: 'app',
      username: 'oid-1',
    });
    expect(kubernetesIdentityOf(base)).toMatchObject({ kind: 'app', username: 'oid-1' });
    expect(kubernetesIdentityOf({ ...base, objectId: undefined })).toBeUndefined();
  });
});

describe('matchHttpRoute', () => {
  it('takes one decoded segment per parameter; literals match case-insensitively; lengths must agree', () => {
    expect(matchHttpRoute('explain/pod/{namespace}/{name}', 'explain/pod/shop/web-0')).toEqual({
      namespace: 'shop',
      name: 'web-0',
    });
    expect(matchHttpRoute('explain/node/{name}', 'Explain/Node/a%2Eb')).toEqual({ name: 'a.b' });
    expect(matchHttpRoute('explain/node/{name}', 'explain/node')).toBeUndefined();
    expect(matchHttpRoute('explain/node/{name}', 'explain/node/a/b')).toBeUndefined();
    expect(matchHttpRoute('explain/node/{name}', 'explain/nodes/a')).toBeUndefined();
  });
});

describe('what explain answers when it cannot check, and what-if needs', () => {
  it('a review that cannot be made (API server away) is a 503 saying to try again, not a bare 500', async () => {
    const d = deps(() => true);
    d.reviews = { review: () => Promise.reject(new Error('connect ECONNREFUSED')) };
    const response = await handleExplainRequest(
      d,
      'pod',
      request({ namespace: 'shop', name: 'web-0' }, token()),
    );
    expect(response.status).toBe(503);
    expect(response.headers?.['retry-after']).toBe('30');
    expect(errorOf(response.body)?.message).toContain('ECONNREFUSED');
  });

  it('what-if needs list on nodes and the right to apply each object; its body must be the objects list', async () => {
    expect(
      whatIfAccessNeeded([
        { kind: 'Pod', metadata: { name: 'a', namespace: 'shop' } },
        { kind: 'Pod', metadata: { name: 'b', namespace: 'shop' } },
        { kind: 'NodePool', metadata: { name: 'general' } },
        { kind: 'AKSNodeClass', metadata: { name: 'default' } },
      ]),
    ).toEqual([
      { verb: 'list', group: '', resource: 'nodes' },
      { verb: 'create', group: '', resource: 'pods', namespace: 'shop' },
      { verb: 'update', group: 'karpenter.sh', resource: 'nodepools', name: 'general' },
      { verb: 'update', group: 'karpenter.azure.com', resource: 'aksnodeclasses', name: 'default' },
    ]);
    expect(whatIfObjectsOf('{"objects":[{"kind":"Pod"}]}')).toEqual([{ kind: 'Pod' }]);
    expect(whatIfObjectsOf('kind: Pod')).toMatchObject({ problem: expect.stringContaining('not JSON') });
    expect(whatIfObjectsOf('{"objects":[]}')).toMatchObject({
      problem: expect.stringContaining('non-empty'),
    });
  });

  it('a what-if input error is a 400 with its message', async () => {
    const d = deps(() => true);
    const whatIfError = Object.assign(new Error('objects[0] (Deployment apps/v1): only a Pod …'), {
      name: 'WhatIfInputError',
    });
    const response = await handleWhatIfRequest(
      { ...d, whatIf: () => Promise.reject(whatIfError) },
      { ...request({}, token()), method: 'POST', body: '{"objects":[{"kind":"Deployment"}]}' },
    );
    expect(response.status).toBe(400);
    expect(errorOf(response.body)?.message).toContain('objects[0] (Deployment apps/v1)');
  });
});
