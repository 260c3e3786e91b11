// The functions' RBAC manifests (infra/k8s/functions) on the real API server: applied with a test user as
// the subject, the server's own authorizer (SubjectAccessReview) allows what the drain, the status step,
// the bootstrap tokens, the sweep Lease and explain's reviews need, and refuses the Lease under any other
// name or in any other namespace, any Secret read, any other review, and what the functions never do. Then, as the shipped identity
// itself (every Role and the admission policy applied by the global setup), real requests: a bootstrap
// token of its own is created and deleted; a service-account-token Secret, a token of another shape, a
// read, an update or the delete of another Secret in kube-system are refused. The bridge's ClusterRole,
// with a test user as its subject, allows its informers' lists and watches and nothing just beside them.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  AuthorizationV1Api,
  KubeConfig,
  KubernetesObjectApi,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { eventually } from '../support/launch-stack.js';
import { CoreV1Api, type V1Secret } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import {
  bootstrapTokenSecret,
  bootstrapTokenSecretFrom,
  BOOTSTRAP_TOKEN_NAMESPACE,
} from '../../shared/cloudprovider/azure/decisions/bootstrap-token.js';
import { DEFAULT_SYSTEM_NAMESPACE } from '../../shared/config/settings.js';
import { statusCodeOf } from '../../shared/kube/errors.js';
import { shippedIdentities } from '../support/identities.js';

const root = join(import.meta.dirname, '..', '..');
const suffix = randomUUID().slice(0, 6);
const user = `nodeclaim-rbac-test-${suffix}`;
const config = new KubeConfig();
let objects: KubernetesObject[] = [];

beforeAll(async () => {
  config.loadFromFile(inject('kubeconfigPath'));
  const api = KubernetesObjectApi.makeApiClient(config);
  objects = ['clusterrole.yaml', 'lease-role.yaml', 'bootstrap-token-role.yaml', 'bindings.yaml'].flatMap(
    (file) =>
      parseAllDocuments(
        readFileSync(join(root, 'infra/k8s/functions', file), 'utf8').replaceAll(
          'FUNCTION_PRINCIPAL_ID',
          user,
        ),
      ).map((d) => {
        const object = d.toJS() as KubernetesObject & { roleRef?: { name: string } };
        // Unique names, so this run never collides with another on the shared control plane.
        object.metadata = { ...object.metadata, name: `${object.metadata?.name}-${suffix}` };
        if (object.roleRef) object.roleRef.name = `${object.roleRef.name}-${suffix}`;
        return object;
      }),
  );
  for (const object of objects) await api.create(object);
});

afterAll(async () => {
  const api = KubernetesObjectApi.makeApiClient(config);
  for (const object of objects) await api.delete(object).catch(() => undefined);
});

/**
 * The bridge's ClusterRole and binding with a test user as the subject in place of its ServiceAccount,
 * under unique names, so this run never collides with another on the shared control plane.
 */
function bridgeRbacFor(subject: string): KubernetesObject[] {
  return parseAllDocuments(readFileSync(join(root, 'infra/k8s/bridge/clusterrole.yaml'), 'utf8')).map((d) => {
    const object = d.toJS() as KubernetesObject & {
      roleRef?: { name: string };
      subjects?: { kind: string; name: string; apiGroup?: string }[];
    };
    object.metadata = { ...object.metadata, name: `${object.metadata?.name}-${suffix}` };
    if (object.roleRef) object.roleRef.name = `${object.roleRef.name}-${suffix}`;
    if (object.subjects)
      object.subjects = [{ kind: 'User', name: subject, apiGroup: 'rbac.authorization.k8s.io' }];
    return object;
  });
}

interface Access {
  group: string;
  resource: string;
  subresource?: string;
  verb: string;
  namespace?: string;
  name?: string;
}

async function allowed(access: Access, subject = user): Promise<boolean> {
  const api = config.makeApiClient(AuthorizationV1Api);
  const review = await api.createSubjectAccessReview({
    body: { spec: { user: subject, resourceAttributes: { ...access, version: '*' } } },
  });
  return review.status?.allowed === true;
}

/**
 * RBAC objects reach the authorizer through its informers (roles and bindings each their own), so each
 * grant is waited for; the timeout names those still refused.
 */
async function untilAllowed(accesses: readonly Access[], subject: string, what: string): Promise<void> {
  await eventually(
    async () => {
      const refused: string[] = [];
      for (const access of accesses)
        if (!(await allowed(access, subject))) refused.push(JSON.stringify(access));
      if (refused.length > 0) throw new Error(`still refused: ${refused.join(', ')}`);
      return true;
    },
    what,
    30_000,
  );
}

