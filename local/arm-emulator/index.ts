// Public entry point of the ARM emulator for Microsoft.Compute.

export { startArmEmulator, type ArmEmulator, type ArmEmulatorOptions } from './server.js';
export type { EmulatorControls } from './controls.js';
export type {
  AsyncFaultEffect,
  FaultEffect,
  FaultMatch,
  FaultRule,
  FaultRuleInput,
  RequestErrorFaultEffect,
  SyncFaultEffect,
  ThrottleFaultEffect,
} from './faults.js';
export type { AllocationFailureCode } from './azure-messages.js';
export {
  communityGalleryImageIdOf,
  nodeImageBehaviors,
  parseCommunityGalleryImageId,
  type NodeImageBehavior,
  type NodeImageVersion,
  type NodeImageVersionInput,
  type UnpublishOptions,
} from './gallery-images.js';
export { defaultLatencies, type Latencies, type LatencyOverride } from './latencies.js';
export type { RequestFilter, RequestLogEntry } from './request-log.js';
export {
  defaultPlacementScoreOptions,
  maxDesiredLocations,
  maxDesiredSizes,
  type PlacementScore,
  type PlacementScoreOptions,
  type PlacementScoreValue,
  type PlacementScoresInput,
  type RegularPlacementScore,
  type RegularPlacementScoresResponse,
  type ScoredPriority,
  type SpotPlacementScoresInput,
  type SpotPlacementScoresResponse,
} from './placement-scores.js';
export { defaultQuotaLimits, familyLocalizedName, type QuotaLimitInput, type Usage } from './quotas.js';
export {
  capabilityValue,
  catalogLocations,
  skuCatalog,
  skuVcpus,
  type ResourceSku,
  type SkuCapability,
  type SkuRestriction,
} from './sku-catalog.js';
export {
  computePolicies,
  type RequestKind,
  type ThrottlePolicy,
  type ThrottlingOptions,
} from './throttling.js';
export { DEFAULT_PREEMPTION_NOTICE_MS, type PreemptionNotice } from './vm-power.js';
export type {
  EmulatedVm,
  ProvisioningState,
  VmChangeEvent,
  VmChangeListener,
  VmChangeType,
} from './vm-store.js';
