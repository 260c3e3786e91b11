// The seam between the NodeClaim lifecycle and the cloud, as Karpenter's cloudprovider.CloudProvider is:
// the lifecycle (conditions, finalizers, monitors, events) asks for the machine behind a NodeClaim to be
// created, read, listed, deleted or rebooted, and sorts what went wrong by the typed errors below, never
// by ARM's codes. Everything Azure-specific (offering choice, node image, bootstrap token, the VM PUT,
// adopting a VM an earlier delivery created) lives behind it, in azure.ts.
//
// Launch is two calls where upstream's Create is one: `plan` reads and chooses, the lifecycle then writes
// its resourceVersion-guarded claim on the NodeClaim (finalizer, the offering's labels), and only then does
// `create` send the VM PUT, so that concurrent deliveries of one event decide once and no VM is created
// for a NodeClaim that could not carry its finalizer. As upstream's Create, `create` returns the node's
// capacity and allocatable; `pollLaunch` answers a failure already classified. What else the lifecycle
// needs of the cloud (prices, the offerings to avoid, node overlays, node images) are capability methods
// here, so no Azure adapter is among the lifecycle's dependencies (an ESLint rule keeps it so). So are the
// answers about the provider's own objects: its instances' names and ownership, orphans, what a spot
// preemption leaves avoided, a reservation's seats, and the AKSNodeClass's status and validity, which in
// Karpenter are the provider's too (its NodeClass controllers).
import type { CapacityReservationRecord } from './azure/decisions/capacity-reservations.js';
import type { NodeOsSku } from './azure/decisions/node-image.js';
import type { EventReason } from '../decisions/event-reasons.js';
import type { OverlayEvaluation } from '../decisions/node-overlays.js';
import type { ImageLookup, ResolvedImage } from './azure/decisions/node-image-versions.js';
import type { NodeClassStatusFields } from './azure/decisions/nodeclass-status.js';
import type { OfferingBlock } from '../decisions/offering-blocks.js';
import type { CapacityOptions, Offering } from '../decisions/offerings.js';
import type { PriceBook } from '../decisions/prices/price-book.js';
import type { AKSNodeClass, NodeClaim, NodePool } from '../models/index.js';
import type { Node, ResourceList } from '../models/kube.js';
import type { ProviderDrift } from '../decisions/drift.js';
import type { NodeOverlay } from '../models/node-overlay.js';

/** The machine behind a NodeClaim, as the lifecycle reads it. */
export interface Instance {
  /** The VM's name (instanceNameFor). */
  name: string;
  providerID: string;
  /** ARM's provisioningState: Creating, Succeeded, Failed, Deleting, … */
  state: string | undefined;
  /** The tags launch wrote, which say whose the VM is (instanceOwnership). */
  tags: Readonly<Record<string, string>>;
  createdAt?: Date;
  /** The image it boots: a gallery image ID, or publisher:offer:sku:version for a marketplace image. */
  imageID?: string;
  vmSize?: string;
  /** Azure's zone number ("1"), absent for a VM outside any zone. */
  zoneNumber?: string;
  spot: boolean;
  /** The Capacity Reservation Group the VM was placed in, if any. */
  reservationGroupId?: string;
}

/** The classes a launch resolved for its NodeClaim. */
export interface LaunchClasses {
  nodeClass: AKSNodeClass;
  nodePool: NodePool | undefined;
}

/**
 * What `create` will do: adopt the VM that already exists under the NodeClaim's VM name (an earlier
 * delivery created it), or create one on the chosen offering and image.
 */
export type LaunchPlan =
  | { kind: 'adopt'; vmName: string; offering: Offering }
  | {
      kind: 'create';
      vmName: string;
      offering: Offering;
      image: { imageId: string; osSku: NodeOsSku };
      /** The reservation groups as read for the choice, against which launch confirms a reserved slot. */
      reservations: readonly CapacityReservationRecord[];
    };

