// The emulator's test controls, shared by code (`emulator.controls`) and the HTTP admin API.

import type { AuthorizationSettings } from './authorization.js';
import type { CapacityReservationGroupInput } from './capacity-reservations.js';
import type { FaultRule, FaultRuleInput } from './faults.js';
import type {
  NodeImageBehavior,
  NodeImageVersion,
  NodeImageVersionInput,
  UnpublishOptions,
} from './gallery-images.js';
import type { Latencies } from './latencies.js';
import type { PlacementScoreOptions } from './placement-scores.js';
import type { QuotaLimitInput, Usage } from './quotas.js';
import type { RequestFilter, RequestLogEntry } from './request-log.js';
import type { ThrottlingOptions } from './throttling.js';
import type { PreemptionNotice } from './vm-power.js';
import type { EmulatedVm, VmChangeListener } from './vm-store.js';

export interface EmulatorControls {
  /** Adds a fault rule; it fires `times` times (or until cleared). */
  injectFault(rule: FaultRuleInput): FaultRule;
  removeFault(id: string): boolean;
  clearFaults(): void;
  faults(): FaultRule[];
  /** Merges a change into the latencies and returns the result (overrides are replaced if given). */
  setLatencies(change: Partial<Latencies>): Latencies;
  latencies(): Latencies;
  /**
   * Keeps VMs whose name matches the glob Creating (or Updating) past their latency, whatever the
   * machine's speed, until `releaseProvisioning` with the same glob; then their creations end.
   */
  holdProvisioning(vmName: string): void;
  releaseProvisioning(vmName: string): void;
  /** Reconfigures the token buckets (and refills them). */
  setThrottling(options: ThrottlingOptions): void;
  /** Replaces the caller's role assignments (undefined: authorize nothing, allow everything). */
  setAuthorization(settings: AuthorizationSettings | undefined): void;
  authorization(): AuthorizationSettings | undefined;
  requests(filter?: RequestFilter): RequestLogEntry[];
  vms(): EmulatedVm[];
  /**
   * Preempts a spot VM as Azure does: the eviction notice now (the node agent sees it), the eviction
   * `noticeMs` later (default 30 s), per the VM's evictionPolicy.
   */
  preemptVm(vmName: string, options?: { noticeMs?: number }): PreemptionNotice;
  /** Called when a VM starts creating, succeeds, fails, starts deleting, or is gone. Returns an unsubscribe. */
  onVmChange(listener: VmChangeListener): () => void;
  /** Creates or replaces a Capacity Reservation Group with its reservations (capacity-reservations.ts). */
  defineCapacityReservationGroup(group: CapacityReservationGroupInput): void;
  /**
   * Sets a vCPU quota limit (quotas.ts): `name` is `cores`, `lowPriorityCores`, `virtualMachines` (reported,
   * not enforced) or a catalog family (`standardDSv5Family`); without `location` / `subscriptionId` it applies
   * to every one. Throws for an unknown name or a limit that is not a whole number ≥ 0.
   */
  setQuotaLimit(input: QuotaLimitInput): void;
  /**
   * The usages API's items for `location` (fault rules included); without `subscriptionId` the VMs of every
   * subscription count, which is the API's answer when the emulator serves one subscription.
   */
  quotaUsages(location: string, subscriptionId?: string): Usage[];
  /**
   * Merges a change into the placement score model (lag, error rate, seed), which the spot and the regular
   * API share, and returns the result.
   */
  setPlacementScoreOptions(change: Partial<PlacementScoreOptions>): PlacementScoreOptions;
  placementScoreOptions(): PlacementScoreOptions;
  /**
   * Whether the regular (on-demand) placement scores API answers: Azure enables it only for subscriptions
   * Microsoft approved; disabled, it is refused with 403 (placement-scores.ts). Enabled by default.
   */
  setRegularPlacementScoresEnabled(enabled: boolean): void;
  regularPlacementScoresEnabled(): boolean;
  /**
   * Publishes a node image version for every definition of every community gallery at once, as AKS does
   * weekly (gallery-images.ts): the versions list and the VM PUT's image check see it at once. Without a
   * `publishedDate` it is the newest; without a `behavior`, healthy. Throws for a malformed version.
   */
  publishNodeImageVersion(input: NodeImageVersionInput): NodeImageVersion;
  /**
   * Withdraws a version: no longer listed, a VM PUT naming it is refused (VMs booted from it keep its
   * behaviour). With `excludeFromLatest` it stays listed and bootable, marked excludeFromLatest. Throws for
   * a version never published.
   */
  unpublishNodeImageVersion(version: string, options?: UnpublishOptions): NodeImageVersion;
  /** How VMs booted from `version` behave from now on (the kubelet simulator reads it at each boot). */
  setNodeImageBehavior(version: string, behavior: NodeImageBehavior): NodeImageVersion;
  /** Every node image version known, withdrawn ones included, oldest first. */
  nodeImageVersions(): NodeImageVersion[];
  /** The behaviour of the version a communityGalleryImageId names; `healthy` for anything else. */
  nodeImageBehavior(communityGalleryImageId: string | undefined): NodeImageBehavior;
  /**
   * Forgets VMs, reservation groups, operations, faults (and their history), holds, the request log and
   * bucket levels; restores the initial latencies and throttling, the default quota limits, the default
   * placement score options, the regular placement scores API (enabled) and the node image versions
   * published at start (healthy).
   */
  reset(): void;
}