describe('infra/k8s/functions on the real API server', () => {
  it('allows what the functions do', async () => {
    const needed: Access[] = [
      { group: '', resource: 'pods', verb: 'delete', namespace: 'default' },
      { group: '', resource: 'pods', subresource: 'eviction', verb: 'create', namespace: 'default' },
      { group: '', resource: 'nodes', verb: 'patch' },
      { group: 'karpenter.sh', resource: 'nodeclaims', subresource: 'status', verb: 'patch' },
      { group: 'karpenter.sh', resource: 'nodepools', subresource: 'status', verb: 'patch' },
      { group: 'karpenter.azure.com', resource: 'aksnodeclasses', subresource: 'status', verb: 'patch' },
      {
        group: 'coordination.k8s.io',
        resource: 'leases',
        verb: 'create',
        namespace: DEFAULT_SYSTEM_NAMESPACE,
      },
      {
        group: 'coordination.k8s.io',
        resource: 'leases',
        verb: 'update',
        namespace: DEFAULT_SYSTEM_NAMESPACE,
        name: 'nodeclaim-azure-sweep',
      },
      {
        group: 'coordination.k8s.io',
        resource: 'leases',
        verb: 'update',
        namespace: DEFAULT_SYSTEM_NAMESPACE,
        name: 'nodeclaim-azure-disruption-marks',
      },
      { group: '', resource: 'events', verb: 'create', namespace: 'default' },
      { group: '', resource: 'secrets', verb: 'create', namespace: 'kube-system' },
      {
        group: '',
        resource: 'secrets',
        verb: 'delete',
        namespace: 'kube-system',
        name: 'bootstrap-token-abc123',
      },
      // explain: whether the person asking may read what they ask about.
      { group: 'authorization.k8s.io', resource: 'subjectaccessreviews', verb: 'create' },
    ];
    await untilAllowed(needed, user, 'every grant reaching the authorizer');
  });

  it('refuses the Lease under another name or elsewhere, any Secret read, and what the functions never do', async () => {
    const refused: Access[] = [
      {
        group: 'coordination.k8s.io',
        resource: 'leases',
        verb: 'update',
        namespace: DEFAULT_SYSTEM_NAMESPACE,
        name: 'another-lease',
      },
      // kube-system holds the control plane's own Leases: nothing of the app's is there any more.
      { group: 'coordination.k8s.io', resource: 'leases', verb: 'create', namespace: 'kube-system' },
      {
        group: 'coordination.k8s.io',
        resource: 'leases',
        verb: 'update',
        namespace: 'kube-system',
        name: 'kube-scheduler',
      },
      {
        group: 'coordination.k8s.io',
        resource: 'leases',
        verb: 'get',
        namespace: 'default',
        name: 'nodeclaim-azure-sweep',
      },
      { group: '', resource: 'secrets', verb: 'get', namespace: 'kube-system' },
      {
        group: '',
        resource: 'secrets',
        verb: 'get',
        namespace: 'kube-system',
        name: 'bootstrap-token-abc123',
      },
      { group: '', resource: 'secrets', verb: 'list', namespace: 'kube-system' },
      { group: '', resource: 'secrets', verb: 'watch', namespace: 'kube-system' },
      { group: '', resource: 'secrets', verb: 'update', namespace: 'kube-system' },
      { group: '', resource: 'secrets', verb: 'patch', namespace: 'kube-system' },
      { group: '', resource: 'secrets', verb: 'create', namespace: 'default' },
      { group: '', resource: 'secrets', verb: 'delete', namespace: DEFAULT_SYSTEM_NAMESPACE },
      { group: 'karpenter.sh', resource: 'nodepools', verb: 'delete' },
      { group: 'karpenter.sh', resource: 'nodepools', verb: 'create' },
      { group: 'karpenter.sh', resource: 'nodeclaims', verb: 'update' },
      { group: 'karpenter.azure.com', resource: 'aksnodeclasses', verb: 'patch' },
      { group: 'karpenter.sh', resource: 'nodeoverlays', verb: 'get' },
      { group: '', resource: 'pods', verb: 'create', namespace: 'default' },
      { group: '', resource: 'pods', verb: 'patch', namespace: 'default' },
      { group: '', resource: 'pods', subresource: 'exec', verb: 'create', namespace: 'default' },
      { group: '', resource: 'nodes', verb: 'create' },
      { group: '', resource: 'nodes', subresource: 'status', verb: 'patch' },
      { group: '', resource: 'events', verb: 'delete', namespace: 'default' },
      { group: '', resource: 'configmaps', verb: 'get', namespace: 'kube-system' },
      {
        group: '',
        resource: 'serviceaccounts',
        subresource: 'token',
        verb: 'create',
        namespace: 'kube-system',
      },
      { group: 'apps', resource: 'deployments', verb: 'patch', namespace: 'default' },
      { group: 'apps', resource: 'daemonsets', verb: 'get', namespace: 'kube-system' },
      { group: 'policy', resource: 'poddisruptionbudgets', verb: 'update', namespace: 'default' },
      { group: 'rbac.authorization.k8s.io', resource: 'clusterroles', verb: 'escalate' },
      { group: 'rbac.authorization.k8s.io', resource: 'clusterrolebindings', verb: 'create' },
      // Of authorization and authentication, the reviews explain asks and nothing beside them.
      {
        group: 'authorization.k8s.io',
        resource: 'localsubjectaccessreviews',
        verb: 'create',
        namespace: 'default',
      },
      { group: 'authorization.k8s.io', resource: 'subjectaccessreviews', verb: 'get' },
      { group: 'authentication.k8s.io', resource: 'tokenreviews', verb: 'create' },
    ];
    for (const access of refused) expect(await allowed(access), JSON.stringify(access)).toBe(false);
  });
});