/** What the node of a launch reports, as Karpenter's Create fills them on the NodeClaim's status. */
export interface NodeResources {
  capacity: ResourceList;
  allocatable: ResourceList;
}

export interface Launched {
  vmName: string;
  providerID: string;
  offering: Offering;
  /** The capacity and allocatable the NodeClaim's status records once the VM is up. */
  resources: NodeResources;
  /** False when the VM was adopted, not created by this call. */
  created: boolean;
  /** The creation's operation, serialized so the launch monitor can poll it from any process. */
  pollerState?: string;
}

/** A failure as the cloud reported it: its code and status when it had them, and its message. */
export interface CloudFailureInfo {
  code?: string;
  statusCode?: number;
  message: string;
  retryAfterSeconds?: number;
}

/**
 * Why a launch failed, classified by the provider and plain data (it crosses durable activities): `reason`
 * is what the NodeClaim's Launched condition shows.
 */
export interface LaunchFailure {
  reason: EventReason;
  /** The cloud's own message, for the condition message and the Warning event. */
  message: string;
  /** The cloud's error code when one was found (ARM's "ZonalAllocationFailed"). */
  cloudCode?: string;
  /** The same request may simply be sent again later (throttling, server errors). */
  retryable: boolean;
  retryAfterSeconds?: number;
  /**
   * The provider's own note of the offerings to avoid after this failure (insufficient capacity, quota):
   * opaque to the lifecycle, which hands it back through rememberLaunchFailure.
   */
  unavailable?: unknown;
  /** Any NodeClaim would fail alike whatever its offering (a missing permission): it is kept, not replaced. */
  failsEveryLaunch?: boolean;
}

/** The failure for conditions, events and logs: the cloud's code (when one was found), then its message. */
export function describeLaunchFailure(failure: Pick<LaunchFailure, 'cloudCode' | 'message'>): string {
  return failure.cloudCode ? `${failure.cloudCode}: ${failure.message}` : failure.message;
}

/** The failure recorded when the launch has not finished by its deadline. */
export function launchTimeoutFailure(elapsedSeconds: number): LaunchFailure {
  return {
    reason: 'LaunchTimeout',
    message: `the VM was not provisioned within ${Math.round(elapsedSeconds)}s`,
    retryable: false,
  };
}

/** One poll of a VM's creation. */
export type CreationProgress =
  | {
      status: 'InProgress';
      pollerState?: string;
      retryAfterSeconds?: number;
      /** The fewest requests ARM said were left in a short throttling window (x-ms-ratelimit-remaining-resource). */
      rateLimitRemaining?: number;
    }
  | { status: 'Succeeded' }
  | { status: 'Failed'; error: CloudFailureInfo };

/** One poll of a launch: still running, launched, or failed as the provider classified the failure. */
export type LaunchProgress =
  | Extract<CreationProgress, { status: 'InProgress' }>
  | { status: 'Succeeded' }
  | { status: 'Failed'; failure: LaunchFailure };

/** A reboot accepted (to be polled), a VM that no longer exists, or a refusal that is not transient. */
export type RebootStart = { pollerState: string } | 'gone' | { failed: string };

/** One poll of a reboot. */
export type RebootProgress =
  | { status: 'InProgress'; pollerState: string; retryAfterSeconds?: number }
  | { status: 'Succeeded' }
  | { status: 'Failed'; error: CloudFailureInfo };

/** Why and until when offerings are remembered as unavailable. */
export interface UnavailableMark {
  reason: string;
  message: string;
  expiresAt: Date;
  /** The quota the blocks stand for ("family:<skuFamily>", "regional", "lowPriority"), if any. */
  quota?: string;
}

/** Whether an instance under a NodeClaim's instance name is that NodeClaim's, and if not, why. */
export type InstanceOwnership = { owned: true } | { owned: false; conflict: string };

/** An instance launched for this cluster whose NodeClaim no longer exists, old enough to collect. */
export interface OrphanInstance {
  vmName: string;
  nodeClaim: string;
}

