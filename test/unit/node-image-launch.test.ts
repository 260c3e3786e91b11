// The image and Kubernetes version a launch boots: the AKSNodeClass's effective image for the VM size's
// architecture and Hyper-V generation from status.images (never a newer published one), its effective
// Kubernetes version for the image definition and the bootstrap, and, when the status has no image for
// the size, the image resolved as the status step would resolve it, so a brand-new class launches.
import { describe, expect, it } from 'vitest';
import type { NodeImageVersions } from '../../shared/azure/node-image-versions.js';
import { parseNodeCustomData } from '../../shared/cloudprovider/azure/decisions/aks-node-config.js';
import { decodeCustomData } from '../../shared/cloudprovider/azure/decisions/bootstrap.js';
import {
  AKS_COMMUNITY_GALLERIES,
  communityGalleryImageId,
  type GalleryImageVersion,
} from '../../shared/cloudprovider/azure/decisions/node-image.js';
import { resolveNodeImage } from '../../shared/cloudprovider/node-image.js';
import { capacityOptions, vmBody } from '../../shared/cloudprovider/vm-body.js';
import type { Settings } from '../../shared/config/settings.js';
import type {
  AKSNodeClass,
  AKSNodeClassStatus,
  AKSNodeClassVersions,
  NodeClaim,
} from '../../shared/models/index.js';
import { fakeLifecycle } from '../support/fake-lifecycle.js';
import { d2sV5Offering } from '../support/offering.js';

const PREV = '202611.20.0';
const CUR = '202612.06.0';
const NEXT = '202612.13.0';
const ubuntu = AKS_COMMUNITY_GALLERIES.ubuntu;
const image = (definition: string, version: string): string =>
  communityGalleryImageId(ubuntu, definition, version);

const base = fakeLifecycle().deps.settings;
const settings: Settings = { ...base, cluster: { ...base.cluster, kubernetesVersion: '1.34.2' } };

/** A gallery publishing `versions` of every definition, counting its list calls. */
function galleryOf(versions: readonly string[]): { images: NodeImageVersions; listed: string[] } {
  const listed: string[] = [];
  const list = async (_gallery: string, definition: string): Promise<GalleryImageVersion[]> => {
    listed.push(definition);
    return versions.map((name, i) => ({ name, publishedDate: new Date(Date.UTC(2026, 10, 1 + i)) }));
  };
  // The adapter is a class with private fields: a structural fake needs the cast.
  return { images: { list } as unknown as NodeImageVersions, listed };
}

const requirement = (arch: string, generation: string) => [
  { key: 'kubernetes.io/arch', operator: 'In', values: [arch] },
  { key: 'karpenter.azure.com/sku-hyperv-generation', operator: 'In', values: [generation] },
];

function cls(status?: AKSNodeClassStatus, versions?: AKSNodeClassVersions): AKSNodeClass {
  return {
    apiVersion: 'karpenter.azure.com/v1beta1',
    kind: 'AKSNodeClass',
    metadata: { name: 'default' },
    spec: { imageFamily: 'Ubuntu', ...(versions && { versions }) },
    ...(status && { status }),
  };
}

/** A status whose effective images are `version` of Ubuntu 24.04 amd64 Gen2 and Gen1 (no arm64 image). */
const statusAt = (version: string, kubernetesVersion = '1.34.2'): AKSNodeClassStatus => ({
  images: [
    { id: image('2404gen2containerd', version), requirements: requirement('amd64', '2') },
    { id: image('2404containerd', version), requirements: requirement('amd64', '1') },
  ],
  kubernetesVersion,
  latestImageVersion: version,
  recentlyUsedVersions: [{ imageVersion: version, kubernetesVersion }],
});

const gen2 = d2sV5Offering({ hyperVGenerations: ['V1', 'V2'] });
const gen1Only = d2sV5Offering({ vmSize: 'Standard_D2_v3', hyperVGenerations: ['V1'] });
const arm64 = d2sV5Offering({ vmSize: 'Standard_D2ps_v5', arch: 'arm64', hyperVGenerations: ['V2'] });

