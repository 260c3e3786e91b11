// Node image versions as state in the ARM emulator, through the real @azure/arm-compute client: a version
// published at runtime is listed for every definition of every gallery and a VM PUT may name it at once; a
// withdrawn one disappears from both; excluded from latest, it stays listed (so marked) and bootable. Each
// version's behaviour follows the VMs booted from it. The emulator runs in this process on loopback (no
// control plane), so the file lives with the unit tests.
import { RestError, type ComputeManagementClient, type VirtualMachine } from '@azure/arm-compute';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AKS_COMMUNITY_GALLERIES } from '../../../shared/cloudprovider/azure/decisions/node-image.js';
import { startArmEmulator, type ArmEmulator } from '../../../local/arm-emulator/index.js';
import { emulatorComputeClient, linuxVmParameters } from '../../support/arm-client.js';
import { emulatorRequest } from '../../support/emulator-request.js';

const subscriptionId = '00000000-0000-0000-0000-0000000000a2';
const resourceGroup = 'rg-node-images';
const location = 'westus2';
const defaultVersions = ['202608.13.0', '202608.20.0'];

let emulator: ArmEmulator;
let client: ComputeManagementClient;

beforeAll(async () => {
  emulator = await startArmEmulator({ latencies: { createMs: 20, deleteMs: 20, retryAfterSeconds: 0.05 } });
  client = emulatorComputeClient(emulator, subscriptionId);
});

afterAll(async () => {
  await emulator?.stop();
});

beforeEach(() => {
  emulator.controls.reset();
  emulator.controls.setLatencies({ createMs: 20, deleteMs: 20, retryAfterSeconds: 0.05 });
});

const fast = { updateIntervalInMs: 20 };

async function listed(gallery: string, definition: string) {
  const versions = [];
  for await (const v of client.communityGalleryImageVersions.list(location, gallery, definition)) {
    versions.push(v);
  }
  return versions;
}

const names = async (gallery: string, definition: string): Promise<string[]> =>
  (await listed(gallery, definition)).map((v) => v.name ?? '');

const imageId = (
  version: string,
  definition = '2204gen2containerd',
  gallery: string = AKS_COMMUNITY_GALLERIES.ubuntu,
) => `/CommunityGalleries/${gallery}/images/${definition}/versions/${version}`;

function vmFrom(name: string, communityGalleryImageId: string): VirtualMachine {
  const body = linuxVmParameters({
    name,
    subscriptionId,
    resourceGroup,
    location,
    zone: '1',
    vmSize: 'Standard_D2s_v5',
    tags: {},
  });
  return { ...body, storageProfile: { ...body.storageProfile, imageReference: { communityGalleryImageId } } };
}

const create = (name: string, version: string) =>
  client.virtualMachines.beginCreateOrUpdateAndWait(
    resourceGroup,
    name,
    vmFrom(name, imageId(version)),
    fast,
  );

async function refusal(promise: Promise<unknown>): Promise<RestError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RestError) return error;
    throw error;
  }
  throw new Error('the request was not refused');
}

