// The AKS node images the emulator's community galleries publish: every definition AKS builds today for
// Ubuntu 22.04, Ubuntu 24.04 and Azure Linux 3 (Azure Linux 2 is retired, so its definitions have no
// version), each with two weekly versions, listed as
// GET /subscriptions/{s}/providers/Microsoft.Compute/locations/{l}/communityGalleries/{g}/images/{d}/versions.
// A VM PUT whose communityGalleryImageId names an unknown version is refused as ARM refuses it.
import { ArmError } from './errors.js';

const UBUNTU = 'AKSUbuntu-38d80f77-467a-481f-a8d4-09b6d4220bd2';
const AZURE_LINUX = 'AKSAzureLinux-f7c7cda5-1c9a-4bdc-a222-9614c968580b';

export interface GalleryImageVersionRecord {
  gallery: string;
  definition: string;
  version: string;
  publishedDate: string;
}

const DEFINITIONS: readonly [string, string][] = [
  [UBUNTU, '2204gen2containerd'],
  [UBUNTU, '2204containerd'],
  [UBUNTU, '2204gen2arm64containerd'],
  [UBUNTU, '2404gen2containerd'],
  [UBUNTU, '2404containerd'],
  [UBUNTU, '2404gen2arm64containerd'],
  [AZURE_LINUX, 'V3gen2'],
  [AZURE_LINUX, 'V3'],
  [AZURE_LINUX, 'V3gen2arm64'],
];

/** Azure Linux 2 is retired: its definitions still exist but publish no version any more. */
const RETIRED_DEFINITIONS: readonly [string, string][] = [
  [AZURE_LINUX, 'V2gen2'],
  [AZURE_LINUX, 'V2'],
  [AZURE_LINUX, 'V2gen2arm64'],
];

const VERSIONS: readonly [string, string][] = [
  ['202608.13.0', '2026-08-13T00:00:00Z'],
  ['202608.20.0', '2026-08-20T00:00:00Z'],
];

const knownGalleryImageVersions: readonly GalleryImageVersionRecord[] = DEFINITIONS.flatMap(
  ([gallery, definition]) =>
    VERSIONS.map(([version, publishedDate]) => ({ gallery, definition, version, publishedDate })),
);

const same = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

/** The versions of one definition as ARM lists them (CommunityGalleryImageVersion resources). */
export function listGalleryImageVersions(
  location: string,
  gallery: string,
  definition: string,
): Record<string, unknown>[] {
  const versions = knownGalleryImageVersions.filter(
    (v) => same(v.gallery, gallery) && same(v.definition, definition),
  );
  const exists = [...DEFINITIONS, ...RETIRED_DEFINITIONS].some(
    ([g, d]) => same(g, gallery) && same(d, definition),
  );
  if (!exists) {
    throw new ArmError(
      404,
      'GalleryImageNotFound',
      `The gallery image '${definition}' of community gallery '${gallery}' is not found in location '${location}'.`,
    );
  }
  return versions.map((v) => ({
    name: v.version,
    location: location.toLowerCase(),
    type: 'Microsoft.Compute/locations/communityGalleries/images/versions',
    identifier: { uniqueId: `/CommunityGalleries/${v.gallery}/Images/${v.definition}/Versions/${v.version}` },
    properties: {
      publishedDate: v.publishedDate,
      excludeFromLatest: false,
      storageProfile: { osDiskImage: { diskSizeGB: 30, hostCaching: 'ReadOnly' } },
    },
  }));
}

const COMMUNITY_IMAGE_ID = /^\/CommunityGalleries\/([^/]+)\/images\/([^/]+)\/versions\/([^/]+)$/i;

/** Refuses a communityGalleryImageId that names no published version (other image kinds pass). */
export function checkCommunityGalleryImage(imageReference: unknown): void {
  if (typeof imageReference !== 'object' || imageReference === null) return;
  const id = (imageReference as Record<string, unknown>).communityGalleryImageId;
  if (id === undefined) return;
  const match = typeof id === 'string' ? COMMUNITY_IMAGE_ID.exec(id) : null;
  const known =
    match &&
    knownGalleryImageVersions.some(
      (v) =>
        same(v.gallery, match[1] ?? '') &&
        same(v.definition, match[2] ?? '') &&
        same(v.version, match[3] ?? ''),
    );
  if (!known) {
    throw new ArmError(
      404,
      'GalleryImageNotFound',
      `The community gallery image version '${String(id)}' is not found.`,
      'imageReference.communityGalleryImageId',
    );
  }
}