describe('infra/k8s/bridge on the real API server', () => {
  const bridgeUser = `nodeclaim-bridge-rbac-test-${suffix}`;
  const bridgeObjects = bridgeRbacFor(bridgeUser);
  beforeAll(async () => {
    const api = KubernetesObjectApi.makeApiClient(config);
    for (const object of bridgeObjects) await api.create(object);
  });
  afterAll(async () => {
    const api = KubernetesObjectApi.makeApiClient(config);
    for (const object of bridgeObjects) await api.delete(object).catch(() => undefined);
  });

  it('allows the informers their lists and watches, and refuses every read or write just outside them', async () => {
    const informers: Access[] = [
      { group: 'karpenter.sh', resource: 'nodeclaims', verb: 'list' },
      { group: 'karpenter.sh', resource: 'nodepools', verb: 'watch' },
      { group: 'karpenter.azure.com', resource: 'aksnodeclasses', verb: 'list' },
      { group: '', resource: 'nodes', verb: 'watch' },
      { group: '', resource: 'pods', verb: 'list' },
    ];
    await untilAllowed(informers, bridgeUser, "the bridge's grants reaching the authorizer");
    const refused: Access[] = [
      // Its informers never get one object, and it writes nothing: the functions do.
      { group: '', resource: 'pods', verb: 'get', namespace: 'default' },
      { group: '', resource: 'nodes', verb: 'get' },
      { group: 'karpenter.sh', resource: 'nodeclaims', verb: 'get' },
      { group: 'karpenter.sh', resource: 'nodeclaims', verb: 'patch' },
      { group: 'karpenter.sh', resource: 'nodeclaims', subresource: 'status', verb: 'patch' },
      { group: 'karpenter.sh', resource: 'nodepools', verb: 'update' },
      { group: 'karpenter.sh', resource: 'nodeoverlays', verb: 'list' },
      { group: 'karpenter.azure.com', resource: 'aksnodeclasses', verb: 'patch' },
      { group: '', resource: 'nodes', verb: 'patch' },
      { group: '', resource: 'pods', verb: 'delete', namespace: 'default' },
      { group: '', resource: 'pods', subresource: 'eviction', verb: 'create', namespace: 'default' },
      { group: '', resource: 'events', verb: 'create', namespace: 'default' },
      { group: '', resource: 'secrets', verb: 'list', namespace: 'kube-system' },
      { group: '', resource: 'configmaps', verb: 'list', namespace: 'kube-system' },
      { group: 'coordination.k8s.io', resource: 'leases', verb: 'list', namespace: DEFAULT_SYSTEM_NAMESPACE },
      { group: 'apps', resource: 'deployments', verb: 'list' },
    ];
    for (const access of refused)
      expect(await allowed(access, bridgeUser), JSON.stringify(access)).toBe(false);
  });
});

