// karpenter.azure.com AKSNodeClass (v1beta1 stored; v1alpha2 served), limited to the fields this project uses.
import type { Condition, ObjectMeta } from './kube.js';

export const AKS_GROUP = 'karpenter.azure.com';
export const AKS_STORAGE_VERSION = 'v1beta1';

export type ImageFamily = 'Ubuntu' | 'Ubuntu2204' | 'Ubuntu2404' | 'AzureLinux';

export interface KubeletConfiguration {
  cpuManagerPolicy?: string;
  cpuCFSQuota?: boolean;
  cpuCFSQuotaPeriod?: string;
  imageGCHighThresholdPercent?: number;
  imageGCLowThresholdPercent?: number;
  topologyManagerPolicy?: string;
  allowedUnsafeSysctls?: string[];
  containerLogMaxSize?: string;
  containerLogMaxFiles?: number;
  podPidsLimit?: number;
  maxPods?: number;
}

export interface AKSNodeClass {
  apiVersion: 'karpenter.azure.com/v1beta1' | 'karpenter.azure.com/v1alpha2';
  kind: 'AKSNodeClass';
  metadata: ObjectMeta;
  spec: {
    imageFamily?: ImageFamily;
    imageVersion?: string;
    osDiskSizeGB?: number;
    vnetSubnetID?: string;
    tags?: Record<string, string>;
    kubelet?: KubeletConfiguration;
    maxPods?: number;
  };
  status?: { conditions?: Condition[] };
}
