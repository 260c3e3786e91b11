// The VM a NodeClaim becomes: its deterministic name, provider ID, image, and the full PUT body.
import { createHash } from 'node:crypto';
import type { ImageReference, VirtualMachine } from '@azure/arm-compute';
import type { ImageFamily } from '../models/aks-node-class.js';
import { DEFAULT_OS_DISK_SIZE_GB, type Architecture, type Offering } from './offerings.js';

const VM_NAME_PREFIX = 'aks-';
/** Azure allows 64 characters for a Linux VM name and for its computer (host) name. */
export const MAX_VM_NAME_LENGTH = 64;

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}

/**
 * "aks-<nodeclaim name>", usable as VM name, Linux computer name and therefore Node name: lower case,
 * letters, digits and '-' only (a '.' would make the hostname look like an FQDN). When the NodeClaim
 * name had to be changed (other characters) or shortened, a hash of the original name is appended, so
 * two different NodeClaims never map to the same VM. The same NodeClaim name always gives the same VM
 * name, which is what makes a retried launch find the VM it already created.
 */
export function vmNameFor(nodeClaimName: string): string {
  const sanitized = nodeClaimName
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .replace(/^-+|-+$/g, '');
  const plain = `${VM_NAME_PREFIX}${sanitized}`;
  if (sanitized === nodeClaimName && sanitized !== '' && plain.length <= MAX_VM_NAME_LENGTH) return plain;
  const suffix = `-${shortHash(nodeClaimName)}`;
  const head = plain.slice(0, MAX_VM_NAME_LENGTH - suffix.length).replace(/-+$/, '');
  return `${head}${suffix}`;
}

export interface VmIdentity {
  subscriptionId: string;
  resourceGroup: string;
  vmName: string;
}

/**
 * "azure://" + the VM's ARM ID, with the resource group in lower case because that is how Kubernetes'
 * Azure cloud provider writes Node.spec.providerID; registration matches the two strings exactly.
 */
export function providerIdFor(identity: VmIdentity): string {
  return `azure:///subscriptions/${identity.subscriptionId}/resourceGroups/${identity.resourceGroup.toLowerCase()}/providers/Microsoft.Compute/virtualMachines/${identity.vmName}`;
}

const PROVIDER_ID_PATTERN =
  /^azure:\/\/\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\/providers\/Microsoft\.Compute\/virtualMachines\/([^/]+)$/i;

/** The parts of a VM provider ID; undefined for anything else (e.g. a VMSS instance). */
export function parseProviderId(providerId: string): VmIdentity | undefined {
  const match = PROVIDER_ID_PATTERN.exec(providerId);
  if (!match) return undefined;
  return {
    subscriptionId: match[1] as string,
    resourceGroup: match[2] as string,
    vmName: match[3] as string,
  };
}

interface MarketplaceImage {
  publisher: string;
  offer: string;
  sku: { amd64: string; arm64: string };
}

// Generation 2 marketplace images (offeringsFromSkus keeps only sizes that can boot them).
const IMAGES: Readonly<Record<Exclude<ImageFamily, 'Ubuntu'>, MarketplaceImage>> = {
  Ubuntu2204: {
    publisher: 'Canonical',
    offer: '0001-com-ubuntu-server-jammy',
    sku: { amd64: '22_04-lts-gen2', arm64: '22_04-lts-arm64' },
  },
  Ubuntu2404: {
    publisher: 'Canonical',
    offer: 'ubuntu-24_04-lts',
    sku: { amd64: 'server', arm64: 'server-arm64' },
  },
  AzureLinux: {
    publisher: 'MicrosoftCBLMariner',
    offer: 'azure-linux-3',
    sku: { amd64: 'azure-linux-3-gen2', arm64: 'azure-linux-3-arm64' },
  },
};

