// Per-NodeClaim bootstrap tokens against the real API server, its admission policies and garbage
// collector: a launch creates one `bootstrap.kubernetes.io/token` Secret for its node (named after the
// NodeClaim's launch attempt), puts exactly that token (and no other) in the VM's AKSNodeConfig, makes no
// second one when the event is delivered again, and the token goes with the NodeClaim. A token Secret
// the app did not make is never replaced nor deleted: the app's identity cannot read it, and the shipped
// ValidatingAdmissionPolicy refuses its delete.
import { randomUUID } from 'node:crypto';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { parseNodeCustomData } from '../../shared/cloudprovider/azure/decisions/aks-node-config.js';
import { decodeCustomData } from '../../shared/cloudprovider/azure/decisions/bootstrap.js';
import {
  bootstrapTokenId,
  bootstrapTokenIdOf,
} from '../../shared/cloudprovider/azure/decisions/bootstrap-token.js';
import { vmNameFor } from '../../shared/cloudprovider/azure/decisions/vm-spec.js';
import {
  BootstrapTokenTakenError,
  createBootstrapToken,
  deleteBootstrapToken,
} from '../../shared/kube/bootstrap-tokens.js';
import { isNotFound } from '../../shared/kube/errors.js';
import { reconcileRegistration } from '../../shared/lifecycle/node-join/registration.js';
import type { NodeClaim } from '../../shared/models/index.js';
import type { Node } from '../../shared/models/kube.js';
import { storedBootstrapToken } from '../support/bootstrap-token.js';
import { nodeClass } from '../support/fixtures.js';
import { launchNodeClaim } from '../support/launch-nodeclaim.js';
import { eventually, startLaunchStack, type LaunchStack } from '../support/launch-stack.js';

let stack: LaunchStack;
let core: CoreV1Api;
const nodeClassName = `token-${randomUUID().slice(0, 6)}`;

beforeAll(async () => {
  stack = await startLaunchStack();
  const config = new KubeConfig();
  config.loadFromFile(inject('kubeconfigPath'));
  core = config.makeApiClient(CoreV1Api);
  await stack.admin.objects.nodeClasses.create(nodeClass(nodeClassName, 'Ubuntu'));
});

afterAll(async () => {
  await stack?.stop();
});