describe('the image a launch boots', () => {
  it.each<{
    name: string;
    nodeClass: AKSNodeClass;
    offering: typeof gen2;
    published: string[];
    imageId: string;
    listsGallery: boolean;
  }>([
    {
      name: "the status's effective image, not the newer one published",
      nodeClass: cls(statusAt(CUR)),
      offering: gen2,
      published: [PREV, CUR, NEXT],
      imageId: image('2404gen2containerd', CUR),
      listsGallery: false,
    },
    {
      name: 'the Gen1 image for a size that boots only Gen1',
      nodeClass: cls(statusAt(CUR)),
      offering: gen1Only,
      published: [PREV, CUR, NEXT],
      imageId: image('2404containerd', CUR),
      listsGallery: false,
    },
    {
      name: 'the definition of the effective Kubernetes version: a class pinned to 1.33 boots Ubuntu 22.04',
      nodeClass: cls(
        {
          ...statusAt(PREV, '1.33.7'),
          images: [{ id: image('2204gen2containerd', PREV), requirements: requirement('amd64', '2') }],
        },
        { kubernetesVersion: '1.33.7', nodeImageVersion: PREV },
      ),
      offering: gen2,
      published: [PREV, CUR],
      imageId: image('2204gen2containerd', PREV),
      listsGallery: false,
    },
    {
      name: 'a brand-new class: the newest published, resolved as its status will be',
      nodeClass: cls(),
      offering: gen2,
      published: [PREV, CUR],
      imageId: image('2404gen2containerd', CUR),
      listsGallery: true,
    },
    {
      name: 'a brand-new class: the newest no rollout rejected',
      nodeClass: cls({
        rolledBackVersions: [
          { imageVersion: CUR, reason: 'crash', nodePool: 'canary', timestamp: '2026-12-07T00:00:00Z' },
        ],
      }),
      offering: gen2,
      published: [PREV, CUR],
      imageId: image('2404gen2containerd', PREV),
      listsGallery: true,
    },
    {
      name: 'a size whose image the status lacks, on a pinned class: the pinned version',
      nodeClass: cls(statusAt(PREV), { kubernetesVersion: '1.34.2', nodeImageVersion: PREV }),
      offering: arm64,
      published: [PREV, CUR, NEXT],
      imageId: image('2404gen2arm64containerd', PREV),
      listsGallery: true,
    },
    {
      name: 'a status written before the image family changed: resolved for the new family',
      nodeClass: { ...cls(statusAt(CUR)), spec: { imageFamily: 'Ubuntu2204' } },
      offering: gen2,
      published: [PREV, CUR],
      imageId: image('2204gen2containerd', CUR),
      listsGallery: true,
    },
  ])('$name', async ({ nodeClass, offering, published, imageId, listsGallery }) => {
    const gallery = galleryOf(published);
    const resolution = await resolveNodeImage({ settings, images: gallery.images }, nodeClass, offering);
    expect(resolution).toEqual({ imageId, osSku: imageId.includes('/2204') ? 'Ubuntu2204' : 'Ubuntu2404' });
    expect(gallery.listed.length > 0).toBe(listsGallery);
  });

  it('no published version: ImageNotResolved naming the definition', async () => {
    const resolution = await resolveNodeImage({ settings, images: galleryOf([]).images }, cls(), gen2);
    expect(resolution).toEqual({
      reason: 'ImageNotResolved',
      message: expect.stringMatching(
        /^imageFamily "Ubuntu" for Kubernetes 1\.34\.2 .* needs image 2404gen2containerd .* publishes no version in westus2$/,
      ),
    });
  });

  it('a pinned version not published for the size: ImageNotResolved naming the pin', async () => {
    const nodeClass = cls(statusAt(PREV), { kubernetesVersion: '1.34.2', nodeImageVersion: PREV });
    const resolution = await resolveNodeImage(
      { settings, images: galleryOf([CUR]).images },
      nodeClass,
      arm64,
    );
    expect(resolution).toMatchObject({ reason: 'ImageNotResolved' });
    expect('message' in resolution && resolution.message).toContain(
      `spec.versions.nodeImageVersion "${PREV}"`,
    );
  });
});

describe('the Kubernetes version a launch runs', () => {
  const nodeClaim: NodeClaim = {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: { name: 'general-abc12', labels: { 'karpenter.sh/nodepool': 'general' } },
    spec: {
      nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
      requirements: [],
    },
  };
  const bootstrapVersion = (nodeClass: AKSNodeClass): string => {
    const vm = vmBody(settings, nodeClaim, gen2, undefined, nodeClass, {
      imageId: image('2204gen2containerd', PREV),
      osSku: 'Ubuntu2204',
      bootstrapToken: 'k8s0ab.0123456789abcdef',
    });
    return parseNodeCustomData(decodeCustomData(vm.osProfile?.customData ?? '')).kubernetes_version;
  };

  it("is the class's effective version, for the bootstrap and the sizing alike", () => {
    const pinned = cls(statusAt(PREV, '1.33.7'), { kubernetesVersion: '1.33.7' });
    expect(bootstrapVersion(pinned)).toBe('1.33.7');
    expect(capacityOptions(settings, pinned).kubernetesVersion).toBe('1.33.7');
  });

  it("is the control plane's for an unpinned class without a status, the valid pin for a pinned one", () => {
    expect(bootstrapVersion(cls())).toBe('1.34.2');
    expect(bootstrapVersion(cls(undefined, { kubernetesVersion: '1.32.4' }))).toBe('1.32.4');
    expect(bootstrapVersion(cls(undefined, { kubernetesVersion: '1.35.0' }))).toBe('1.34.2');
  });
});