describe('the shipped identity and its admission policy on kube-system Secrets (real requests)', () => {
  const admin = (): CoreV1Api => config.makeApiClient(CoreV1Api);
  const app = (): CoreV1Api => {
    const own = new KubeConfig();
    own.loadFromFile(shippedIdentities().functions.kubeconfigPath);
    return own.makeApiClient(CoreV1Api);
  };
  const namespace = BOOTSTRAP_TOKEN_NAMESPACE;
  const ownToken = (tokenId: string): V1Secret => {
    const secret = bootstrapTokenSecret({
      nodeClaim: { name: `rbac-${suffix}`, uid: randomUUID() },
      tokenId,
      tokenSecret: bootstrapTokenSecretFrom(randomBytes(16)),
      expiresAt: new Date(Date.now() + 600_000),
    });
    // No owner: there is no NodeClaim here (the garbage collector would delete the Secret at once).
    const { ownerReferences: _owner, ...metadata } = secret.metadata;
    return { ...secret, metadata };
  };
  const tokenId = (): string => randomBytes(3).toString('hex');
  const refusal = async (request: Promise<unknown>): Promise<{ status?: number; message: string }> => {
    try {
      await request;
    } catch (error) {
      return { status: statusCodeOf(error), message: String((error as { body?: unknown }).body ?? error) };
    }
    throw new Error('the request was allowed');
  };
  const cleanUp: string[] = [];

  afterAll(async () => {
    for (const name of cleanUp)
      await admin()
        .deleteNamespacedSecret({ name, namespace })
        .catch(() => undefined);
  });

  it('creates and deletes a bootstrap token of its own', async () => {
    // The policy reaches the API server through its informer like the roles: waited for once here.
    const body = ownToken(tokenId());
    const name = body.metadata?.name ?? '';
    cleanUp.push(name);
    await eventually(
      async () =>
        await app()
          .createNamespacedSecret({ namespace, body })
          .then(() => true),
      'its own bootstrap token created',
      30_000,
    );
    await app().deleteNamespacedSecret({ name, namespace });
  });

  it('cannot mint a ServiceAccount token, nor a token of another shape, name, group or usage', async () => {
    const serviceAccountToken: V1Secret = {
      metadata: {
        name: `sa-token-${suffix}`,
        annotations: { 'kubernetes.io/service-account.name': 'default' },
      },
      type: 'kubernetes.io/service-account-token',
    };
    cleanUp.push(`sa-token-${suffix}`);
    const id = tokenId();
    const base = ownToken(id);
    const withLabels = (labels: Record<string, string>): V1Secret => ({
      ...base,
      metadata: { ...base.metadata, labels },
    });
    const cases: [string, V1Secret][] = [
      ['a service-account-token Secret', serviceAccountToken],
      [
        'an Opaque Secret',
        { metadata: { name: `opaque-${suffix}` }, type: 'Opaque', stringData: { a: 'b' } },
      ],
      [
        'a token under another name',
        { ...base, metadata: { ...base.metadata, name: `bootstrap-token-${id}-x` } },
      ],
      ['a token without the managed-by label', withLabels({})],
      [
        'a token in another group',
        {
          ...base,
          stringData: {
            ...base.stringData,
            'auth-extra-groups': 'system:bootstrappers:kubeadm:default-node-token',
          },
        },
      ],
      ['a signing token', { ...base, stringData: { ...base.stringData, 'usage-bootstrap-signing': 'true' } }],
    ];
    for (const [what, body] of cases) {
      const refused = await refusal(app().createNamespacedSecret({ namespace, body }));
      expect(refused.status, what).toBe(403);
      expect(refused.message, what).toMatch(/ValidatingAdmissionPolicy|forbidden/);
    }
    // And nothing of it exists (the admin reads).
    const secrets = await admin().listNamespacedSecret({ namespace });
    expect(secrets.items.map((s) => s.metadata?.name)).not.toContain(`sa-token-${suffix}`);
  });

  it('cannot read, update or delete a Secret it did not make', async () => {
    const name = `foreign-${suffix}`;
    cleanUp.push(name);
    await admin().createNamespacedSecret({
      namespace,
      body: { metadata: { name }, type: 'Opaque', stringData: { key: 'value' } },
    });
    const read = await refusal(app().readNamespacedSecret({ name, namespace }));
    expect(read.status).toBe(403);
    const list = await refusal(app().listNamespacedSecret({ namespace }));
    expect(list.status).toBe(403);
    const deleted = await refusal(app().deleteNamespacedSecret({ name, namespace }));
    expect(deleted.status).toBe(403);
    expect(deleted.message).toMatch(/ValidatingAdmissionPolicy/);
    // Its own token cannot be rewritten either (RBAC grants no update; the policy refuses it besides).
    const own = ownToken(tokenId());
    cleanUp.push(own.metadata?.name ?? '');
    await app().createNamespacedSecret({ namespace, body: own });
    const updated = await refusal(
      app().replaceNamespacedSecret({ name: own.metadata?.name ?? '', namespace, body: own }),
    );
    expect(updated.status).toBe(403);
    expect((await admin().readNamespacedSecret({ name, namespace })).data?.key).toBe(
      Buffer.from('value').toString('base64'),
    );
  });
});
