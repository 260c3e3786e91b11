// The functions' RBAC manifests (infra/k8s/functions) on the real API server: applied with a test user as
// the subject, the server's own authorizer (SubjectAccessReview) allows what the drain, the status step
// and the sweep Lease need, and refuses the Lease under any other name and what the functions never do.
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

const root = join(import.meta.dirname, '..', '..');
const suffix = randomUUID().slice(0, 6);
const user = `nodeclaim-rbac-test-${suffix}`;
const config = new KubeConfig();
let objects: KubernetesObject[] = [];

beforeAll(async () => {
  config.loadFromFile(inject('kubeconfigPath'));
  const api = KubernetesObjectApi.makeApiClient(config);
  objects = ['clusterrole.yaml', 'lease-role.yaml', 'bindings.yaml'].flatMap((file) =>
    parseAllDocuments(
      readFileSync(join(root, 'infra/k8s/functions', file), 'utf8').replaceAll('FUNCTION_PRINCIPAL_ID', user),
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

interface Access {
  group: string;
  resource: string;
  subresource?: string;
  verb: string;
  namespace?: string;
  name?: string;
}

async function allowed(access: Access): Promise<boolean> {
  const api = config.makeApiClient(AuthorizationV1Api);
  const review = await api.createSubjectAccessReview({
    body: { spec: { user, resourceAttributes: { ...access, version: '*' } } },
  });
  return review.status?.allowed === true;
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
      { group: 'coordination.k8s.io', resource: 'leases', verb: 'create', namespace: 'kube-system' },
      {
        group: 'coordination.k8s.io',
        resource: 'leases',
        verb: 'update',
        namespace: 'kube-system',
        name: 'nodeclaim-azure-sweep',
      },
      { group: '', resource: 'events', verb: 'create', namespace: 'default' },
    ];
    // RBAC objects reach the authorizer through its informers (roles and bindings each their own), so
    // each grant is waited for; the timeout names those still refused.
    await eventually(
      async () => {
        const refused: string[] = [];
        for (const access of needed) if (!(await allowed(access))) refused.push(JSON.stringify(access));
        if (refused.length > 0) throw new Error(`still refused: ${refused.join(', ')}`);
        return true;
      },
      'every grant reaching the authorizer',
      30_000,
    );
  });

  it('refuses the Lease under another name and what the functions never do', async () => {
    const refused: Access[] = [
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
      { group: 'karpenter.sh', resource: 'nodepools', verb: 'delete' },
      { group: '', resource: 'pods', verb: 'create', namespace: 'default' },
    ];
    for (const access of refused) expect(await allowed(access), JSON.stringify(access)).toBe(false);
  });
});
