// An in-memory CloudProvider for unit tests of lifecycle phases: instances by VM name, the offering a
// plan chooses set by the test, and typed errors a test queues for the next call of a method, so a phase
// can be driven through every answer the seam gives (shared/cloudprovider/types.ts) without ARM. It keeps
// the contracts the lifecycle relies on: a plan adopts the VM that exists under the NodeClaim's VM name
// when its tags say it is this NodeClaim's, refuses one that is someone else's, and a create is
// create-only. Which offering Azure's side would choose, and how ARM answers, are tested against the
// emulator (test/integration/launch*.test.ts). Its capabilities (prices, the unavailable offerings, node
// overlays, capacity options, launch labels) answer as Azure's would from the parts a test sets.
import type { UnavailableOffering } from '../../shared/azure/unavailable-offerings.js';
import { recordedCapacityOptions } from '../../shared/cloudprovider/azure.js';
import { catalogOfferings } from '../../shared/cloudprovider/catalog-offerings.js';
import { lifecycleAnswers } from '../../shared/cloudprovider/lifecycle-answers.js';
import { currentNodeOverlays, evaluateOverlays } from '../../shared/cloudprovider/node-overlays.js';
import type { CloudProviderParts } from '../../shared/cloudprovider/parts.js';
import {
  describeLaunchFailure,
  InstanceNameConflictError,
  InsufficientCapacityError,
  type CloudProvider,
  type CloudFailureInfo,
  type Instance,
  type LaunchFailure,
  type LaunchProgress,
  type LaunchPlan,
  type Launched,
  type NodeResources,
  type RebootProgress,
  type RebootStart,
  type UnavailableMark,
} from '../../shared/cloudprovider/types.js';
import { capacityOptions, launchLabels, offeringOfInstance } from '../../shared/cloudprovider/vm-body.js';
import type { OverlayEvaluation } from '../../shared/decisions/node-overlays.js';
import type { ImageLookup } from '../../shared/cloudprovider/azure/decisions/nodeclass-status.js';
import { blockKey, type OfferingBlock } from '../../shared/decisions/offering-blocks.js';
import { rememberFailure } from '../../shared/cloudprovider/azure/decisions/failure-memory.js';
import { capacityFor, type CapacityOptions, type Offering } from '../../shared/decisions/offerings.js';
import {
  classifyLaunchError,
  isFailureMemory,
} from '../../shared/cloudprovider/azure/decisions/launch-errors.js';
import { staticPriceBook, type PriceBook } from '../../shared/decisions/prices/price-book.js';
import type { AKSNodeClass, NodePool } from '../../shared/models/index.js';
import type { NodeOverlay } from '../../shared/models/node-overlay.js';
import { providerIdFor, VmTags, vmNameFor } from '../../shared/cloudprovider/azure/decisions/vm-spec.js';
import { vmOwnership } from '../../shared/cloudprovider/azure/decisions/vm-ownership.js';

type Method = 'plan' | 'create' | 'get' | 'delete' | 'reboot' | 'markUnavailable';

/** What the fake answers its capabilities from: the settings, the SKU catalog, the cluster's clients. */
export type FakeCloudParts = Pick<CloudProviderParts, 'settings' | 'skus' | 'kube' | 'objects' | 'now'>;

export class FakeCloudProvider implements CloudProvider {
  /** VMs by name. */
  readonly instances = new Map<string, Instance>();
  /** What a plan for a new VM chooses; none means no offering fits (InsufficientCapacityError). */
  offering: Offering | undefined;
  /** Every create that sent a VM, and every delete, in order. */
  readonly created: string[] = [];
  readonly deleted: string[] = [];
  readonly rebooted: string[] = [];
  /** Answers of pollLaunch by VM name; InProgress when none is set. */
  readonly creations = new Map<string, LaunchProgress>();
  /** Answers of pollReboot by poller state; Succeeded when none is set. */
  readonly reboots = new Map<string, RebootProgress>();
  /** Every failure rememberLaunchFailure was told of, with its offering, in order. */
  readonly rememberedFailures: { offering: Offering; failure: LaunchFailure }[] = [];
  /** The offerings held unavailable (`markUnavailable` adds; `unavailableOfferings` answers the unexpired). */
  readonly unavailable: UnavailableOffering[] = [];
  /** The times `forgetReservations` was called. */
  reservationsForgotten = 0;
  /** What `resolveImages` answers: the image ID by `gallery/definition`; none resolves unless set. */
  readonly images = new Map<string, string>();
  private readonly failures = new Map<Method, Error[]>();

  /** A test may replace the parts (settings with a feature gate on, Kubernetes clients with overlays). */
  constructor(public parts: FakeCloudParts) {}