describe('publishing node image versions', () => {
  it('starts with the two default versions, all healthy', async () => {
    expect(await names(AKS_COMMUNITY_GALLERIES.ubuntu, '2204gen2containerd')).toEqual(defaultVersions);
    expect(emulator.controls.nodeImageVersions()).toEqual(
      defaultVersions.map((version) =>
        expect.objectContaining({ version, behavior: 'healthy', withdrawn: false, excludeFromLatest: false }),
      ),
    );
  });

  it('lists a published version for every definition of every gallery, newest last, and a PUT may boot it', async () => {
    const published = emulator.controls.publishNodeImageVersion({ version: '202612.06.0' });
    expect(published).toMatchObject({ version: '202612.06.0', behavior: 'healthy', withdrawn: false });
    expect(Date.parse(published.publishedDate)).toBeGreaterThan(Date.parse('2026-08-20T00:00:00Z'));
    for (const [gallery, definition] of [
      [AKS_COMMUNITY_GALLERIES.ubuntu, '2204gen2containerd'],
      [AKS_COMMUNITY_GALLERIES.ubuntu, '2404gen2arm64containerd'],
      [AKS_COMMUNITY_GALLERIES.azureLinux, 'V3gen2'],
    ] as const) {
      expect(await names(gallery, definition)).toEqual([...defaultVersions, '202612.06.0']);
    }
    // Azure Linux 2 is retired: a new week's build does not revive it.
    expect(await names(AKS_COMMUNITY_GALLERIES.azureLinux, 'V2gen2')).toEqual([]);

    const vm = await create('boots-new', '202612.06.0');
    expect(vm.provisioningState).toBe('Succeeded');
    expect(emulator.controls.vms().find((v) => v.name === 'boots-new')?.communityGalleryImageId).toBe(
      imageId('202612.06.0'),
    );
  });

  it('takes the given publishedDate, so an older build is not the newest', async () => {
    emulator.controls.publishNodeImageVersion({
      version: '202608.16.0',
      publishedDate: new Date('2026-08-16T00:00:00Z'),
    });
    const versions = await listed(AKS_COMMUNITY_GALLERIES.ubuntu, '2404gen2containerd');
    expect(versions.map((v) => v.name)).toEqual(['202608.13.0', '202608.16.0', '202608.20.0']);
    expect(versions[1]?.publishedDate).toEqual(new Date('2026-08-16T00:00:00Z'));
  });

  it('refuses a PUT naming a version before it is published', async () => {
    const error = await refusal(create('too-early', '202612.13.0'));
    expect(error.statusCode).toBe(404);
    expect(error.code).toBe('GalleryImageNotFound');
    emulator.controls.publishNodeImageVersion({ version: '202612.13.0' });
    expect((await create('in-time', '202612.13.0')).provisioningState).toBe('Succeeded');
  });

  it('withdraws a version from the list and the PUT check at once; VMs booted from it keep its behaviour', async () => {
    emulator.controls.publishNodeImageVersion({ version: '202612.06.0', behavior: 'podsCrash' });
    await create('before-withdrawal', '202612.06.0');
    const withdrawn = emulator.controls.unpublishNodeImageVersion('202612.06.0');
    expect(withdrawn).toMatchObject({ version: '202612.06.0', withdrawn: true });
    expect(await names(AKS_COMMUNITY_GALLERIES.ubuntu, '2204gen2containerd')).toEqual(defaultVersions);
    const error = await refusal(create('after-withdrawal', '202612.06.0'));
    expect(error.code).toBe('GalleryImageNotFound');
    const running = emulator.controls.vms().find((v) => v.name === 'before-withdrawal');
    expect(emulator.controls.nodeImageBehavior(running?.communityGalleryImageId)).toBe('podsCrash');

    // A default version can be withdrawn too; publishing it again brings it back.
    emulator.controls.unpublishNodeImageVersion('202608.20.0');
    expect(await names(AKS_COMMUNITY_GALLERIES.ubuntu, '2204gen2containerd')).toEqual(['202608.13.0']);
    emulator.controls.publishNodeImageVersion({ version: '202608.20.0' });
    expect(await names(AKS_COMMUNITY_GALLERIES.ubuntu, '2204gen2containerd')).toEqual(defaultVersions);
  });

  it('excluded from latest, a version stays listed (marked) and bootable', async () => {
    emulator.controls.publishNodeImageVersion({ version: '202612.06.0' });
    emulator.controls.unpublishNodeImageVersion('202612.06.0', { excludeFromLatest: true });
    const versions = await listed(AKS_COMMUNITY_GALLERIES.ubuntu, '2204gen2containerd');
    expect(versions.map((v) => [v.name, v.excludeFromLatest])).toEqual([
      ['202608.13.0', false],
      ['202608.20.0', false],
      ['202612.06.0', true],
    ]);
    expect((await create('pinned', '202612.06.0')).provisioningState).toBe('Succeeded');
  });

  it('sets and changes a version’s behaviour; other images and unknown versions are healthy', () => {
    emulator.controls.publishNodeImageVersion({ version: '202612.06.0', behavior: 'kubeletNeverReady' });
    expect(
      emulator.controls.nodeImageBehavior(
        imageId('202612.06.0', 'V3gen2', AKS_COMMUNITY_GALLERIES.azureLinux),
      ),
    ).toBe('kubeletNeverReady');
    emulator.controls.setNodeImageBehavior('202612.06.0', 'unhealthyAfterAMinute');
    expect(emulator.controls.nodeImageBehavior(imageId('202612.06.0'))).toBe('unhealthyAfterAMinute');
    // Published again without a behaviour: it keeps the one it has.
    emulator.controls.publishNodeImageVersion({ version: '202612.06.0' });
    expect(emulator.controls.nodeImageBehavior(imageId('202612.06.0'))).toBe('unhealthyAfterAMinute');
    expect(emulator.controls.nodeImageBehavior(imageId('202608.20.0'))).toBe('healthy');
    expect(emulator.controls.nodeImageBehavior(imageId('209901.01.0'))).toBe('healthy');
    expect(emulator.controls.nodeImageBehavior(undefined)).toBe('healthy');
    expect(emulator.controls.nodeImageBehavior('/subscriptions/s/resourceGroups/r/providers/x')).toBe(
      'healthy',
    );
  });

  it('refuses malformed versions, unknown behaviours and unknown versions', () => {
    expect(() => emulator.controls.publishNodeImageVersion({ version: 'latest' })).toThrow(
      /Major\.Minor\.Patch/,
    );
    expect(() => emulator.controls.setNodeImageBehavior('202608.20.0', 'flaky' as never)).toThrow(/behavior/);
    expect(() => emulator.controls.unpublishNodeImageVersion('209901.01.0')).toThrow(/never published/);
  });

  it('reset restores the default versions, healthy', async () => {
    emulator.controls.publishNodeImageVersion({ version: '202612.06.0', behavior: 'podsCrash' });
    emulator.controls.setNodeImageBehavior('202608.20.0', 'kubeletNeverReady');
    emulator.controls.reset();
    expect(await names(AKS_COMMUNITY_GALLERIES.ubuntu, '2204gen2containerd')).toEqual(defaultVersions);
    expect(emulator.controls.nodeImageBehavior(imageId('202608.20.0'))).toBe('healthy');
  });
});

