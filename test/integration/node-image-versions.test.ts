// spec.versions and the version status on the real API server and the ARM emulator's galleries: the
// CRD admits the proposal's fields and keeps the status ones, refuses nodeImageVersion alone and a
// Kubernetes version that is not major.minor.patch; the status pass records the newest published version
// and the pair used, refuses a pin the status does not show with the old images kept and Ready=False
// naming the field, keeps a rejection the rollout wrote, and a launch then boots the effective image, not
// the newest published one; a node on the rejected one is image-drifted.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { AKS_COMMUNITY_GALLERIES } from '../../shared/cloudprovider/azure/decisions/node-image.js';
import { imageVersionOf } from '../../shared/cloudprovider/azure/decisions/node-image-versions.js';
import { findCondition } from '../../shared/decisions/conditions.js';
import { evaluateDrift, type DriftResult } from '../../shared/decisions/drift.js';
import { providerDrift } from '../../shared/cloudprovider/azure/decisions/provider-drift.js';
import { reconcileNodeClassStatus } from '../../shared/lifecycle/status/nodeclass-status.js';
import type { AKSNodeClass, NodeClaim, NodePool } from '../../shared/models/index.js';
import { nodeClass, nodePool } from '../support/fixtures.js';
import { launchNodeClaim } from '../support/launch-nodeclaim.js';
import { eventually, startLaunchStack, type LaunchStack } from '../support/launch-stack.js';

/** Drift as the sweep judges it: core's checks, then the provider's answer (CloudProvider.isDrifted). */
function drift(claim: NodeClaim, pool: NodePool, cls: AKSNodeClass): DriftResult {
  return evaluateDrift(claim, pool, cls, providerDrift(claim, cls));
}

let stack: LaunchStack;
const suffix = randomUUID().slice(0, 6);
const className = `versions-${suffix}`;
let older: string;
let newest: string;

beforeAll(async () => {
  stack = await startLaunchStack();
  await stack.admin.objects.nodeClasses.create(nodeClass(className, 'Ubuntu2204'));
  const listed = await stack.deps.azure.images.list(AKS_COMMUNITY_GALLERIES.ubuntu, '2204gen2containerd');
  const names = [...listed]
    .sort((a, b) => new Date(a.publishedDate ?? 0).getTime() - new Date(b.publishedDate ?? 0).getTime())
    .map((v) => v.name);
  [older, newest] = [names.at(-2) ?? '', names.at(-1) ?? ''];
});

afterAll(async () => {
  for (const claim of await stack.deps.objects.nodeClaims.list({
    labelSelector: `${stack.runLabel.key}=${stack.runLabel.value}`,
  }))
    await stack.deps.objects.nodeClaims.delete(claim.metadata.name);
  await stack.admin.objects.nodeClasses.delete(className);
  await stack?.stop();
});

/** One status pass as the app's sweep runs it, then the class as the API server stores it. */
async function reconciled(): Promise<AKSNodeClass> {
  const current = (await stack.deps.objects.nodeClasses.get(className)) as AKSNodeClass;
  await reconcileNodeClassStatus(stack.deps, current);
  return (await stack.admin.objects.nodeClasses.get(className)) as AKSNodeClass;
}

const versionsOf = (cls: AKSNodeClass): (string | undefined)[] => [
  ...new Set((cls.status?.images ?? []).map((i) => imageVersionOf(i.id))),
];

describe('node image and Kubernetes version pinning', () => {
  test('the CRD refuses nodeImageVersion alone and a Kubernetes version without its patch', async () => {
    expect(older).toMatch(/^\d+\.\d+\.\d+$/);
    const create = (name: string, versions: object) =>
      stack.admin.objects.nodeClasses.create({
        ...nodeClass(name, 'Ubuntu2204'),
        spec: { imageFamily: 'Ubuntu2204', versions },
      } as AKSNodeClass);
    await expect(create(`alone-${suffix}`, { nodeImageVersion: newest })).rejects.toThrow(
      /nodeImageVersion requires kubernetesVersion/,
    );
    await expect(create(`minor-${suffix}`, { kubernetesVersion: '1.34' })).rejects.toThrow(
      /kubernetesVersion/,
    );
  });

  test('the status records the newest published version and the pair used; a pin it does not show is refused', async () => {
    const first = await reconciled();
    const kubernetesVersion = stack.settings.cluster.kubernetesVersion.replace(/^v/, '');
    expect(versionsOf(first)).toEqual([newest]);
    expect(first.status).toMatchObject({
      kubernetesVersion,
      controlPlaneKubernetesVersion: kubernetesVersion,
      latestImageVersion: newest,
      recentlyUsedVersions: [{ imageVersion: newest, kubernetesVersion, timestampUsed: expect.any(String) }],
    });
    expect(findCondition(first.status?.conditions, 'Ready')?.status).toBe('True');

    // The older version was published but never used by this class: not status-backed.
    await stack.admin.objects.nodeClasses.mergePatch(className, {
      spec: { versions: { kubernetesVersion, nodeImageVersion: older } },
    });
    const refused = await reconciled();
    expect(versionsOf(refused)).toEqual([newest]);
    expect(findCondition(refused.status?.conditions, 'ValidationSucceeded')).toMatchObject({
      status: 'False',
      reason: 'NodeImageVersionInvalid',
    });
    expect(findCondition(refused.status?.conditions, 'Ready')?.message).toContain(
      `spec.versions.nodeImageVersion "${older}" is not a version this class has used (latest ${newest}`,
    );

    // Pinned at the latest: Ready again.
    await stack.admin.objects.nodeClasses.mergePatch(className, {
      spec: { versions: { kubernetesVersion, nodeImageVersion: newest } },
    });
    expect(findCondition((await reconciled()).status?.conditions, 'Ready')?.status).toBe('True');
  });

  test('a rejection the rollout writes is kept, moves an unpinned class back, and launches boot the effective image', async () => {
    await stack.admin.objects.nodeClasses.mergePatch(className, { spec: { versions: null } });
    const rejection = {
      imageVersion: newest,
      reason: 'canary nodes never went Ready',
      nodePool: `canary-${suffix}`,
      timestamp: new Date().toISOString(),
    };
    await stack.admin.objects.nodeClasses.mergePatchStatus(className, {
      status: { rolledBackVersions: [rejection] },
    });
    const moved = await reconciled();
    expect(moved.status?.rolledBackVersions).toEqual([rejection]);
    expect(versionsOf(moved)).toEqual([older]);
    expect(moved.status?.latestImageVersion).toBe(newest);
    expect(moved.status?.recentlyUsedVersions?.map((e) => e.imageVersion)).toEqual([older, newest]);

    const nodeClaim = await launchNodeClaim(stack, className);
    const launched = await eventually(async () => {
      const current = await stack.deps.objects.nodeClaims.get(nodeClaim.metadata.name);
      return current?.status?.imageID ? current : undefined;
    }, 'imageID');
    expect(imageVersionOf(launched.status?.imageID ?? '')).toBe(older);
    expect(drift(launched, nodePool('p', className), moved)).toEqual({ drifted: false });

    const onRejected: NodeClaim = {
      ...launched,
      status: { ...launched.status, imageID: launched.status?.imageID?.replace(older, newest) ?? '' },
    };
    expect(drift(onRejected, nodePool('p', className), moved)).toMatchObject({
      drifted: true,
      reason: 'ImageDrift',
      message: `node image ${newest} → ${older} (AKSNodeClass default)`,
    });
  });
});