/** The image for an AKSNodeClass imageFamily ("Ubuntu" and unset mean Ubuntu2204, as in Karpenter). */
export function imageReferenceFor(
  imageFamily: ImageFamily | undefined,
  imageVersion?: string,
  arch: Architecture = 'amd64',
): ImageReference {
  const family = imageFamily === undefined || imageFamily === 'Ubuntu' ? 'Ubuntu2204' : imageFamily;
  const image = IMAGES[family];
  return {
    publisher: image.publisher,
    offer: image.offer,
    sku: image.sku[arch],
    version: imageVersion ?? 'latest',
  };
}

/** Azure tag names may not contain '/', so Karpenter's label keys are written with '_' instead. */
export const VmTags = {
  cluster: 'karpenter.azure.com_cluster',
  nodePool: 'karpenter.sh_nodepool',
  nodeClaim: 'karpenter.sh_nodeclaim',
} as const;

/** Inline NIC declarations (networkInterfaceConfigurations) need this Microsoft.Network API version. */
export const NETWORK_API_VERSION = '2020-11-01';

export interface VirtualMachineInput {
  location: string;
  clusterName: string;
  nodePoolName: string;
  nodeClaimName: string;
  offering: Offering;
  imageFamily?: ImageFamily;
  imageVersion?: string;
  osDiskSizeGB?: number;
  subnetId: string;
  /** Base64 cloud-init from encodeCustomData(renderBootstrap(...)). */
  customData: string;
  /** Azure refuses a Linux VM without a password or an SSH key; passwords stay disabled. */
  sshPublicKey: string;
  adminUsername: string;
  /** AKSNodeClass spec.tags; the system tags win on a name clash so orphan detection stays reliable. */
  extraTags?: Readonly<Record<string, string>>;
}

/**
 * The VM PUT body. NIC and OS disk are declared inline with deleteOption Delete, so one LRO creates
 * everything and deleting the VM removes everything (no orphaned NICs or disks).
 */
export function buildVirtualMachine(input: VirtualMachineInput): VirtualMachine {
  const vmName = vmNameFor(input.nodeClaimName);
  const { offering } = input;
  const spot = offering.capacityType === 'spot';
  return {
    location: input.location,
    tags: {
      ...input.extraTags,
      [VmTags.cluster]: input.clusterName,
      [VmTags.nodePool]: input.nodePoolName,
      [VmTags.nodeClaim]: input.nodeClaimName,
    },
    ...(offering.zoneNumber !== undefined ? { zones: [offering.zoneNumber] } : {}),
    hardwareProfile: { vmSize: offering.vmSize },
    ...(spot
      ? { priority: 'Spot', evictionPolicy: 'Delete', billingProfile: { maxPrice: -1 } }
      : { priority: 'Regular' }),
    storageProfile: {
      imageReference: imageReferenceFor(input.imageFamily, input.imageVersion, offering.arch),
      osDisk: {
        name: `${vmName}-osdisk`,
        osType: 'Linux',
        createOption: 'FromImage',
        caching: 'ReadWrite',
        deleteOption: 'Delete',
        diskSizeGB: input.osDiskSizeGB ?? DEFAULT_OS_DISK_SIZE_GB,
        managedDisk: { storageAccountType: offering.premiumIO ? 'Premium_LRS' : 'StandardSSD_LRS' },
      },
    },
    networkProfile: {
      networkApiVersion: NETWORK_API_VERSION,
      networkInterfaceConfigurations: [
        {
          name: `${vmName}-nic`,
          primary: true,
          deleteOption: 'Delete',
          enableAcceleratedNetworking: offering.acceleratedNetworking,
          ipConfigurations: [{ name: 'ipconfig1', primary: true, subnet: { id: input.subnetId } }],
        },
      ],
    },
    osProfile: {
      computerName: vmName,
      adminUsername: input.adminUsername,
      customData: input.customData,
      linuxConfiguration: {
        disablePasswordAuthentication: true,
        ssh: {
          publicKeys: [
            { path: `/home/${input.adminUsername}/.ssh/authorized_keys`, keyData: input.sshPublicKey },
          ],
        },
      },
    },
  };
}