  /** The answers about Azure's own objects, as the Azure provider gives them (lifecycle-answers.ts). */
  private readonly answers = lifecycleAnswers(() => this.clusterName, {
    resolveImages: (lookups) => this.resolveImages(lookups),
    markUnavailable: (blocks, mark) => this.markUnavailable(blocks, mark),
    now: () => this.parts.now(),
  });
  readonly nodeClassStatus = this.answers.nodeClassStatus;
  readonly nodeClassInvalidity = this.answers.nodeClassInvalidity;
  readonly isDrifted = this.answers.isDrifted;
  readonly rollbackOf = this.answers.rollbackOf;
  readonly nodeClaimsOnImageVersion = this.answers.nodeClaimsOnImageVersion;
  readonly instanceNameFor = this.answers.instanceNameFor;
  readonly instanceNameOfProviderId = this.answers.instanceNameOfProviderId;
  readonly nodeClaimNameOfProviderId = this.answers.nodeClaimNameOfProviderId;
  readonly instanceOwnership = this.answers.instanceOwnership;
  readonly orphanInstances = this.answers.orphanInstances;
  readonly rememberPreemption = this.answers.rememberPreemption;
  readonly holdsReservationSeat = this.answers.holdsReservationSeat;
  readonly holdsCommittedSeat = this.answers.holdsCommittedSeat;

  private get clusterName(): string {
    return this.parts.settings.clusterName;
  }

  /** The region's catalog, where an instance's offering is looked up (the fake's SKUs). */
  private catalog(): Promise<Offering[]> {
    return catalogOfferings(this.parts);
  }

  /** The next call of `method` throws `error` (several queue up, one per call). */
  failNext(method: Method, error: Error): void {
    this.failures.set(method, [...(this.failures.get(method) ?? []), error]);
  }

  /** A VM as launch tags it for `nodeClaimName` (owned unless the test overrides the tags). */
  seedInstance(nodeClaimName: string, instance: Partial<Instance> = {}): Instance {
    const name = vmNameFor(nodeClaimName);
    const seeded: Instance = {
      name,
      providerID: this.providerIdOf(name),
      state: 'Succeeded',
      tags: { [VmTags.cluster]: this.clusterName, [VmTags.nodeClaim]: nodeClaimName },
      spot: false,
      ...instance,
    };
    this.instances.set(name, seeded);
    return seeded;
  }

  async plan(nodeClaim: Parameters<CloudProvider['plan']>[0]): Promise<LaunchPlan> {
    this.throwQueued('plan');
    const vmName = vmNameFor(nodeClaim.metadata.name);
    const existing = this.instances.get(vmName);
    if (existing) {
      const ownership = vmOwnership(existing, {
        clusterName: this.clusterName,
        nodeClaimName: nodeClaim.metadata.name,
      });
      if (!ownership.owned) throw new InstanceNameConflictError(ownership.conflict);
      const offering = offeringOfInstance(existing, await this.catalog());
      if (!offering)
        throw new Error(`VM ${vmName} exists with a size or zone that is not in the SKU catalog`);
      return { kind: 'adopt', vmName, offering };
    }
    if (!this.offering) throw new InsufficientCapacityError('no offering is set in the fake cloud provider');
    return {
      kind: 'create',
      vmName,
      offering: this.offering,
      image: { imageId: 'fake-image', osSku: 'Ubuntu2204' },
      reservations: [],
    };
  }

  async create(
    nodeClaim: Parameters<CloudProvider['create']>[0],
    classes: Parameters<CloudProvider['create']>[1],
    plan: LaunchPlan,
  ): Promise<Launched> {
    this.throwQueued('create');
    const { vmName, offering } = plan;
    const providerID = this.providerIdOf(vmName);
    const resources = this.resourcesOf(offering, classes.nodeClass);
    if (plan.kind === 'adopt') return { vmName, providerID, offering, resources, created: false };
    if (this.instances.has(vmName)) throw new Error(`fake: VM ${vmName} exists; a create-only PUT gets 412`);
    this.instances.set(vmName, {
      name: vmName,
      providerID,
      state: 'Creating',
      tags: { [VmTags.cluster]: this.clusterName, [VmTags.nodeClaim]: nodeClaim.metadata.name },
      vmSize: offering.vmSize,
      ...(offering.zoneNumber ? { zoneNumber: offering.zoneNumber } : {}),
      spot: offering.capacityType === 'spot',
    });
    this.created.push(vmName);
    return { vmName, providerID, offering, resources, created: true, pollerState: `poller-${vmName}` };
  }

  async pollLaunch(vmName: string): Promise<LaunchProgress> {
    return this.creations.get(vmName) ?? { status: 'InProgress' };
  }

