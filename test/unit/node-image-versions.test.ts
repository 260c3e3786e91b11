// The AKSNodeClass's effective node image and Kubernetes versions (spec.versions, as the Azure provider's
// proposal has them, and the versions a failed rollout rejected): which pins are taken, which refused with
// the old effective versions kept and the class NotReady naming the field, what the status records of
// the versions used, and that the rollout's rejections are kept as found, only bounded.
import { describe, expect, it } from 'vitest';
import {
  chooseKubernetesVersion,
  imageDefinitionOf,
  imageVersionOf,
  kubernetesSkewProblem,
  parseKubernetesVersion,
  boundedRolledBackVersions,
  withRecentlyUsed,
  RECENTLY_USED_VERSIONS_KEPT,
  ROLLED_BACK_VERSIONS_KEPT,
  type ImageLookup,
} from '../../shared/cloudprovider/azure/decisions/node-image-versions.js';
import {
  desiredNodeClassStatus,
  imageLookups,
  type NodeClassStatusFields,
} from '../../shared/cloudprovider/azure/decisions/nodeclass-status.js';
import {
  AKS_COMMUNITY_GALLERIES,
  communityGalleryImageId,
  type GalleryImageVersion,
} from '../../shared/cloudprovider/azure/decisions/node-image.js';
import type {
  AKSNodeClass,
  AKSNodeClassStatus,
  AKSNodeClassVersions,
  RecentlyUsedVersion,
  RolledBackVersion,
} from '../../shared/models/index.js';
import { reconcileNodeClassStatus } from '../../shared/lifecycle/status/nodeclass-status.js';
import { fakeLifecycle } from '../support/fake-lifecycle.js';

const now = new Date('2026-12-08T12:00:00Z');
const CONTROL_PLANE = '1.34.2';
const OLD = '202610.30.0';
const PREV = '202611.20.0';
const CUR = '202612.06.0';
const NEXT = '202612.13.0';

/** A version as the gallery lists it, published on the day its name says ("YYYYMM.DD.N"). */
function published(name: string): GalleryImageVersion {
  const [yearMonth = '', day = ''] = name.split('.');
  return {
    name,
    publishedDate: `${yearMonth.slice(0, 4)}-${yearMonth.slice(4, 6)}-${day.padStart(2, '0')}T00:00:00Z`,
  };
}

const ubuntu = AKS_COMMUNITY_GALLERIES.ubuntu;
const imageId = (definition: string, version: string): string =>
  communityGalleryImageId(ubuntu, definition, version);

function cls(versions?: AKSNodeClassVersions, status?: AKSNodeClassStatus): AKSNodeClass {
  return {
    apiVersion: 'karpenter.azure.com/v1beta1',
    kind: 'AKSNodeClass',
    metadata: { name: 'default', generation: 4 },
    spec: { imageFamily: 'Ubuntu', ...(versions && { versions }) },
    ...(status && { status }),
  };
}

/** One status pass as the status step computes it, against a gallery publishing `versions` for every definition. */
function statusOf(
  nodeClass: AKSNodeClass,
  versions: readonly string[],
  controlPlane = CONTROL_PLANE,
): NodeClassStatusFields {
  // The lookups the provider answers are for the version chooseKubernetesVersion gives (as lifecycle-answers asks).
  const { kubernetesVersion } = chooseKubernetesVersion(nodeClass, controlPlane);
  const lookups = imageLookups(nodeClass, kubernetesVersion) as ImageLookup[];
  return desiredNodeClassStatus({
    nodeClass,
    kubernetesVersion: controlPlane,
    resolved: lookups.map((lookup) => ({ lookup, imageId: undefined, versions: versions.map(published) })),
    now,
  });
}

/** The class after the status step merge-patched `fields` onto it. */
function applied(nodeClass: AKSNodeClass, fields: NodeClassStatusFields): AKSNodeClass {
  return { ...nodeClass, status: { ...nodeClass.status, ...fields } };
}

