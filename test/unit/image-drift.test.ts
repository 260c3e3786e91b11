// The Azure provider's version drift: ImageDrift (the image a NodeClaim launched with is none of its
// class's effective images) and K8sVersionDrift (its Node's kubelet runs another Kubernetes version than
// the class's effective one), after NodePool, requirements and node class hash drift. The effective
// images come from the status decision, so a pinned class after a newer release drifts nothing and
// unpinning it drifts its nodes to the newest.
import { describe, expect, it } from 'vitest';
import {
  communityGalleryImageId,
  AKS_COMMUNITY_GALLERIES,
} from '../../shared/cloudprovider/azure/decisions/node-image.js';
import type { ImageLookup } from '../../shared/cloudprovider/azure/decisions/node-image-versions.js';
import {
  desiredNodeClassStatus,
  imageLookups,
} from '../../shared/cloudprovider/azure/decisions/nodeclass-status.js';
import { evaluateDrift, type DriftResult } from '../../shared/decisions/drift.js';
import {
  providerDrift,
  type NodeVersionInfo,
} from '../../shared/cloudprovider/azure/decisions/provider-drift.js';
import { hashAnnotations } from '../../shared/decisions/hash.js';
import {
  WellKnown,
  type AKSNodeClass,
  type AKSNodeClassVersions,
  type NodeClaim,
  type NodePool,
} from '../../shared/models/index.js';

/** Drift as the sweep judges it: core's checks, then the provider's answer (CloudProvider.isDrifted). */
function drift(
  claim: NodeClaim,
  pool: NodePool,
  cls: AKSNodeClass | undefined,
  node?: NodeVersionInfo,
): DriftResult {
  return evaluateDrift(claim, pool, cls, cls ? providerDrift(claim, cls, node) : undefined);
}

const now = new Date('2026-12-08T12:00:00Z');
const PREV = '202611.20.0';
const CUR = '202612.06.0';
const NEXT = '202612.13.0';
const gallery = AKS_COMMUNITY_GALLERIES.ubuntu;
const image = (definition: string, version: string): string =>
  communityGalleryImageId(gallery, definition, version);

function nodePool(): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'general' },
    spec: {
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
          requirements: [],
        },
      },
    },
  };
}

function nodeClass(status: AKSNodeClass['status'], versions?: AKSNodeClassVersions): AKSNodeClass {
  return {
    apiVersion: 'karpenter.azure.com/v1beta1',
    kind: 'AKSNodeClass',
    metadata: { name: 'default' },
    spec: { imageFamily: 'Ubuntu', ...(versions && { versions }) },
    status,
  };
}

const ready = (type: string, status: 'True' | 'False' = 'True') => ({
  type,
  status,
  reason: type,
  message: '',
  lastTransitionTime: '2026-12-01T00:00:00Z',
});

/** A class whose effective images are `version` of the three Ubuntu 24.04 definitions. */
function classAt(version: string, versions?: AKSNodeClassVersions, imagesReady: 'True' | 'False' = 'True') {
  return nodeClass(
    {
      images: ['2404gen2containerd', '2404containerd', '2404gen2arm64containerd'].map((d) => ({
        id: image(d, version),
        requirements: [],
      })),
      kubernetesVersion: '1.34.2',
      conditions: [ready('ImagesReady', imagesReady), ready('KubernetesVersionReady')],
    },
    versions,
  );
}

/** A launched NodeClaim stamped from nodePool() and `cls`, booted from `imageID`. */
function claimOn(cls: AKSNodeClass, imageID: string | undefined): NodeClaim {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name: 'general-abc12',
      labels: { [WellKnown.nodePoolLabel]: 'general' },
      annotations: hashAnnotations(nodePool(), cls),
    },
    spec: {
      nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
      requirements: [],
    },
    status: {
      providerID:
        'azure:///subscriptions/s/resourcegroups/rg/providers/Microsoft.Compute/virtualMachines/general-abc12',
      ...(imageID !== undefined && { imageID }),
    },
  };
}

const node = (kubeletVersion: string, deleting = false): NodeVersionInfo => ({
  metadata: deleting ? { deletionTimestamp: now.toISOString() } : {},
  status: { nodeInfo: { kubeletVersion } },
});

describe('ImageDrift', () => {
  it.each<{
    name: string;
    cls: AKSNodeClass;
    imageID: string | undefined;
    reason?: string;
    message?: string;
  }>([
    {
      name: 'on an effective image: not drifted',
      cls: classAt(CUR),
      imageID: image('2404gen2containerd', CUR),
    },
    {
      name: 'on an effective image, cased differently by ARM: not drifted',
      cls: classAt(CUR),
      imageID: image('2404gen2containerd', CUR).toLowerCase(),
    },
    {
      name: 'on an older version: drifted, naming both versions',
      cls: classAt(CUR),
      imageID: image('2404gen2containerd', PREV),
      reason: 'ImageDrift',
      message: `node image ${PREV} → ${CUR} (AKSNodeClass default)`,
    },
    {
      name: 'on the pinned version after a pin moved it back: drifted, naming the pin',
      cls: classAt(PREV, { kubernetesVersion: '1.34.2', nodeImageVersion: PREV }),
      imageID: image('2404containerd', CUR),
      reason: 'ImageDrift',
      message: `node image ${CUR} → ${PREV} (pinned by spec.versions.nodeImageVersion)`,
    },
    {
      name: 'on another definition of the same version: drifted, naming the definitions',
      cls: classAt(CUR),
      imageID: image('2204gen2containerd', CUR),
      reason: 'ImageDrift',
      message: `node image 2204gen2containerd/${CUR} → 2404gen2containerd/${CUR} (AKSNodeClass default)`,
    },
    { name: 'no imageID recorded yet: not judged', cls: classAt(CUR), imageID: undefined },
    {
      name: 'the class has no images: not judged',
      cls: nodeClass({}),
      imageID: image('2404gen2containerd', PREV),
    },
    {
      name: 'the class images are not ready: not judged',
      cls: classAt(CUR, undefined, 'False'),
      imageID: image('2404gen2containerd', PREV),
    },
  ])('$name', ({ cls, imageID, reason, message }) => {
    const result = drift(claimOn(cls, imageID), nodePool(), cls);
    if (reason === undefined) expect(result).toEqual({ drifted: false });
    else expect(result).toEqual({ drifted: true, reason, message });
  });

  it('comes after the node class hash, in the provider order', () => {
    const cls = classAt(CUR);
    const claim = claimOn(nodeClass(cls.status, undefined), image('2404gen2containerd', PREV));
    const changed = { ...cls, spec: { ...cls.spec, osDiskSizeGB: 64 } };
    expect(drift(claim, nodePool(), changed)).toMatchObject({ reason: 'NodeClassDrifted' });
  });

  it('spec.versions is no part of the node class hash: pinning and unpinning drift only by image', () => {
    const pinned = classAt(CUR, { kubernetesVersion: '1.34.2', nodeImageVersion: CUR });
    const claim = claimOn(classAt(CUR), image('2404gen2containerd', CUR));
    expect(drift(claim, nodePool(), pinned)).toEqual({ drifted: false });
  });
});