describe('the node images admin API', () => {
  const admin = (method: string, path: string, body?: unknown) =>
    emulatorRequest(emulator, method, path, body !== undefined ? { body } : {});

  it('publishes, lists, changes the behaviour of and withdraws a version', async () => {
    const published = await admin('PUT', '/admin/node-images/202612.06.0', {
      publishedDate: '2026-12-06T00:00:00Z',
      behavior: 'kubeletNeverReady',
    });
    expect(published.status).toBe(200);
    expect(published.body).toMatchObject({
      version: '202612.06.0',
      publishedDate: '2026-12-06T00:00:00.000Z',
    });
    expect(await names(AKS_COMMUNITY_GALLERIES.ubuntu, '2204gen2containerd')).toContain('202612.06.0');

    const behavior = await admin('PUT', '/admin/node-images/202612.06.0/behavior', { behavior: 'podsCrash' });
    expect(behavior.body).toMatchObject({ behavior: 'podsCrash' });

    const list = await admin('GET', '/admin/node-images');
    expect((list.body as { value: { version: string }[] }).value.map((v) => v.version)).toEqual([
      ...defaultVersions,
      '202612.06.0',
    ]);

    const excluded = await admin('DELETE', '/admin/node-images/202612.06.0?excludeFromLatest=true');
    expect(excluded.body).toMatchObject({ excludeFromLatest: true, withdrawn: false });
    const withdrawn = await admin('DELETE', '/admin/node-images/202612.06.0');
    expect(withdrawn.body).toMatchObject({ withdrawn: true });
    expect(await names(AKS_COMMUNITY_GALLERIES.ubuntu, '2204gen2containerd')).toEqual(defaultVersions);
  });

  it('answers 400 for a bad body and 404 for an unknown version', async () => {
    expect((await admin('PUT', '/admin/node-images/latest', {})).status).toBe(400);
    expect((await admin('PUT', '/admin/node-images/202612.06.0', { behavior: 'flaky' })).status).toBe(400);
    expect((await admin('PUT', '/admin/node-images/202612.06.0', { publishedDate: 'soon' })).status).toBe(
      400,
    );
    expect((await admin('DELETE', '/admin/node-images/209901.01.0')).status).toBe(404);
    expect(
      (await admin('PUT', '/admin/node-images/209901.01.0/behavior', { behavior: 'healthy' })).status,
    ).toBe(404);
  });
});