/** The spot offering a preemption took back: its size and zone. */
export type PreemptedOffering = Pick<Offering, 'vmSize' | 'zone'>;

/** The reservations as a launch plan read them, against which the lifecycle takes a reserved slot. */
export type ReservationRecords = Extract<LaunchPlan, { kind: 'create' }>['reservations'];

/**
 * Every method throws TransientCloudError for throttling, server errors and unanswered requests, whatever
 * the cloud's own error was, so the lifecycle's retries (outage-retry.ts) recognise them by type.
 */
export interface CloudProvider {
  /**
   * Reads only: the VM that exists under the NodeClaim's VM name and is its own (adopt), or the cheapest
   * available offering and its node image (create). Throws InstanceNameConflictError,
   * InsufficientCapacityError, ImageNotResolvedError or AuthorizationError.
   */
  plan(nodeClaim: NodeClaim, classes: LaunchClasses): Promise<LaunchPlan>;
  /**
   * Creates the plan's VM with the NodeClaim's bootstrap token, returning once ARM accepted it (an
   * adopted VM is returned as it is). Create-only: a VM that appeared meanwhile is never updated but
   * reported as InstanceExistsError. Throws CreateError, AuthorizationError or TransientCloudError as
   * well. A reserved plan's slot is taken by the lifecycle before this is called: the provider writes no
   * Kubernetes object.
   */
  create(nodeClaim: NodeClaim, classes: LaunchClasses, plan: LaunchPlan): Promise<Launched>;
  /**
   * One request against a launch: its operation when there is one, else the VM itself. A failure comes
   * classified (capacity, quota, a missing permission, transient, …).
   */
  pollLaunch(vmName: string, pollerState?: string): Promise<LaunchProgress>;
  /** Classifies a failure as an earlier version's launch monitor recorded it (the cloud's own report). */
  launchFailureOf(reported: CloudFailureInfo): LaunchFailure;
  /**
   * Remembers what a launch failure says about offerings (the failed one and those like it are avoided
   * for a while; a refused reservation is read afresh), returning what was blocked, for the log.
   */
  rememberLaunchFailure(
    offering: Offering,
    failure: LaunchFailure,
  ): Promise<{ blocks: string[]; ttlSeconds: number } | undefined>;
  /** The capacity and allocatable of a node on `offering` launched with `nodeClass` (without: the size's). */
  resourcesOf(offering: Offering, nodeClass: AKSNodeClass | undefined): NodeResources;
  /**
   * The same for a launch whose monitor was started by an earlier version, from the sizing that version
   * recorded in the monitor's input (`recorded`, read by the provider that wrote it).
   */
  recordedResourcesOf(offering: Offering, recorded: object): NodeResources;
  get(vmName: string): Promise<Instance | undefined>;
  /** Every VM of the node resource group (garbage collection judges which are this cluster's). */
  list(): Promise<Instance[]>;
  /**
   * Starts a forced delete. Given the instance as just read rather than its name, a VM that was running
   * also gives its cores back to the quota memory, so sizes blocked for quota may be tried again.
   */
  delete(target: string | Instance): Promise<'Deleting' | 'Gone'>;
  reboot(vmName: string): Promise<RebootStart>;
  pollReboot(pollerState: string): Promise<RebootProgress>;
  /**
   * The offering an instance runs as: from the catalog, and with `withReservations` from the reserved
   * offerings too (a VM in a reservation group is then its reserved offering).
   */
  offeringOf(instance: Instance, options?: { withReservations?: boolean }): Promise<Offering | undefined>;
  /**
   * What provisioning and consolidation choose instance types from: the region's catalog offerings and
   * the reserved ones with a free slot, counting the claims of `nodeClaims` when the caller has the
   * cluster's (else of the NodeClaims labelled with a reservation, listed).
   */
  offerings(options?: { nodeClaims?: readonly NodeClaim[] }): Promise<Offering[]>;
  /** The region's current price book, the one launch orders offerings by: answered at once. */
  prices(): PriceBook;
  /** The offerings recent failures said to avoid, as blocks still in force. */
  unavailableOfferings(): Promise<OfferingBlock[]>;
  /** Remembers offerings as unavailable until the mark's expiry (a launch failure, a spot preemption). */
  markUnavailable(blocks: readonly OfferingBlock[], mark: UnavailableMark): Promise<void>;
  /** The next launch reads the capacity reservations afresh (a launch in one was refused). */
  forgetReservations(): void;
  /** What a node launched with `nodeClass` is sized with: max pods, OS disk, network plugin, overhead. */
  capacityOptions(nodeClass: AKSNodeClass): CapacityOptions;
  /** The labels a NodeClaim launched on `offering` carries (its instance type, zone, capacity type, …). */
  launchLabels(offering: Offering): Record<string, string>;
  /**
   * The NodeOverlays in force, evaluated against the region's catalog (undefined with the NodeOverlay
   * gate off or none defined). Without `nodePools` every NodePool is listed once an overlay is found.
   */
  nodeOverlays(nodePools?: readonly NodePool[]): Promise<OverlayEvaluation | undefined>;
  /** The given NodeOverlays evaluated against the region's catalog, for their status conditions. */
  evaluateNodeOverlays(
    overlays: readonly NodeOverlay[],
    nodePools: readonly NodePool[],
  ): Promise<OverlayEvaluation>;
  /**
   * Each of a NodeClass's image lookups with the image its newest published version is, or none, and
   * (when the provider lists them) every version the gallery publishes, which pins are checked against.
   */
  resolveImages(lookups: readonly ImageLookup[]): Promise<ResolvedImage[]>;
  /**
   * The status a NodeClass should have for the control plane's `kubernetesVersion`: its effective
   * Kubernetes version and images (pinned by spec.versions or the newest no rollout rejected), the
   * versions it used, and its readiness conditions, as Karpenter's provider reconciles its NodeClass's
   * status.
   */
  nodeClassStatus(nodeClass: AKSNodeClass, kubernetesVersion: string): Promise<NodeClassStatusFields>;
  /** Why the NodeClass cannot launch a node (a field that does not parse), or undefined when it can. */
  nodeClassInvalidity(nodeClass: AKSNodeClass): string | undefined;
  /**
   * Karpenter's IsDrifted: whether a launched NodeClaim is drifted by something only the provider knows
   * (here its node image or Kubernetes version against the class's effective ones), asked after core's
   * hash and requirement checks. `node` is its Node, when the caller has it.
   */
  isDrifted(nodeClaim: NodeClaim, nodeClass: AKSNodeClass, node?: Node): ProviderDrift | undefined;
  /**
   * What a failed rollout of a NodePool can undo by itself: the node image version its drifted nodes
   * were moving to, when that is all they drifted by (the class then rejects the version and falls back).
   * Undefined for any other change, which only the user can revert.
   */
  rollbackOf(
    nodeClaims: readonly NodeClaim[],
    nodeClass: AKSNodeClass | undefined,
  ): { imageVersion: string } | undefined;
  /** How many of `nodeClaims` still run a rolled-back `imageVersion` (a rollback ends at none). */
  nodeClaimsOnImageVersion(nodeClaims: readonly NodeClaim[], imageVersion: string): number;
  /** The name of the instance a NodeClaim's launch creates (deterministic: a retried launch finds it). */
  instanceNameFor(nodeClaimName: string): string;
  /** The instance name a provider ID names; undefined for one that is not this provider's instance. */
  instanceNameOfProviderId(providerID: string): string | undefined;
  /**
   * The NodeClaim name an instance name gives back, when the name was derived from it unchanged (else
   * undefined: the caller looks the NodeClaim up by provider ID).
   */
  nodeClaimNameOfProviderId(providerID: string): string | undefined;
  /** Whether `instance` is `nodeClaimName`'s (its tags name this cluster and that NodeClaim). */
  instanceOwnership(instance: Instance, nodeClaimName: string): InstanceOwnership;
  /**
   * The instances of `instances` launched for this cluster whose NodeClaim is not among `knownNodeClaims`,
   * not being deleted, and created at least `graceMs` before `now`.
   */
  orphanInstances(
    instances: readonly Instance[],
    options: { knownNodeClaims: ReadonlySet<string>; now: Date; graceMs: number },
  ): OrphanInstance[];
  /**
   * Remembers a spot preemption (the instance `vmName` of `preempted`): the offering is avoided for a
   * while. Returns how long, for the log.
   */
  rememberPreemption(preempted: PreemptedOffering, vmName: string): Promise<{ ttlSeconds: number }>;
  /**
   * Whether `nodeClaimName` comes early enough among the claimants of `reservationId` (the cluster's
   * NodeClaims labelled with a reservation, as just listed) for a slot of the reservation as read.
   */
  holdsReservationSeat(
    records: ReservationRecords,
    reservationId: string,
    claimants: readonly NodeClaim[],
    nodeClaimName: string,
  ): boolean;
  /**
   * The second check, once the NodeClaim carries its commitment at `resourceVersion`: whether it still
   * holds a slot among the claimants as listed again, ordered by the API server's write order.
   */
  holdsCommittedSeat(
    records: ReservationRecords,
    reservationId: string,
    claimants: readonly NodeClaim[],
    nodeClaimName: string,
    resourceVersion: string,
  ): boolean;
}