const conditionOf = (fields: NodeClassStatusFields, type: string) =>
  fields.conditions.find((c) => c.type === type);
const versionOfImages = (fields: { images: { id: string }[] }): (string | undefined)[] => [
  ...new Set(fields.images.map((i) => imageVersionOf(i.id))),
];

/** A class whose status is the effective pair (PREV, 1.34.2), latest CUR, having used OLD before. */
function settled(versions?: AKSNodeClassVersions, extra: Partial<AKSNodeClassStatus> = {}): AKSNodeClass {
  return cls(versions, {
    images: ['2404gen2containerd', '2404containerd', '2404gen2arm64containerd'].map((definition) => ({
      id: imageId(definition, PREV),
      requirements: [],
    })),
    kubernetesVersion: '1.34.2',
    controlPlaneKubernetesVersion: '1.34.2',
    latestImageVersion: CUR,
    recentlyUsedVersions: [
      { timestampUsed: '2026-11-21T00:00:00Z', imageVersion: PREV, kubernetesVersion: '1.34.2' },
      { timestampUsed: '2026-10-31T00:00:00Z', imageVersion: OLD, kubernetesVersion: '1.34.2' },
    ],
    conditions: [],
    ...extra,
  });
}

const rolledBack = (imageVersion: string, kubernetesVersion?: string): RolledBackVersion => ({
  imageVersion,
  ...(kubernetesVersion !== undefined && { kubernetesVersion }),
  reason: 'canary nodes never went Ready',
  nodePool: 'canary',
  timestamp: '2026-12-07T10:00:00Z',
});

describe('image IDs and Kubernetes versions', () => {
  it.each([
    [imageId('2404gen2containerd', CUR), CUR, '2404gen2containerd'],
    [
      `/communitygalleries/${ubuntu.toLowerCase()}/IMAGES/2204containerd/VERSIONS/${PREV}`,
      PREV,
      '2204containerd',
    ],
    [
      '/subscriptions/s/resourceGroups/AKS-Ubuntu/providers/Microsoft.Compute/galleries/AKSUbuntu/images/2204gen2containerd/versions/202612.06.0',
      CUR,
      '2204gen2containerd',
    ],
    ['Canonical:ubuntu:22_04:202612.06.0', undefined, undefined],
    ['fake-image', undefined, undefined],
  ])('imageVersionOf(%s) is %s', (id, version, definition) => {
    expect(imageVersionOf(id)).toBe(version);
    expect(imageDefinitionOf(id)).toBe(definition);
  });

  it.each([
    ['1.34.2', '1.34.2', undefined],
    ['1.34.1', '1.34.2', undefined],
    ['1.31.9', '1.34.2', undefined],
    ['1.30.9', '1.34.2', 'is more than 3 minor versions behind'],
    ['1.35.0', '1.34.2', 'is a newer minor version than'],
    ['1.34.3', '1.34.2', 'is a newer patch version than'],
    ['1.33.9', '1.34.2', undefined],
    ['2.34.2', '1.34.2', 'has another major version than'],
  ])('node %s against control plane %s: %s', (node, controlPlane, problem) => {
    expect(kubernetesSkewProblem(parseKubernetesVersion(node)!, parseKubernetesVersion(controlPlane)!)).toBe(
      problem,
    );
  });
});

