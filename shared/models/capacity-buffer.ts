// autoscaling.x-k8s.io CapacityBuffer as SIG Autoscaling's API defines it (kubernetes/autoscaler,
// cluster-autoscaler/apis/capacitybuffer/autoscaling.x-k8s.io/v1beta1/types.go): only the fields this app
// reads and writes, under their wire names. Karpenter consumes the same API (its copy in
// pkg/apis/autoscaling/v1beta1), and so does the Cluster Autoscaler.
import type { Condition, ObjectMeta, ResourceList } from './kube.js';

export const CAPACITY_BUFFER_GROUP = 'autoscaling.x-k8s.io';
export const CAPACITY_BUFFER_VERSION = 'v1beta1';

/** The default (and only) strategy: the buffer keeps capacity provisioned all the time. */
export const ACTIVE_CAPACITY_STRATEGY = 'buffer.x-k8s.io/active-capacity';

export interface LocalObjectRef {
  name: string;
}

export interface ScalableRef {
  /** "" (the core group) or "apps"; upstream Karpenter reads only apps. */
  apiGroup?: string;
  kind: string;
  name: string;
}

export interface CapacityBufferSpec {
  provisioningStrategy?: string;
  podTemplateRef?: LocalObjectRef;
  scalableRef?: ScalableRef;
  /** Buffer chunks (one pod of the template each). */
  replicas?: number;
  /** Of the scalable workload's replicas, rounded up, at least 1. */
  percentage?: number;
  /** The chunks' total requests stay within these. */
  limits?: ResourceList;
}

export interface CapacityBufferStatus {
  podTemplateRef?: LocalObjectRef;
  replicas?: number;
  podTemplateGeneration?: number;
  conditions?: Condition[];
  provisioningStrategy?: string;
}

export interface CapacityBuffer {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta & { namespace?: string };
  spec: CapacityBufferSpec;
  status?: CapacityBufferStatus;
}
