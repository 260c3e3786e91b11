// The VM a NodeClaim becomes: its deterministic name, provider ID, image, and the full PUT body.
import { createHash } from 'node:crypto';
import type { VirtualMachine, VirtualMachineNetworkInterfaceIPConfiguration } from '@azure/arm-compute';
import { DEFAULT_OS_DISK_SIZE_GB, type Offering } from '../../../decisions/offerings.js';

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

/** Azure tag names may not contain '/', so Karpenter's label keys are written with '_' instead. */
export const VmTags = {
  cluster: 'karpenter.azure.com_cluster',
  nodePool: 'karpenter.sh_nodepool',
  nodeClaim: 'karpenter.sh_nodeclaim',
} as const;

/** Inline NIC declarations (networkInterfaceConfigurations) need this Microsoft.Network API version. */
export const NETWORK_API_VERSION = '2020-11-01';

/** Tags AKS's resource provider writes on the resources it owns; a VM of ours must never carry them. */
const AKS_MANAGED_TAG_PREFIX = 'aks-managed-';

export interface VirtualMachineInput {
  location: string;
  clusterName: string;
  nodePoolName: string;
  nodeClaimName: string;
  offering: Offering;
  /** The AKS node image, a community gallery image version ID (communityGalleryImageId). */
  imageId: string;
  osDiskSizeGB?: number;
  subnetId: string;
  /** Base64 custom data delivering the node's AKSNodeConfig (renderNodeCustomData). */
  customData: string;
  /** Azure refuses a Linux VM without a password or an SSH key; passwords stay disabled. */
  sshPublicKey: string;
  adminUsername: string;
  /** The cluster's kubelet identity, attached as a user-assigned identity. */
  kubeletIdentityResourceId: string;
  /** Cluster load balancer backend pools the primary IP configuration joins (outbound egress). */
  loadBalancerBackendPoolIds: readonly string[];
  /** The node NSG, set on the NIC only when the cluster's VNet is brought by its owner. */
  networkSecurityGroupId?: string | undefined;
  /** 1, or maxPods on node-subnet CNI (one primary plus maxPods − 1 secondary). */
  ipConfigurationCount: number;
  /** AKSNodeClass spec.tags; the system tags win on a name clash so orphan detection stays reliable. */
  extraTags?: Readonly<Record<string, string>>;
}

function ipConfigurations(input: VirtualMachineInput): VirtualMachineNetworkInterfaceIPConfiguration[] {
  const subnet = { id: input.subnetId };
  const primary: VirtualMachineNetworkInterfaceIPConfiguration = {
    name: 'ipconfig1',
    primary: true,
    subnet,
    ...(input.loadBalancerBackendPoolIds.length > 0
      ? { loadBalancerBackendAddressPools: input.loadBalancerBackendPoolIds.map((id) => ({ id })) }
      : {}),
  };
  const secondary = Array.from({ length: Math.max(0, input.ipConfigurationCount - 1) }, (_, index) => ({
    name: `ipconfig${index + 2}`,
    primary: false,
    subnet,
  }));
  return [primary, ...secondary];
}

/**
 * The VM PUT body. NIC and OS disk are declared inline with deleteOption Delete, so one LRO creates
 * everything and deleting the VM removes everything (no orphaned NICs or disks). The computer name is
 * the VM name, which cloud-provider-azure requires of a node's host name.
 */
export function buildVirtualMachine(input: VirtualMachineInput): VirtualMachine {
  const vmName = vmNameFor(input.nodeClaimName);
  const { offering } = input;
  const spot = offering.capacityType === 'spot';
  // Azure refuses '/' in tag names; the Azure provider writes it as '_', and so does this.
  const extraTags = Object.entries(input.extraTags ?? {})
    .filter(([key]) => !key.toLowerCase().startsWith(AKS_MANAGED_TAG_PREFIX))
    .map(([key, value]) => [key.replaceAll('/', '_'), value] as const);
  return {
    location: input.location,
    tags: {
      ...Object.fromEntries(extraTags),
      [VmTags.cluster]: input.clusterName,
      [VmTags.nodePool]: input.nodePoolName,
      [VmTags.nodeClaim]: input.nodeClaimName,
    },
    identity: { type: 'UserAssigned', userAssignedIdentities: { [input.kubeletIdentityResourceId]: {} } },
    ...(offering.zoneNumber !== undefined ? { zones: [offering.zoneNumber] } : {}),
    hardwareProfile: { vmSize: offering.vmSize },
    ...(spot
      ? { priority: 'Spot', evictionPolicy: 'Delete', billingProfile: { maxPrice: -1 } }
      : { priority: 'Regular' }),
    // A reserved offering names its group; Azure matches the VM to the group's reservation of its size
    // and zone.
    ...(offering.capacityType === 'reserved' && offering.reservationGroupId
      ? { capacityReservation: { capacityReservationGroup: { id: offering.reservationGroupId } } }
      : {}),
    storageProfile: {
      imageReference: { communityGalleryImageId: input.imageId },
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
          enableIPForwarding: false,
          ...(input.networkSecurityGroupId
            ? { networkSecurityGroup: { id: input.networkSecurityGroupId } }
            : {}),
          ipConfigurations: ipConfigurations(input),
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
