// Who may ask explain, end to end on the real control plane: the app's own definitions in the local host,
// called over its HTTPS listener with tokens from the local Entra ID emulator, the app verifying them
// against the emulator's published keys, and the cluster's RBAC (asked with a SubjectAccessReview created
// as the Function App's shipped identity, bound to exactly infra/k8s/functions) deciding what each user
// may read. Admin only creates the namespace, the Roles and bindings a cluster admin would, and reads.
import { randomUUID } from 'node:crypto';
import { RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEntraEmulator, type EntraEmulator } from '../../local/entra-emulator/index.js';
import { issueServerCertificate } from '../../local/tls/dev-ca.js';
import { entraIssuers } from '../../shared/azure/entra-token.js';
import type { ProvisioningRecord } from '../../shared/decisions/explain/decision-record.js';
import { devCa } from '../support/dev-ca.js';
import { eventually, startLaunchStack, type LaunchStack } from '../support/launch-stack.js';

const run = randomUUID().slice(0, 8);
const namespace = `explain-${run}`;
const nodePool = `explain-pool-${run}`;
const alice = `alice-${run}@contoso.example`;
const bob = `bob-${run}@contoso.example`;
const carol = `carol-${run}@contoso.example`;
const readersGroup = randomUUID();
const clusterRoleName = `explain-nodepool-reader-${run}`;

let entra: EntraEmulator;
let stack: LaunchStack;
let baseUrl: string;
let rbac: RbacAuthorizationV1Api;

interface Answer {
  status: number;
  challenge: string | null;
  body: { error?: { code: string; message: string }; denied?: Record<string, string> } & Record<
    string,
    unknown
  >;
  text: string;
}

async function ask(
  path: string,
  token?: string,
  post?: { body: string; contentType: string },
): Promise<Answer> {
  const response = await fetch(`${baseUrl}/${path}`, {
    ...(post ? { method: 'POST', body: post.body } : {}),
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(post ? { 'content-type': post.contentType } : {}),
    },
  });
  const text = await response.text();
  return {
    status: response.status,
    challenge: response.headers.get('www-authenticate'),
    body: text === '' ? {} : (JSON.parse(text) as Answer['body']),
    text,
  };
}

const userToken = (name: string, groups: readonly string[] = []): string =>
  entra.mintToken({ kind: 'user', name, groups });

beforeAll(async () => {
  entra = await startEntraEmulator();
  const ca = await devCa();
  stack = await startLaunchStack({
    env: {
      AKS_TENANT_ID: entra.tenantId,
      EXPLAIN_AUDIENCE: entra.audience,
      EXPLAIN_JWKS_URI: entra.jwksUri,
      // A table of this file's own: the records written here must not reach other files' answers.
      DECISION_RECORDS_TABLE: `explain${run}`,
    },
    http: { tls: await issueServerCertificate(ca, ['127.0.0.1', 'localhost']) },
  });
  const url = stack.host.httpBaseUrl();
  if (!url) throw new Error('the host serves no HTTP function');
  baseUrl = url;
  const { core, config } = await stack.admin.kube();
  rbac = config.makeApiClient(RbacAuthorizationV1Api);
  await core.createNamespace({ body: { metadata: { name: namespace } } });
});

afterAll(async () => {
  const clients = await stack?.admin.kube();
  await clients?.core.deleteNamespace({ name: namespace }).catch(() => undefined);
  await rbac?.deleteClusterRoleBinding({ name: clusterRoleName }).catch(() => undefined);
  await rbac?.deleteClusterRole({ name: clusterRoleName }).catch(() => undefined);
  await stack?.stop();
  await entra?.stop();
});

async function grantPodReads(binding: string, subject: { kind: 'User' | 'Group'; name: string }) {
  await rbac
    .createNamespacedRole({
      namespace,
      body: {
        metadata: { name: 'pod-reader', namespace },
        rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
      },
    })
    .catch((error: unknown) => {
      if ((error as { code?: number }).code !== 409) throw error;
    });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name: binding, namespace },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pod-reader' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', ...subject }],
    },
  });
}

/** Asks until RBAC has seen a new binding (the API server's authorizer follows its informer). */
const askUntilAllowed = (path: string, token: string): Promise<Answer> =>
  eventually(async () => {
    const answer = await ask(path, token);
    return answer.status === 403 ? undefined : answer;
  }, `${path} allowed`);