/** The token Secret of the NodeClaim's current launch attempt, read as admin (the app cannot). */
async function tokenSecret(nodeClaim: NodeClaim) {
  const current = (await stack.admin.objects.nodeClaims.get(nodeClaim.metadata.name)) ?? nodeClaim;
  try {
    return await core.readNamespacedSecret({
      name: `bootstrap-token-${bootstrapTokenIdOf(current)}`,
      namespace: 'kube-system',
    });
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

describe('per-NodeClaim bootstrap tokens', () => {
  test('one token Secret per launch, expiring after the registration timeout, and only it in the custom data', async () => {
    const before = Date.now();
    const nodeClaim = await launchNodeClaim(stack, nodeClassName);
    const event = {
      kind: 'NodeClaim' as const,
      name: nodeClaim.metadata.name,
      uid: nodeClaim.metadata.uid ?? '',
      resourceVersion: nodeClaim.metadata.resourceVersion ?? '1',
      changeType: 'ADDED' as const,
    };
    const vmName = vmNameFor(nodeClaim.metadata.name);
    const put = await eventually(
      async () => stack.emulator.controls.requests({ kind: 'putVm', vmName, method: 'PUT' })[0],
      'the VM PUT',
    );

    const secret = await eventually(() => tokenSecret(nodeClaim), 'the token Secret');
    expect(secret.type).toBe('bootstrap.kubernetes.io/token');
    expect(secret.metadata?.ownerReferences).toEqual([
      expect.objectContaining({
        kind: 'NodeClaim',
        name: nodeClaim.metadata.name,
        uid: nodeClaim.metadata.uid,
      }),
    ]);
    const token = storedBootstrapToken(secret);
    // REGISTRATION_TIMEOUT_MINUTES defaults to 15: the token lives 20 minutes.
    const lifetime = (token?.expiresAt?.getTime() ?? 0) - before;
    expect(lifetime).toBeGreaterThan(19 * 60_000);
    expect(lifetime).toBeLessThan(21 * 60_000);

    const body = put.body as { properties?: { osProfile?: { customData?: string } } };
    const config = parseNodeCustomData(decodeCustomData(body.properties?.osProfile?.customData ?? ''));
    expect(config.bootstrapping_config.tls_bootstrapping_token).toBe(
      `${token?.tokenId}.${token?.tokenSecret}`,
    );
    expect(JSON.stringify(config)).not.toContain('abcdef.0123456789abcdef');

    // A repeated delivery makes no second token: the NodeClaim is launched, the same Secret stays.
    await stack.publish({ ...event, changeType: 'MODIFIED' });
    await stack.host.waitForIdle();
    expect(storedBootstrapToken((await tokenSecret(nodeClaim)) ?? {})?.tokenSecret).toBe(token?.tokenSecret);
    const ours = await core.listNamespacedSecret({
      namespace: 'kube-system',
      labelSelector: `karpenter.sh/nodeclaim=${nodeClaim.metadata.name}`,
    });
    expect(ours.items.map((secret) => secret.metadata?.name)).toEqual([secret.metadata?.name]);

    // The NodeClaim goes (termination deletes the VM and releases it): the garbage collector deletes the token.
    await stack.deps.objects.nodeClaims.delete(nodeClaim.metadata.name);
    await eventually(
      async () => ((await tokenSecret(nodeClaim)) === undefined ? true : undefined),
      'token gone',
    );
  });

  test('registration deletes the token: the node has its own credentials now', async () => {
    const nodeClaim = await launchNodeClaim(stack, nodeClassName);
    const launched = await eventually(async () => {
      const current = await stack.deps.objects.nodeClaims.get(nodeClaim.metadata.name);
      return current?.status?.providerID ? current : undefined;
    }, 'providerID');
    await eventually(() => tokenSecret(nodeClaim), 'the token Secret');
    const node = await core.createNode({
      body: {
        metadata: { name: vmNameFor(nodeClaim.metadata.name) },
        spec: {
          providerID: launched.status?.providerID,
          taints: [{ key: 'karpenter.sh/unregistered', effect: 'NoExecute' }],
        },
      },
    });
    try {
      const outcome = await reconcileRegistration(stack.deps, launched, [node as Node]);
      expect(outcome.outcome).toBe('registered');
      expect(await tokenSecret(nodeClaim)).toBeUndefined();
    } finally {
      await stack.deps.objects.nodeClaims.delete(nodeClaim.metadata.name);
      await core.deleteNode({ name: vmNameFor(nodeClaim.metadata.name) }).catch(() => undefined);
    }
  });
});

describe("a token Secret this app did not make, under a NodeClaim's token name", () => {
  test('is neither replaced nor deleted (the app acting as its shipped identity)', async () => {
    const uid = randomUUID();
    const attempt = randomUUID();
    const tokenId = bootstrapTokenId(uid, attempt);
    const name = `bootstrap-token-${tokenId}`;
    // Another tool's token that happens to share the six-character ID.
    await core.createNamespacedSecret({
      namespace: 'kube-system',
      body: {
        metadata: { name },
        type: 'bootstrap.kubernetes.io/token',
        stringData: {
          'token-id': tokenId,
          'token-secret': 'abcdefghijklmnop',
          'usage-bootstrap-authentication': 'true',
        },
      },
    });
    try {
      const { core: appCore } = await stack.deps.kube();
      // The admission policy refuses the delete: not the app's token; reported, not thrown.
      expect(await deleteBootstrapToken(appCore, { uid, attempt })).toBe(false);
      await expect(
        createBootstrapToken(
          appCore,
          { name: 'someone', uid, attempt },
          { now: new Date(), registrationTimeoutMinutes: 15 },
        ),
      ).rejects.toBeInstanceOf(BootstrapTokenTakenError);
      const still = await core.readNamespacedSecret({ name, namespace: 'kube-system' });
      expect(still.metadata?.labels?.['app.kubernetes.io/managed-by']).toBeUndefined();
      expect(Buffer.from(still.data?.['token-secret'] ?? '', 'base64').toString()).toBe('abcdefghijklmnop');
    } finally {
      await core.deleteNamespacedSecret({ name, namespace: 'kube-system' }).catch(() => undefined);
    }
  });
});