describe('the effective Kubernetes version', () => {
  it.each<{
    name: string;
    pin?: string;
    current?: string;
    controlPlane?: string;
    version: string;
    reason?: string;
    message?: string;
  }>([
    { name: 'unpinned follows the control plane', current: '1.33.5', version: '1.34.2' },
    { name: 'unpinned strips the v', controlPlane: 'v1.34.2', version: '1.34.2' },
    { name: 'a pin within the skew is taken', pin: '1.33.7', current: '1.33.5', version: '1.33.7' },
    {
      name: 'a pin equal to the effective one is taken',
      pin: '1.34.2',
      current: '1.34.2',
      version: '1.34.2',
    },
    {
      name: 'a newer minor than the control plane is refused; the effective one stays',
      pin: '1.35.0',
      current: '1.34.2',
      version: '1.34.2',
      reason: 'KubernetesVersionControlPlaneIncompatible',
      message: `spec.versions.kubernetesVersion "1.35.0" is a newer minor version than the control plane's 1.34.2`,
    },
    {
      name: 'more than 3 minors behind is refused',
      pin: '1.30.9',
      current: '1.30.2',
      version: '1.30.2',
      reason: 'KubernetesVersionControlPlaneIncompatible',
    },
    {
      name: 'a newer patch on the same minor is refused',
      pin: '1.34.3',
      current: '1.34.2',
      version: '1.34.2',
      reason: 'KubernetesVersionControlPlaneIncompatible',
    },
    {
      name: 'no Kubernetes rollback below the effective version',
      pin: '1.34.1',
      current: '1.34.2',
      version: '1.34.2',
      reason: 'KubernetesVersionDowngradeNotSupported',
      message:
        `spec.versions.kubernetesVersion "1.34.1" is below the class's effective Kubernetes version 1.34.2: ` +
        'nodes are never rolled back to an older Kubernetes version',
    },
    {
      name: 'not major.minor.patch',
      pin: '1.34',
      current: '1.34.2',
      version: '1.34.2',
      reason: 'KubernetesVersionInvalidFormat',
    },
    {
      name: 'an invalid pin on a class without a status takes the newest valid: the control plane',
      pin: '1.36.0',
      version: '1.34.2',
      reason: 'KubernetesVersionControlPlaneIncompatible',
    },
    {
      name: 'a valid pin on a class without a status is taken',
      pin: '1.32.4',
      version: '1.32.4',
    },
  ])('$name', ({ pin, current, controlPlane, version, reason, message }) => {
    const choice = chooseKubernetesVersion(
      cls(
        pin === undefined ? undefined : { kubernetesVersion: pin },
        current ? { kubernetesVersion: current } : undefined,
      ),
      controlPlane ?? CONTROL_PLANE,
    );
    expect(choice.kubernetesVersion).toBe(version);
    expect(choice.problem?.reason).toBe(reason);
    if (message !== undefined) expect(choice.problem?.message).toBe(message);
  });
});