describe('explain: authentication (Entra ID token)', () => {
  it('answers 401 with a Bearer challenge when no token is given', async () => {
    const answer = await ask(`explain/pod/${namespace}/web-0`);
    expect(answer.status).toBe(401);
    expect(answer.challenge).toBe('Bearer realm="nodeclaim-azure explain"');
    expect(answer.body.error?.code).toBe('Unauthorized');
  });

  it("answers 401 invalid_token to a token from another tenant's issuer, and to one for another audience", async () => {
    const otherTenant = entra.mintToken(
      { kind: 'user', name: alice },
      { issuer: entraIssuers('99999999-9999-9999-9999-999999999999')[0] },
    );
    const wrongIssuer = await ask(`explain/pod/${namespace}/web-0`, otherTenant);
    expect(wrongIssuer.status).toBe(401);
    expect(wrongIssuer.challenge).toMatch(/^Bearer realm="nodeclaim-azure explain", error="invalid_token"/);
    expect(wrongIssuer.body.error?.message).toMatch(/issuer/);

    const otherApp = entra.mintToken({ kind: 'user', name: alice }, { audience: 'api://another-app' });
    const wrongAudience = await ask(`explain/pod/${namespace}/web-0`, otherApp);
    expect(wrongAudience.status).toBe(401);
    expect(wrongAudience.body.error?.message).toMatch(/audience/);
  });

  it('takes a token signed by a key the tenant published after the app read its keys', async () => {
    // The app has read the keys by now; a rollover publishes a new one and signs with it.
    expect(entra.jwksFetches()).toBeGreaterThan(0);
    const before = entra.jwksFetches();
    entra.rotateKey();
    const answer = await ask(`explain/pod/${namespace}/web-0`, userToken(alice));
    expect(answer.status).toBe(403);
    expect(entra.jwksFetches()).toBe(before + 1);
  });
});

describe('explain: authorization (the cluster RBAC of the user the token names)', () => {
  it('refuses a user without get on the pod (403 naming the permission), then lets them past once a RoleBinding grants it', async () => {
    const path = `explain/pod/${namespace}/web-0`;
    const denied = await ask(path, userToken(alice));
    expect(denied.status).toBe(403);
    expect(denied.body.error?.message).toBe(`${alice} may not get pods in namespace ${namespace} (web-0)`);
    expect(denied.body.denied).toMatchObject({ user: alice, verb: 'get', resource: 'pods', namespace });

    await grantPodReads('alice-reads-pods', { kind: 'User', name: alice });
    const allowed = await askUntilAllowed(path, userToken(alice));
    // Nothing is recorded about this pod: past authorization, explain says so.
    expect(allowed.status).toBe(404);
    expect(allowed.body.error?.message).toBe(`nothing is recorded about pod ${namespace}/web-0 yet`);

    // Another namespace stays closed to her.
    expect((await ask(`explain/pod/default/web-0`, userToken(alice))).status).toBe(403);
  });

  it('answers 200 with the answer once a provisioning window has recorded the pod', async () => {
    const record: ProvisioningRecord = {
      kind: 'provisioning',
      id: `w-${run}`,
      at: new Date().toISOString(),
      pods: [
        {
          pod: `${namespace}/web-0`,
          uid: `uid-${run}`,
          excluded: [
            { nodePool: 'general', cause: 'Limit', message: 'would exceed limits cpu=64 (63 in use)' },
          ],
        },
      ],
      launches: [],
    };
    await stack.deps.decisionRecords.write(record);
    const answer = await ask(`explain/pod/${namespace}/web-0`, userToken(alice));
    expect(answer.status).toBe(200);
    expect(answer.text).toContain(`${namespace}/web-0`);
    expect(answer.text).toContain('would exceed limits cpu=64');
  });

  it("grants by the token's groups: a member of a bound group passes; a user whose token had too many groups to list is refused, and told why", async () => {
    const path = `explain/pod/${namespace}/web-0`;
    expect((await ask(path, userToken(bob, [readersGroup]))).status).toBe(403);
    await grantPodReads('readers-read-pods', { kind: 'Group', name: readersGroup });
    expect((await askUntilAllowed(path, userToken(bob, [readersGroup]))).status).toBe(200);

    const overage = entra.mintToken({ kind: 'user', name: carol, groupsOverage: true });
    const refused = await ask(path, overage);
    expect(refused.status).toBe(403);
    expect(refused.body.error?.message).toMatch(/carried no groups, because you are in too many/);
  });

  it('a NodePool needs get on nodepools.karpenter.sh, cluster-wide', async () => {
    const path = `explain/nodepool/${nodePool}`;
    const denied = await ask(path, userToken(alice));
    expect(denied.status).toBe(403);
    expect(denied.body.error?.message).toBe(`${alice} may not get nodepools.karpenter.sh (${nodePool})`);

    await rbac.createClusterRole({
      body: {
        metadata: { name: clusterRoleName },
        rules: [{ apiGroups: ['karpenter.sh'], resources: ['nodepools'], verbs: ['get'] }],
      },
    });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: clusterRoleName },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRoleName },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: alice }],
      },
    });
    expect((await askUntilAllowed(path, userToken(alice))).status).toBe(404);
  });

  it('a node needs get on nodes and on nodeclaims.karpenter.sh: the first missing one is named', async () => {
    const denied = await ask(`explain/node/aks-node-${run}`, userToken(alice));
    expect(denied.status).toBe(403);
    expect(denied.body.denied).toMatchObject({ verb: 'get', resource: 'nodes' });
  });

  it('refuses a name that is no Kubernetes name (400), once the caller is authenticated', async () => {
    expect((await ask(`explain/pod/${namespace}/Not_A_Name`, userToken(alice))).status).toBe(400);
  });
});

