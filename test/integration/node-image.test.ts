// Node image resolution against the ARM emulator's community galleries, through the real
// @azure/arm-compute client: the emulator lists the versions it publishes, a launch boots the newest one
// of the definition its image family, Kubernetes version and VM size select, and a family the galleries
// cannot resolve blocks the launch with Launched=False naming it.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { findCondition } from '../../shared/decisions/conditions.js';
import { AKS_COMMUNITY_GALLERIES } from '../../shared/cloudprovider/azure/decisions/node-image.js';
import type { NodeClaim } from '../../shared/models/index.js';
import { nodeClass } from '../support/fixtures.js';
import { launchNodeClaim } from '../support/launch-nodeclaim.js';
import { eventually, startLaunchStack, type LaunchStack } from '../support/launch-stack.js';

let stack: LaunchStack;
const suffix = randomUUID().slice(0, 6);

beforeAll(async () => {
  // Kubernetes 1.31: "AzureLinux" means Azure Linux 2, whose images AKS no longer publishes.
  stack = await startLaunchStack({ env: { KUBERNETES_VERSION: '1.31.9' } });
  await stack.admin.objects.nodeClasses.create(nodeClass(`azl-${suffix}`, 'AzureLinux'));
  await stack.admin.objects.nodeClasses.create(nodeClass(`ubuntu-${suffix}`, 'Ubuntu'));
});

afterAll(async () => {
  await stack?.stop();
});

const launchWith = (nodeClassName: string): Promise<NodeClaim> => launchNodeClaim(stack, nodeClassName);

describe('node images', () => {
  test('the emulator lists the community gallery versions it publishes, newest last', async () => {
    const versions = await stack.deps.azure.images.list(AKS_COMMUNITY_GALLERIES.ubuntu, '2204gen2containerd');
    expect(
      versions.map((v) => `${v.name} ${new Date(v.publishedDate ?? 0).toISOString().slice(0, 10)}`),
    ).toEqual(['202608.13.0 2026-08-13', '202608.20.0 2026-08-20']);
    expect(await stack.deps.azure.images.list(AKS_COMMUNITY_GALLERIES.azureLinux, 'V2gen2')).toEqual([]);
    expect(stack.emulator.controls.requests({ kind: 'listGalleryImageVersions' })).not.toHaveLength(0);
  });

  test('Ubuntu on Kubernetes 1.31 boots the newest Ubuntu 22.04 Gen2 image', async () => {
    const nodeClaim = await launchWith(`ubuntu-${suffix}`);
    const launched = await eventually(async () => {
      const current = await stack.deps.objects.nodeClaims.get(nodeClaim.metadata.name);
      return current?.status?.imageID ? current : undefined;
    }, 'imageID');
    expect(launched.status?.imageID).toBe(
      `/CommunityGalleries/${AKS_COMMUNITY_GALLERIES.ubuntu}/images/2204gen2containerd/versions/202608.20.0`,
    );
  });

  test('an image family the galleries cannot resolve ends Launched=False with a reason naming it, and no VM', async () => {
    const nodeClaim = await launchWith(`azl-${suffix}`);
    const blocked = await eventually(async () => {
      const current = await stack.deps.objects.nodeClaims.get(nodeClaim.metadata.name);
      return findCondition(current?.status?.conditions, 'Launched')?.status === 'False' ? current : undefined;
    }, 'Launched=False');
    const launchedCondition = findCondition(blocked.status?.conditions, 'Launched');
    expect(launchedCondition?.reason).toBe('ImageNotResolved');
    expect(launchedCondition?.message).toContain('imageFamily "AzureLinux"');
    expect(launchedCondition?.message).toContain('V2gen2');
    expect(blocked.status?.providerID).toBeUndefined();
    expect(
      stack.emulator.controls
        .requests({ kind: 'putVm', method: 'PUT' })
        .filter((r) => r.vmName?.includes(`azl-${suffix}`)),
    ).toEqual([]);
  });
});
