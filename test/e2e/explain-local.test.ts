// Explain on the local stack as a developer uses it: the stack's Entra ID emulator hands out a user's
// token at its token endpoint, and the explain CLI (bin/nodeclaim-azure.mjs, a separate process trusting
// the development CA) asks the in-process host's HTTPS listener. The cluster's RBAC refuses the user
// until a binding lets them read the pod; then the answer is what the decision records hold.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, inject, test } from 'vitest';
import { startLocalStack, type LocalStack } from '../../local/stack/local-stack.js';
import type { ProvisioningRecord } from '../../shared/decisions/explain/decision-record.js';
import { kubeClientsFromKubeconfig } from '../../shared/kube/client.js';
import { silentLogger } from '../../shared/observability/logger.js';
import { devCa } from '../support/dev-ca.js';
import { shippedIdentities } from '../support/identities.js';
import { eventually } from '../support/launch-stack.js';
import { E2E_SPEED } from './e2e-stack.js';

const execFileAsync = promisify(execFile);
const cli = fileURLToPath(new URL('../../bin/nodeclaim-azure.mjs', import.meta.url));
const run = randomUUID().slice(0, 8);
const namespace = `explain-local-${run}`;
const user = `dev-${run}@example.com`;

let stack: LocalStack;

beforeAll(async () => {
  stack = await startLocalStack({
    speed: E2E_SPEED,
    scoped: true,
    shared: {
      kubeconfigPath: inject('kubeconfigPath'),
      identities: shippedIdentities(),
      storageConnectionString: inject('azuriteConnectionString'),
      ca: await devCa(),
    },
    log: silentLogger,
  });
  await kubeClientsFromKubeconfig(inject('kubeconfigPath')).core.createNamespace({
    body: { metadata: { name: namespace } },
  });
});

afterAll(async () => {
  await kubeClientsFromKubeconfig(inject('kubeconfigPath'))
    .core.deleteNamespace({ name: namespace })
    .catch(() => undefined);
  await stack?.stop();
});

async function explain(
  args: string[],
  token: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const url = stack.explain.url;
  if (!url) throw new Error('the stack serves no explain URL');
  try {
    const { stdout, stderr } = await execFileAsync(
      process.execPath,
      [cli, 'explain', ...args, '--url', url, '--token', token],
      { env: { ...process.env, NODE_EXTRA_CA_CERTS: inject('devCaCertPath') }, timeout: 60_000 },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

test(
  'a local user: refused by RBAC, then let in by a RoleBinding, then told what the records hold',
  { timeout: 180_000 },
  async () => {
    const response = await fetch(`${stack.explain.tokenUrl}?user=${encodeURIComponent(user)}`);
    const { access_token: token } = (await response.json()) as { access_token: string };

    const refused = await explain(['pod', `${namespace}/web-0`], token);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('(403)');
    expect(refused.stderr).toContain(`${user} may not get pods in namespace ${namespace}`);

    const rbac = kubeClientsFromKubeconfig(inject('kubeconfigPath')).config.makeApiClient(
      RbacAuthorizationV1Api,
    );
    await rbac.createNamespacedRole({
      namespace,
      body: {
        metadata: { name: 'pod-reader', namespace },
        rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name: 'dev-reads-pods', namespace },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pod-reader' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
      },
    });
    const nothingYet = await eventually(async () => {
      const result = await explain(['pod', `${namespace}/web-0`], token);
      return result.stderr.includes('(403)') ? undefined : result;
    }, 'the RoleBinding to reach the authorizer');
    expect(nothingYet.code).toBe(1);
    expect(nothingYet.stderr).toContain('Nothing recorded about');

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
    const app = stack.app;
    if (!app) throw new Error('the stack runs without its in-process host');
    await app.deps.decisionRecords.write(record);
    const answered = await explain(['pod', `${namespace}/web-0`], token);
    expect(answered.code).toBe(0);
    expect(answered.stdout).toContain(`${namespace}/web-0`);
    expect(answered.stdout).toContain('would exceed limits cpu=64');
  },
);