describe('explain: what-if (POST), for those who could apply what they ask about', () => {
  const whatIfRole = `explain-what-if-${run}`;
  afterAll(async () => {
    await rbac?.deleteClusterRoleBinding({ name: whatIfRole }).catch(() => undefined);
    await rbac?.deleteClusterRole({ name: whatIfRole }).catch(() => undefined);
  });

  const post = (body: unknown, token: string): Promise<Answer> =>
    ask('explain/what-if', token, {
      body: typeof body === 'string' ? body : JSON.stringify(body),
      contentType: 'application/json',
    });
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'what-if-0', namespace },
    spec: { containers: [{ name: 'app', image: 'app', resources: { requests: { cpu: '100m' } } }] },
  };

  it('a user who may not create the pod is refused (403), one who may gets the answer, and nothing is written', async () => {
    const denied = await post({ objects: [pod] }, userToken(carol));
    expect(denied.status).toBe(403);
    expect(denied.body.denied).toMatchObject({ verb: 'list', resource: 'nodes' });

    await rbac.createClusterRole({
      body: {
        metadata: { name: whatIfRole },
        rules: [
          { apiGroups: [''], resources: ['nodes'], verbs: ['list'] },
          { apiGroups: [''], resources: ['pods'], verbs: ['create'] },
        ],
      },
    });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: whatIfRole },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: whatIfRole },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: carol }],
      },
    });
    const answer = await eventually(async () => {
      const asked = await post({ objects: [pod] }, userToken(carol));
      return asked.status === 403 ? undefined : asked;
    }, 'what-if allowed');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      changes: expect.any(Array),
      drift: [],
      notComputed: expect.any(Array),
    });
    const { core } = await stack.admin.kube();
    expect((await core.listNamespacedPod({ namespace })).items.map((p) => p.metadata?.name)).not.toContain(
      'what-if-0',
    );

    // Updating a NodePool is a right of its own.
    const nodePoolChange = { apiVersion: 'karpenter.sh/v1', kind: 'NodePool', metadata: { name: nodePool } };
    const refused = await post({ objects: [nodePoolChange] }, userToken(carol));
    expect(refused.status).toBe(403);
    expect(refused.body.denied).toMatchObject({ verb: 'update', resource: 'nodepools', name: nodePool });
  });

  it('a body that is not the objects list, or an object what-if cannot take, is a 400 naming it', async () => {
    expect((await post('kind: Pod', userToken(carol))).status).toBe(400);
    expect((await post({ objects: [] }, userToken(carol))).status).toBe(400);
    const deployment = await post(
      { objects: [{ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace } }] },
      userToken(carol),
    );
    expect(deployment.status).toBe(400);
    expect(deployment.body.error?.message).toContain('objects[0] (Deployment apps/v1)');
  });
});