  /** Azure's classification: the fake answers as the provider would. */
  launchFailureOf(reported: CloudFailureInfo): LaunchFailure {
    return classifyLaunchError(reported);
  }

  /** Recorded, and the failure's blocks (as Azure's memory says) kept in `unavailable`. */
  async rememberLaunchFailure(
    offering: Offering,
    failure: LaunchFailure,
  ): Promise<{ blocks: string[]; ttlSeconds: number } | undefined> {
    this.rememberedFailures.push({ offering, failure });
    if (offering.reservationId !== undefined) this.forgetReservations();
    if (!isFailureMemory(failure.unavailable)) return undefined;
    const remembered = rememberFailure(failure.unavailable, offering);
    const expiresAt = new Date(this.parts.now().getTime() + remembered.ttlSeconds * 1000);
    await this.markUnavailable(remembered.blocks, {
      reason: failure.reason,
      message: describeLaunchFailure(failure),
      expiresAt,
      ...(remembered.quota ? { quota: remembered.quota } : {}),
    });
    return { blocks: remembered.blocks.map(blockKey), ttlSeconds: remembered.ttlSeconds };
  }

  resourcesOf(offering: Offering, nodeClass: AKSNodeClass | undefined): NodeResources {
    return capacityFor(offering, nodeClass ? this.capacityOptions(nodeClass) : {});
  }

  recordedResourcesOf(offering: Offering, recorded: object): NodeResources {
    return capacityFor(offering, recordedCapacityOptions(recorded));
  }

  async get(vmName: string): Promise<Instance | undefined> {
    this.throwQueued('get');
    return this.instances.get(vmName);
  }

  async list(): Promise<Instance[]> {
    return [...this.instances.values()];
  }

  async delete(target: string | Instance): Promise<'Deleting' | 'Gone'> {
    this.throwQueued('delete');
    const name = typeof target === 'string' ? target : target.name;
    const instance = this.instances.get(name);
    if (!instance) return 'Gone';
    this.deleted.push(name);
    this.instances.set(name, { ...instance, state: 'Deleting' });
    return 'Deleting';
  }

  async reboot(vmName: string): Promise<RebootStart> {
    this.throwQueued('reboot');
    if (!this.instances.has(vmName)) return 'gone';
    this.rebooted.push(vmName);
    return { pollerState: `restart-${vmName}` };
  }

  async pollReboot(pollerState: string): Promise<RebootProgress> {
    return this.reboots.get(pollerState) ?? { status: 'Succeeded' };
  }

  async offeringOf(instance: Instance): Promise<Offering | undefined> {
    return offeringOfInstance(instance, await this.catalog());
  }

  /** The catalog: the fake has no Capacity Reservation Groups. */
  async offerings(): Promise<Offering[]> {
    return this.catalog();
  }

  /** The region's shipped price table, as the Retail Prices adapter answers until its first refresh. */
  prices(): PriceBook {
    return staticPriceBook(this.parts.settings.azure.location);
  }

  async unavailableOfferings(): Promise<OfferingBlock[]> {
    const at = this.parts.now();
    return this.unavailable.filter((u) => u.expiresAt > at).map((u) => u.block);
  }

  async markUnavailable(blocks: readonly OfferingBlock[], mark: UnavailableMark): Promise<void> {
    this.throwQueued('markUnavailable');
    for (const block of blocks) this.unavailable.push({ block, ...mark });
  }

  forgetReservations(): void {
    this.reservationsForgotten += 1;
  }

  capacityOptions(nodeClass: AKSNodeClass): CapacityOptions {
    return capacityOptions(this.parts.settings, nodeClass);
  }

  launchLabels(offering: Offering): Record<string, string> {
    return launchLabels(offering);
  }

  nodeOverlays(nodePools?: readonly NodePool[]): Promise<OverlayEvaluation | undefined> {
    return currentNodeOverlays(this.parts, nodePools);
  }

  evaluateNodeOverlays(
    overlays: readonly NodeOverlay[],
    nodePools: readonly NodePool[],
  ): Promise<OverlayEvaluation> {
    return evaluateOverlays(this.parts, overlays, nodePools);
  }

  async resolveImages(
    lookups: readonly ImageLookup[],
  ): Promise<Array<{ lookup: ImageLookup; imageId: string | undefined }>> {
    return lookups.map((lookup) => ({
      lookup,
      imageId: this.images.get(`${lookup.gallery}/${lookup.definition}`),
    }));
  }

  private providerIdOf(vmName: string): string {
    const { subscriptionId, resourceGroup } = this.parts.settings.azure;
    return providerIdFor({ subscriptionId, resourceGroup, vmName });
  }

  private throwQueued(method: Method): void {
    const queued = this.failures.get(method);
    const error = queued?.shift();
    if (error) throw error;
  }
}
