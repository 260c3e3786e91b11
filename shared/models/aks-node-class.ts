// karpenter.azure.com AKSNodeClass (v1beta1 stored; v1alpha2 served with the same schema).
// Field names and value sets follow infra/k8s/crds/karpenter.azure.com_aksnodeclasses.yaml.
import type { Condition, ObjectMeta } from './kube.js';

export const AKS_GROUP = 'karpenter.azure.com';
export const AKS_STORAGE_VERSION = 'v1beta1';
/** Versions the API server serves; both carry the same schema, so no conversion is needed. */
export const AKS_SERVED_VERSIONS = ['v1beta1', 'v1alpha2'] as const;

export type ImageFamily = 'Ubuntu' | 'Ubuntu2204' | 'Ubuntu2404' | 'AzureLinux';

/** Defaults the API server fills in when the fields are omitted. */
export const AKSNodeClassDefaults = {
  imageFamily: 'Ubuntu',
  osDiskSizeGB: 128,
} as const satisfies { imageFamily: ImageFamily; osDiskSizeGB: number };

export interface KubeletConfiguration {
  cpuManagerPolicy?: 'none' | 'static';
  cpuCFSQuota?: boolean;
  cpuCFSQuotaPeriod?: string;
  imageGCHighThresholdPercent?: number;
  imageGCLowThresholdPercent?: number;
  topologyManagerPolicy?: 'restricted' | 'best-effort' | 'none' | 'single-numa-node';
  allowedUnsafeSysctls?: string[];
  containerLogMaxSize?: string;
  containerLogMaxFiles?: number;
  podPidsLimit?: number;
  /** Must be false when `linuxOSConfig.swapFileSize` is set. */
  failSwapOn?: boolean;
  /**
   * @deprecated Not part of the CRD's kubelet schema: the API server prunes it. Use `spec.maxPods`.
   */
  maxPods?: number;
}

export interface LinuxOSConfig {
  swapFileSize?: string;
  transparentHugePageDefrag?: 'always' | 'defer' | 'defer+madvise' | 'madvise' | 'never';
  transparentHugePageEnabled?: 'always' | 'madvise' | 'never';
  /** Kernel sysctls by their camel-cased AKS names (e.g. `vmMaxMapCount`); values are bounded by the CRD. */
  sysctls?: Record<string, number | string | boolean>;
}

export interface LocalDNSOverride {
  zone: string;
  cacheDuration: string;
  forwardDestination: 'ClusterCoreDNS' | 'VnetDNS';
  forwardPolicy: 'Sequential' | 'RoundRobin' | 'Random';
  maxConcurrent: number;
  protocol: 'PreferUDP' | 'ForceTCP';
  queryLogging: 'Error' | 'Log';
  serveStale: 'Verify' | 'Immediate' | 'Disable';
  serveStaleDuration: string;
}

export interface LocalDNS {
  mode: 'Preferred' | 'Required' | 'Disabled';
  kubeDNSOverrides: LocalDNSOverride[];
  vnetDNSOverrides: LocalDNSOverride[];
}

export interface AKSNodeClassSecurity {
  encryptionAtHost?: boolean;
  trustedLaunch?: { secureBoot?: boolean; vtpm?: boolean };
}

/**
 * spec.versions (the Azure provider's proposal for node image and Kubernetes version controls): the
 * Kubernetes version and node image version the class's nodes run, instead of the control plane's and
 * the newest published. nodeImageVersion is valid only beside kubernetesVersion, and only a version the
 * class's status shows (status.latestImageVersion, status.images, status.recentlyUsedVersions).
 */
export interface AKSNodeClassVersions {
  /** Full major.minor.patch ("1.33.2"): within the control plane's skew, never below the effective one. */
  kubernetesVersion?: string;
  /** A gallery image version ("202612.06.0") the status shows. */
  nodeImageVersion?: string;
}

export interface AKSNodeClassSpec {
  imageFamily?: ImageFamily;
  /**
   * @deprecated Not part of the CRD schema: the API server prunes it. Resolved images are in `status.images`.
   */
  imageVersion?: string;
  /** 30–2048; the server defaults it to 128. */
  osDiskSizeGB?: number;
  /** ARM subnet ID (/subscriptions/…/resourceGroups/…/providers/Microsoft.Network/virtualNetworks/…/subnets/…). */
  vnetSubnetID?: string;
  tags?: Record<string, string>;
  kubelet?: KubeletConfiguration;
  /** 10–250. */
  maxPods?: number;
  fipsMode?: 'FIPS' | 'Disabled';
  gpu?: { mode?: 'Driver' | 'None' };
  artifactStreaming?: { enabled?: boolean };
  linuxOSConfig?: LinuxOSConfig;
  localDNS?: LocalDNS;
  security?: AKSNodeClassSecurity;
  versions?: AKSNodeClassVersions;
}

export interface AKSNodeClassImage {
  id: string;
  requirements: { key: string; operator: string; values?: string[] }[];
}

/** An image and Kubernetes version pair the class used, most recent first in status.recentlyUsedVersions. */
export interface RecentlyUsedVersion {
  /** When the class last switched to this pair (RFC 3339). */
  timestampUsed?: string;
  imageVersion: string;
  kubernetesVersion: string;
}

/**
 * A node image version a failed canary rollout rejected (ours, not the proposal's): written by the
 * rollout, kept by the status step, never chosen as the class's image while listed.
 */
export interface RolledBackVersion {
  imageVersion: string;
  /** Rejected only with this Kubernetes version; every Kubernetes version when unset. */
  kubernetesVersion?: string;
  /** Why the rollout rejected it, for people. */
  reason: string;
  /** The NodePool whose canary failed. */
  nodePool: string;
  /** When it was rolled back (RFC 3339). */
  timestamp: string;
}

export interface AKSNodeClassStatus {
  conditions?: Condition[];
  /** The effective images: one per architecture and Hyper-V generation, preferred first. */
  images?: AKSNodeClassImage[];
  /** The effective Kubernetes version nodes are launched with. */
  kubernetesVersion?: string;
  /** The cluster's Kubernetes version, as the app's settings name it. */
  controlPlaneKubernetesVersion?: string;
  /** The newest version the class's gallery image definitions publish, pinned or not. */
  latestImageVersion?: string;
  /** The effective pairs the class used, most recent first, one entry per pair, bounded. */
  recentlyUsedVersions?: RecentlyUsedVersion[];
  /** Versions a failed rollout rejected; the status step keeps them, bounded. */
  rolledBackVersions?: RolledBackVersion[];
  localDNSState?: 'Enabled' | 'Disabled';
}

export interface AKSNodeClass {
  apiVersion: 'karpenter.azure.com/v1beta1' | 'karpenter.azure.com/v1alpha2';
  kind: 'AKSNodeClass';
  metadata: ObjectMeta;
  spec: AKSNodeClassSpec;
  status?: AKSNodeClassStatus;
}