/** Base of the cloud provider's typed errors: `reason` is what the NodeClaim's condition shows. */
export abstract class CloudProviderError extends Error {
  abstract readonly reason: string;
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A typed error that carries nothing but its message and the reason it stands for. */
function reasonError<Reason extends string>(reason: Reason) {
  return class extends CloudProviderError {
    readonly reason = reason;
  };
}

/** No offering satisfies the NodeClaim (all are unavailable, or none fits its requirements). */
export class InsufficientCapacityError extends reasonError('InsufficientCapacity') {}
/** A VM with the NodeClaim's VM name exists whose tags name another cluster or NodeClaim. */
export class InstanceNameConflictError extends reasonError('VMNameConflict') {}
/** No node image resolves for the chosen offering. */
export class ImageNotResolvedError extends reasonError('ImageNotResolved') {}
/** The VM appeared between the plan's read and the create-only PUT: adopt it from a fresh plan. */
export class InstanceExistsError extends reasonError('InstanceExists') {}
/** Another launch took the reservation slot the plan chose: plan again, where it counts as taken. */
export class ReservationContendedError extends reasonError('ReservationContended') {}

/** Azure refused the request, as classified (cloudprovider/azure/decisions/launch-errors.ts); the failure says why. */
abstract class FailureError extends CloudProviderError {
  constructor(readonly failure: LaunchFailure) {
    super(failure.message);
  }
  get reason(): string {
    return this.failure.reason;
  }
}

/** Azure refused a request for want of a permission: the same request would be refused again. */
export class AuthorizationError extends FailureError {}
/** Azure refused the VM for a reason a new choice of offering may avoid (capacity, quota, …). */
export class CreateError extends FailureError {}

/** Throttling, server errors and unanswered requests: the same call may be made again later. */
export class TransientCloudError extends reasonError('Transient') {
  constructor(
    message: string,
    readonly retryAfterSeconds?: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

const instanceOf =
  <T>(type: abstract new (...args: never[]) => T) =>
  (error: unknown): error is T =>
    error instanceof type;

export const isInsufficientCapacityError = instanceOf(InsufficientCapacityError);
export const isInstanceNameConflictError = instanceOf(InstanceNameConflictError);
export const isImageNotResolvedError = instanceOf(ImageNotResolvedError);
export const isInstanceExistsError = instanceOf(InstanceExistsError);
export const isReservationContendedError = instanceOf(ReservationContendedError);
export const isAuthorizationError = instanceOf(AuthorizationError);
export const isCreateError = instanceOf(CreateError);
export const isTransientCloudError = instanceOf(TransientCloudError);