describe('image drift over the status decision', () => {
  /** The class after one status pass against a gallery publishing `versions` of every definition. */
  function afterStatus(cls: AKSNodeClass, versions: string[]): AKSNodeClass {
    const lookups = imageLookups(cls, '1.34.2') as ImageLookup[];
    const fields = desiredNodeClassStatus({
      nodeClass: cls,
      kubernetesVersion: '1.34.2',
      resolved: lookups.map((lookup) => ({
        lookup,
        imageId: undefined,
        versions: versions.map((name, i) => ({ name, publishedDate: new Date(Date.UTC(2026, 10, 1 + i)) })),
      })),
      now,
    });
    return { ...cls, status: { ...cls.status, ...fields } };
  }

  it('a pinned class drifts nothing when a newer version is published; unpinned, its nodes drift to it', () => {
    const pinned = afterStatus(classAt(CUR, { kubernetesVersion: '1.34.2', nodeImageVersion: CUR }), [
      PREV,
      CUR,
    ]);
    const claim = claimOn(pinned, image('2404gen2containerd', CUR));
    const released = afterStatus(pinned, [PREV, CUR, NEXT]);
    expect(released.status?.latestImageVersion).toBe(NEXT);
    expect(drift(claim, nodePool(), released)).toEqual({ drifted: false });

    const unpinned = afterStatus({ ...released, spec: { imageFamily: 'Ubuntu' } }, [PREV, CUR, NEXT]);
    expect(drift(claim, nodePool(), unpinned)).toEqual({
      drifted: true,
      reason: 'ImageDrift',
      message: `node image ${CUR} → ${NEXT} (AKSNodeClass default)`,
    });
  });

  it('a version a rollout rejected drifts the nodes on it back to the newest one not rejected', () => {
    const cls = afterStatus(classAt(PREV), [PREV, CUR]);
    const claim = claimOn(cls, image('2404gen2arm64containerd', CUR));
    expect(drift(claim, nodePool(), cls)).toEqual({ drifted: false });
    const rejected = afterStatus(
      {
        ...cls,
        status: {
          ...cls.status,
          rolledBackVersions: [
            { imageVersion: CUR, reason: 'pods crash', nodePool: 'canary', timestamp: now.toISOString() },
          ],
        },
      },
      [PREV, CUR],
    );
    expect(drift(claim, nodePool(), rejected)).toEqual({
      drifted: true,
      reason: 'ImageDrift',
      message: `node image ${CUR} → ${PREV} (AKSNodeClass default)`,
    });
  });
});

describe('K8sVersionDrift', () => {
  it.each<{
    name: string;
    node?: NodeVersionInfo;
    versions?: AKSNodeClassVersions;
    reason?: string;
    message?: string;
  }>([
    { name: 'kubelet on the effective version: not drifted', node: node('v1.34.2') },
    {
      name: 'kubelet on another version: drifted, before the image is judged',
      node: node('v1.33.5'),
      reason: 'K8sVersionDrift',
      message: "Kubernetes 1.33.5 → 1.34.2 (the control plane's)",
    },
    {
      name: 'pinned: named so',
      node: node('v1.33.5'),
      versions: { kubernetesVersion: '1.34.2' },
      reason: 'K8sVersionDrift',
      message: 'Kubernetes 1.33.5 → 1.34.2 (pinned by spec.versions.kubernetesVersion)',
    },
    { name: 'without its Node: not judged (the image is)', reason: 'ImageDrift' },
    { name: 'a Node being deleted: not judged', node: node('v1.33.5', true), reason: 'ImageDrift' },
    {
      name: 'a kubelet version that does not parse: not judged',
      node: node('unknown'),
      reason: 'ImageDrift',
    },
  ])('$name', ({ node: n, versions, reason, message }) => {
    const cls = classAt(CUR, versions);
    // The NodeClaim also runs an older image, so ImageDrift shows whenever the version is not judged.
    const claim = claimOn(
      cls,
      n && !reason ? image('2404gen2containerd', CUR) : image('2404gen2containerd', PREV),
    );
    const result = drift(claim, nodePool(), cls, n);
    if (reason === undefined) expect(result).toEqual({ drifted: false });
    else expect(result).toMatchObject({ drifted: true, reason, ...(message && { message }) });
  });
});