describe('the effective image version', () => {
  const gallery = [OLD, PREV, CUR];

  it.each<{
    name: string;
    versions?: AKSNodeClassVersions;
    extra?: Partial<AKSNodeClassStatus>;
    gallery?: string[];
    image: string;
    kubernetesVersion?: string;
    condition?: [type: string, reason: string];
  }>([
    { name: 'unpinned: the newest published', image: CUR },
    {
      name: 'unpinned: the newest published no rollout rejected',
      extra: { rolledBackVersions: [rolledBack(CUR)] },
      image: PREV,
    },
    {
      name: 'unpinned: a rejection of another Kubernetes version does not apply',
      extra: { rolledBackVersions: [rolledBack(CUR, '1.33.9')] },
      image: CUR,
    },
    {
      name: 'unpinned: a rejection of this Kubernetes version applies',
      extra: { rolledBackVersions: [rolledBack(CUR, '1.34.2')] },
      image: PREV,
    },
    {
      name: 'pinned at latest',
      versions: { kubernetesVersion: '1.34.2', nodeImageVersion: CUR },
      image: CUR,
    },
    {
      name: 'pinned at current',
      versions: { kubernetesVersion: '1.34.2', nodeImageVersion: PREV },
      image: PREV,
    },
    {
      name: 'pinned at a recently used version: rolled back to it',
      versions: { kubernetesVersion: '1.34.2', nodeImageVersion: OLD },
      image: OLD,
    },
    {
      name: 'pinned at a version the status does not show: the old effective stays',
      versions: { kubernetesVersion: '1.34.2', nodeImageVersion: '202501.01.0' },
      image: PREV,
      condition: ['ValidationSucceeded', 'NodeImageVersionInvalid'],
    },
    {
      name: 'pinned at a published version the status does not show (status-backed only)',
      versions: { kubernetesVersion: '1.34.2', nodeImageVersion: '202609.01.0' },
      gallery: ['202609.01.0', OLD, PREV, CUR],
      image: PREV,
      condition: ['ValidationSucceeded', 'NodeImageVersionInvalid'],
    },
    {
      name: 'nodeImageVersion without kubernetesVersion is invalid',
      versions: { nodeImageVersion: CUR },
      image: PREV,
      condition: ['ValidationSucceeded', 'NodeImageVersionInvalid'],
    },
    {
      name: 'pinned at a rolled-back version: the old effective stays',
      versions: { kubernetesVersion: '1.34.2', nodeImageVersion: CUR },
      extra: { rolledBackVersions: [rolledBack(CUR)] },
      image: PREV,
      condition: ['ValidationSucceeded', 'NodeImageVersionRolledBack'],
    },
    {
      name: 'pinned at a version no longer published: the old effective stays',
      versions: { kubernetesVersion: '1.34.2', nodeImageVersion: OLD },
      gallery: [PREV, CUR],
      image: PREV,
      condition: ['ImagesReady', 'RequestedNodeImageVersionUnavailable'],
    },
    {
      name: 'a Kubernetes pin outside the skew keeps the old pair, image pin and all',
      versions: { kubernetesVersion: '1.35.1', nodeImageVersion: CUR },
      image: PREV,
      kubernetesVersion: '1.34.2',
      condition: ['KubernetesVersionReady', 'KubernetesVersionControlPlaneIncompatible'],
    },
    {
      name: 'a Kubernetes rollback keeps the old pair',
      versions: { kubernetesVersion: '1.34.1' },
      image: PREV,
      kubernetesVersion: '1.34.2',
      condition: ['ValidationSucceeded', 'KubernetesVersionDowngradeNotSupported'],
    },
    {
      name: 'a Kubernetes pin alone takes the newest image for it',
      versions: { kubernetesVersion: '1.34.2' },
      image: CUR,
      kubernetesVersion: '1.34.2',
    },
  ])('$name', ({ versions, extra, gallery: listed, image, kubernetesVersion, condition }) => {
    const fields = statusOf(settled(versions, extra), listed ?? gallery);
    expect(versionOfImages(fields)).toEqual([image]);
    expect(fields.images).toHaveLength(3);
    expect(fields.kubernetesVersion).toBe(kubernetesVersion ?? '1.34.2');
    expect(fields.latestImageVersion).toBe((listed ?? gallery).at(-1));
    expect(fields.controlPlaneKubernetesVersion).toBe('1.34.2');
    const ready = conditionOf(fields, 'Ready');
    if (!condition) {
      expect(ready).toMatchObject({ status: 'True', observedGeneration: 4 });
      return;
    }
    const [type, reason] = condition;
    const failed = conditionOf(fields, type);
    expect(failed).toMatchObject({ status: 'False', reason, observedGeneration: 4 });
    expect(failed?.message).toMatch(/^spec\.versions\.(nodeImageVersion|kubernetesVersion) "/);
    expect(ready).toMatchObject({ status: 'False', reason: 'UnhealthyDependents' });
    expect(ready?.message).toContain(`${type}=False`);
    expect(ready?.message).toContain(failed?.message);
  });

  it('names the field, the latest and the recently used versions when a pin is not status-backed', () => {
    const fields = statusOf(
      settled({ kubernetesVersion: '1.34.2', nodeImageVersion: '202501.01.0' }),
      gallery,
    );
    expect(conditionOf(fields, 'ValidationSucceeded')?.message).toBe(
      `spec.versions.nodeImageVersion "202501.01.0" is not a version this class has used ` +
        `(latest ${CUR}; recently used: ${PREV}, ${OLD})`,
    );
    expect(conditionOf(fields, 'Ready')?.message).toBe(
      `ValidationSucceeded=False: spec.versions.nodeImageVersion "202501.01.0" is not a version this class has used ` +
        `(latest ${CUR}; recently used: ${PREV}, ${OLD})`,
    );
  });

  it('names the rollout, its NodePool and its reason when a pinned version was rolled back', () => {
    const fields = statusOf(
      settled(
        { kubernetesVersion: '1.34.2', nodeImageVersion: CUR },
        { rolledBackVersions: [rolledBack(CUR)] },
      ),
      gallery,
    );
    expect(conditionOf(fields, 'ValidationSucceeded')?.message).toBe(
      `spec.versions.nodeImageVersion "${CUR}" was rolled back by NodePool canary at 2026-12-07T10:00:00Z: ` +
        'canary nodes never went Ready (remove its entry from status.rolledBackVersions to allow it again)',
    );
  });

  it('a field that does not parse and a version problem are both named, the field first', () => {
    const nodeClass = settled({ kubernetesVersion: '1.34.2', nodeImageVersion: '202501.01.0' });
    nodeClass.spec.maxPods = 5;
    const validation = conditionOf(statusOf(nodeClass, gallery), 'ValidationSucceeded');
    expect(validation).toMatchObject({ status: 'False', reason: 'InvalidFieldValue' });
    expect(validation?.message).toMatch(
      /^spec\.maxPods: .*; spec\.versions\.nodeImageVersion "202501\.01\.0"/,
    );
  });

  it('every published version rolled back: no image is effective, the images not rejected stay', () => {
    const fields = statusOf(
      settled(undefined, { rolledBackVersions: [rolledBack(OLD), rolledBack(PREV), rolledBack(CUR)] }),
      gallery,
    );
    expect(conditionOf(fields, 'ImagesReady')).toMatchObject({
      status: 'False',
      reason: 'ImagesNotFound',
      message: expect.stringMatching(/^every published version of .* was rolled back/),
    });
    expect(fields.images).toEqual([]);
    const only = statusOf(settled(undefined, { rolledBackVersions: [rolledBack(CUR)] }), [CUR]);
    expect(versionOfImages(only)).toEqual([PREV]);
  });

  it('a class without a status takes the newest valid even when its pin is not yet status-backed, then the pin', () => {
    const pinned = cls({ kubernetesVersion: '1.33.7', nodeImageVersion: CUR });
    const first = statusOf(pinned, [PREV, CUR, NEXT]);
    expect(versionOfImages(first)).toEqual([NEXT]);
    expect(first.kubernetesVersion).toBe('1.33.7');
    // Kubernetes 1.33 selects Ubuntu 22.04's definitions.
    expect(first.images.map((i) => imageDefinitionOf(i.id))).toEqual([
      '2204gen2containerd',
      '2204containerd',
      '2204gen2arm64containerd',
    ]);
    expect(conditionOf(first, 'ValidationSucceeded')?.reason).toBe('NodeImageVersionInvalid');
    // The version the user reads from status.latestImageVersion is NEXT; once pinned to it, it holds.
    const repinned = applied(
      {
        ...pinned,
        spec: { ...pinned.spec, versions: { kubernetesVersion: '1.33.7', nodeImageVersion: NEXT } },
      },
      first,
    );
    const second = statusOf(repinned, [PREV, CUR, NEXT]);
    expect(versionOfImages(second)).toEqual([NEXT]);
    expect(conditionOf(second, 'Ready')?.status).toBe('True');
  });

  it('a pinned class never moves to a newer published image; only latestImageVersion does; unpinned, it moves', () => {
    const pinned = settled({ kubernetesVersion: '1.34.2', nodeImageVersion: CUR });
    const first = statusOf(pinned, gallery);
    expect(versionOfImages(first)).toEqual([CUR]);
    const published = statusOf(applied(pinned, first), [...gallery, NEXT]);
    expect(versionOfImages(published)).toEqual([CUR]);
    expect(published.latestImageVersion).toBe(NEXT);
    expect(conditionOf(published, 'Ready')?.status).toBe('True');
    const unpinned = applied({ ...pinned, spec: { imageFamily: 'Ubuntu' } }, published);
    const moved = statusOf(unpinned, [...gallery, NEXT]);
    expect(versionOfImages(moved)).toEqual([NEXT]);
    expect(moved.recentlyUsedVersions.map((e) => e.imageVersion)).toEqual([NEXT, CUR, PREV, OLD]);
  });

  it('a definition that does not publish the pinned version gets no image; the others keep the pin', () => {
    const nodeClass = settled({ kubernetesVersion: '1.34.2', nodeImageVersion: CUR });
    const lookups = imageLookups(nodeClass, '1.34.2') as ImageLookup[];
    const fields = desiredNodeClassStatus({
      nodeClass,
      kubernetesVersion: CONTROL_PLANE,
      resolved: lookups.map((lookup) => ({
        lookup,
        imageId: undefined,
        versions: (lookup.arch === 'arm64' ? [OLD, PREV] : gallery).map(published),
      })),
      now,
    });
    expect(fields.images.map((i) => imageDefinitionOf(i.id))).toEqual([
      '2404gen2containerd',
      '2404containerd',
    ]);
    expect(versionOfImages(fields)).toEqual([CUR]);
  });
});

describe('status.recentlyUsedVersions', () => {
  it('gains the effective pair when first set, and is left alone while it stays', () => {
    const first = statusOf(cls(), [PREV, CUR]);
    expect(first.recentlyUsedVersions).toEqual([
      { timestampUsed: now.toISOString(), imageVersion: CUR, kubernetesVersion: '1.34.2' },
    ]);
    const again = statusOf(applied(cls(), first), [PREV, CUR]);
    expect(again.recentlyUsedVersions).toEqual(first.recentlyUsedVersions);
  });

  it('a changed pair goes first; a pair used before moves up instead of repeating', () => {
    const rolledBackTo = statusOf(settled({ kubernetesVersion: '1.34.2', nodeImageVersion: OLD }), [
      OLD,
      PREV,
      CUR,
    ]);
    expect(rolledBackTo.recentlyUsedVersions).toEqual([
      { timestampUsed: now.toISOString(), imageVersion: OLD, kubernetesVersion: '1.34.2' },
      { timestampUsed: '2026-11-21T00:00:00Z', imageVersion: PREV, kubernetesVersion: '1.34.2' },
    ]);
  });

  it('a control plane upgrade adds the new pair for the same image version', () => {
    const upgraded = statusOf(settled(undefined, { latestImageVersion: PREV }), [OLD, PREV], '1.34.3');
    expect(upgraded.kubernetesVersion).toBe('1.34.3');
    expect(
      upgraded.recentlyUsedVersions.slice(0, 2).map((e) => `${e.imageVersion}/${e.kubernetesVersion}`),
    ).toEqual([`${PREV}/1.34.3`, `${PREV}/1.34.2`]);
  });

  it(`keeps the last ${RECENTLY_USED_VERSIONS_KEPT}, most recent first`, () => {
    const long: RecentlyUsedVersion[] = Array.from({ length: 12 }, (_, i) => ({
      timestampUsed: new Date(Date.UTC(2026, 0, 12 - i)).toISOString(),
      imageVersion: `2026${String(12 - i).padStart(2, '0')}.01.0`,
      kubernetesVersion: '1.34.2',
    }));
    const next = withRecentlyUsed(long, { imageVersion: '202701.01.0', kubernetesVersion: '1.34.2' }, now);
    expect(next).toHaveLength(RECENTLY_USED_VERSIONS_KEPT);
    expect(next[0]).toEqual({
      timestampUsed: now.toISOString(),
      imageVersion: '202701.01.0',
      kubernetesVersion: '1.34.2',
    });
    expect(next.slice(1)).toEqual(long.slice(0, RECENTLY_USED_VERSIONS_KEPT - 1));
    expect(
      withRecentlyUsed(
        long.slice(0, 3),
        { imageVersion: long[0]!.imageVersion, kubernetesVersion: '1.34.2' },
        now,
      ),
    ).toEqual(long.slice(0, 3));
    expect(
      withRecentlyUsed(long, { imageVersion: long[0]!.imageVersion, kubernetesVersion: '1.34.2' }, now),
    ).toEqual(long.slice(0, RECENTLY_USED_VERSIONS_KEPT));
    expect(withRecentlyUsed(long.slice(0, 3), undefined, now)).toEqual(long.slice(0, 3));
  });
});

describe('status.rolledBackVersions', () => {
  const entries = (n: number): RolledBackVersion[] =>
    Array.from({ length: n }, (_, i) => ({
      ...rolledBack(`2026${String(i + 1).padStart(2, '0')}.01.0`),
      // Written out of time order: the bound keeps the newest by timestamp, in the order found.
      timestamp: new Date(Date.UTC(2026, 0, 1 + ((i * 7) % n))).toISOString(),
    }));

  it('is left as found within the bound (the status step does not write it)', () => {
    const fields = statusOf(settled(undefined, { rolledBackVersions: entries(3) }), [OLD, PREV, CUR]);
    expect(fields.rolledBackVersions).toBeUndefined();
    expect(boundedRolledBackVersions(entries(ROLLED_BACK_VERSIONS_KEPT))).toEqual(
      entries(ROLLED_BACK_VERSIONS_KEPT),
    );
  });

  it(`past ${ROLLED_BACK_VERSIONS_KEPT}, the oldest by timestamp go and the rest keep their order`, () => {
    const list = entries(12);
    const bounded = boundedRolledBackVersions(list)!;
    expect(bounded).toHaveLength(ROLLED_BACK_VERSIONS_KEPT);
    const dropped = list.filter((e) => !bounded.includes(e)).map((e) => e.timestamp);
    const oldest = [...list.map((e) => e.timestamp)].sort().slice(0, 2);
    expect(dropped.sort()).toEqual(oldest);
    expect(bounded).toEqual(list.filter((e) => bounded.includes(e)));
    const fields = statusOf(settled(undefined, { rolledBackVersions: list }), [OLD, PREV, CUR]);
    expect(fields.rolledBackVersions).toEqual(bounded);
  });

  it('the status step keeps the entries it finds, writing them only to bound them', async () => {
    const fake = fakeLifecycle({ now });
    const lookups = imageLookups(cls(), fake.deps.settings.cluster.kubernetesVersion) as ImageLookup[];
    for (const lookup of lookups) {
      fake.cloud.images.set(
        `${lookup.gallery}/${lookup.definition}`,
        communityGalleryImageId(lookup.gallery, lookup.definition, CUR),
      );
    }
    const few = fake.nodeClasses.seed({
      ...cls(),
      metadata: { name: 'few' },
      status: { rolledBackVersions: entries(3) },
    });
    const many = fake.nodeClasses.seed({
      ...cls(),
      metadata: { name: 'many' },
      status: { rolledBackVersions: entries(12) },
    });
    await reconcileNodeClassStatus(fake.deps, few);
    await reconcileNodeClassStatus(fake.deps, many);
    const fewAfter = await fake.nodeClasses.get('few');
    expect(fewAfter?.status?.rolledBackVersions).toEqual(entries(3));
    expect(versionOfImages({ images: fewAfter?.status?.images ?? [] })).toEqual([CUR]);
    expect(fewAfter?.status?.latestImageVersion).toBe(CUR);
    expect((await fake.nodeClasses.get('many'))?.status?.rolledBackVersions).toEqual(
      boundedRolledBackVersions(entries(12)),
    );
    // Settled: a second pass writes nothing.
    const writes = fake.nodeClasses.writes.length;
    expect((await reconcileNodeClassStatus(fake.deps, fewAfter!)).written).toBe(false);
    expect(fake.nodeClasses.writes).toHaveLength(writes);
  });
});
