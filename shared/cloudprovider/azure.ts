// The cloud provider on Azure: a NodeClaim's machine is a VM in the node resource group, named after the
// NodeClaim and tagged with it. This is where a launch's Azure work happens (the cheapest available
// offering, spot where allowed, then zonal; the node image; the node's bootstrap token; the create-only
// VM PUT; adopting the VM an earlier delivery created) and where ARM's answers become the typed errors of
// types.ts. Exactly one PUT per VM succeeds, whatever ARM and the queue do: the PUT is create-only
// (`If-None-Match: *`), so a delivery whose PUT was throttled, failed or hung while another delivery
// created the VM (or whose own earlier answer was lost) gets 412, reported as InstanceExistsError, and
// adopts the VM that exists; it never PUTs again.
import type { VirtualMachine } from '@azure/arm-compute';
import { isRestError } from '@azure/core-rest-pipeline';
import {
  armErrorInfo,
  isAuthorizationRefusal,
  isTransient,
  type VirtualMachines,
} from '../azure/virtual-machines.js';
import { classifyLaunchError, isFailureMemory } from './azure/decisions/launch-errors.js';
import { rememberFailure } from './azure/decisions/failure-memory.js';
import { blockKey } from '../decisions/offering-blocks.js';
import { overlaidCapacity, overlaidOfferingPrice } from '../decisions/node-overlays.js';
import {
  candidateOfferings,
  capacityFor,
  selectOffering,
  type CapacityOptions,
  type Offering,
  type SelectOfferingInput,
} from '../decisions/offerings.js';
import { MAX_SIZES_PER_REQUEST, scoredPriorityOf, type PlacementScores } from '../azure/placement-scores.js';
import { isUnlikely, likelihoodRank, scoreOf } from './azure/decisions/placement-likelihood.js';
import { QuotaRoom } from './quota-room.js';
import { compareOfferingsByPrice } from '../decisions/prices/offering-order.js';
import { priceOf } from '../decisions/prices/price-book.js';
import { providerIdFor, vmNameFor } from './azure/decisions/vm-spec.js';
import { vmOwnership } from './azure/decisions/vm-ownership.js';
import { LAUNCH_ATTEMPT_ANNOTATION } from './azure/decisions/bootstrap-token.js';
import { createBootstrapToken, deleteBootstrapTokenSecret } from '../kube/bootstrap-tokens.js';
import type { AKSNodeClass, NodeClaim } from '../models/index.js';
import { catalogOfferings } from './catalog-offerings.js';
import { resolveNodeImage } from './node-image.js';
import { currentNodeOverlays, evaluateOverlays } from './node-overlays.js';
import type { CloudProviderParts } from './parts.js';
import { forgetQuotaFreedBy } from './quota-memory.js';
import { lifecycleAnswers } from './lifecycle-answers.js';
import { offeringsWithReservations } from './reserved-offerings.js';
import {
  AuthorizationError,
  CloudProviderError,
  CreateError,
  ImageNotResolvedError,
  InstanceExistsError,
  InstanceNameConflictError,
  InsufficientCapacityError,
  TransientCloudError,
  type CloudProvider,
  describeLaunchFailure,
  type CreationProgress,
  type Instance,
  type LaunchClasses,
  type LaunchPlan,
  type Launched,
  type LaunchProgress,
  type NodeResources,
  type RebootProgress,
  type RebootStart,
} from './types.js';
import { capacityOptions, launchLabels, offeringOfInstance, vmBody } from './vm-body.js';
import { communityGalleryImageId, newestImageVersion } from './azure/decisions/node-image.js';
import { provisioningFailureOf } from './azure/decisions/vm-provisioning-failure.js';

export function azureCloudProvider(parts: CloudProviderParts): CloudProvider {
  const { vms, settings } = parts;
  const quotaRoom = new QuotaRoom(parts.usages, () => parts.now().getTime());
  const providerIdOf = (vmName: string): string =>
    providerIdFor({
      subscriptionId: settings.azure.subscriptionId,
      resourceGroup: settings.azure.resourceGroup,
      vmName,
    });
  const instanceOf = (vm: VirtualMachine): Instance => toInstance(vm, providerIdOf(vm.name ?? ''));
  const resourcesOf = (offering: Offering, nodeClass: AKSNodeClass | undefined): NodeResources =>
    capacityFor(offering, nodeClass ? capacityOptions(settings, nodeClass) : {});

  async function plan(nodeClaim: NodeClaim, { nodePool, nodeClass }: LaunchClasses): Promise<LaunchPlan> {
    const name = nodeClaim.metadata.name;
    const vmName = vmNameFor(name);
    const existingVm = await vms.get(vmName);
    // Reserved offerings count every other NodeClaim in their reservation, not this one's own earlier claim.
    const { offerings, records } = await offeringsWithReservations(parts, { except: name });
    if (existingVm) {
      const ownership = vmOwnership(existingVm, { clusterName: settings.clusterName, nodeClaimName: name });
      if (!ownership.owned) throw new InstanceNameConflictError(ownership.conflict);
      const offering = offeringOfInstance(instanceOf(existingVm), offerings);
      if (!offering)
        throw new Error(`VM ${vmName} exists with a size or zone that is not in the SKU catalog`);
      return { kind: 'adopt', vmName, offering };
    }
    const unavailable = await parts.unavailable.listActive(parts.now());
    // The book provisioning priced this NodeClaim's instance types with, so both agree on the cheapest.
    const prices = parts.pricing.prices();
    const overlays = await currentNodeOverlays(parts);
    const pool = nodePool?.metadata.name ?? '';
    const price = (o: Offering) => {
      const listed = priceOf(prices, o.vmSize, o.capacityType);
      return overlays ? overlaidOfferingPrice(overlays, pool, o, listed) : listed;
    };
    await quotaRoom.refresh();
    const input: SelectOfferingInput = {
      requirements: nodeClaim.spec.requirements,
      ...(nodeClaim.spec.resources?.requests ? { requests: nodeClaim.spec.resources.requests } : {}),
      offerings,
      unavailable: unavailable.map((u) => u.block),
      // Quota is known before the PUT: sizes the quotas' room cannot hold are never tried.
      quota: quotaRoom.shortfalls(offerings, vmName),
      order: compareOfferingsByPrice(price),
      ...(overlays && { extendedCapacity: (o: Offering) => overlaidCapacity(overlays, pool, o.vmSize) }),
      ...capacityOptions(settings, nodeClass),
    };
    const scores = await placementScoresFor(candidateOfferings(input));
    // From the quota check to the hold nothing awaits, so concurrent launches each see the others' holds.
    const selection = selectOffering({
      ...input,
      quota: quotaRoom.shortfalls(offerings, vmName),
      ...(scores.size > 0 && {
        order: compareOfferingsByPrice(price, (o) => likelihoodRank(scoreOf(scores, o))),
        unlikely: (o: Offering) => isUnlikely(scoreOf(scores, o)),
      }),
    });
    if (!selection.offering) throw new InsufficientCapacityError(selection.reason);
    const offering = selection.offering;
    // Its cores count against the quota until a usage read counts the VM or its PUT made none.
    quotaRoom.hold(vmName, offering);
    const image = await resolveNodeImage(parts, nodeClass, offering);
    if ('reason' in image) {
      quotaRoom.release(vmName);
      throw new ImageNotResolvedError(image.message);
    }
    return { kind: 'create', vmName, offering, image, reservations: records };
  }

  /**
   * The zones' placement scores of the cheapest sizes a launch may choose, of the capacity type of its
   * cheapest choice (spot scores for spot, regular scores for on-demand); none for reserved capacity or
   * when Azure does not answer.
   */
  async function placementScoresFor(candidates: readonly Offering[]): Promise<PlacementScores> {
    const capacityType = candidates[0]?.capacityType;
    const priority = capacityType && scoredPriorityOf(capacityType);
    if (!priority) return new Map();
    const sizes = [
      ...new Set(
        candidates.filter((o) => o.capacityType === capacityType && o.zoneNumber).map((o) => o.vmSize),
      ),
    ].slice(0, MAX_SIZES_PER_REQUEST);
    return sizes.length === 0 ? new Map() : parts.placementScores.scores(priority, sizes);
  }

  async function create(
    nodeClaim: NodeClaim,
    { nodePool, nodeClass }: LaunchClasses,
    launch: LaunchPlan,
  ): Promise<Launched> {
    const { vmName, offering } = launch;
    const providerID = providerIdOf(vmName);
    const resources = resourcesOf(offering, nodeClass);
    if (launch.kind === 'adopt') return { vmName, providerID, offering, resources, created: false };
    const name = nodeClaim.metadata.name;
    // The node's own token, made before the VM that carries it, one per launch attempt.
    const { core } = await parts.kube();
    const bootstrap = await createBootstrapToken(
      core,
      {
        name,
        uid: nodeClaim.metadata.uid ?? '',
        ...(nodeClaim.metadata.annotations?.[LAUNCH_ATTEMPT_ANNOTATION] !== undefined && {
          attempt: nodeClaim.metadata.annotations[LAUNCH_ATTEMPT_ANNOTATION],
        }),
      },
      { now: parts.now(), registrationTimeoutMinutes: settings.lifecycle.registrationTimeoutMinutes },
    );
    // A token whose VM certainly was not made goes at once: a PUT refused, or one that found the VM made
    // by another delivery (that VM carries the other delivery's token, which stays). After a transient
    // failure the PUT may have been accepted after all, so that token stays: it expires with the
    // registration timeout and goes with the NodeClaim.
    const withdrawToken = (): Promise<unknown> =>
      deleteBootstrapTokenSecret(core, bootstrap.secretName).catch((error: unknown) =>
        parts.log.warn('could not delete the bootstrap token of a launch that made no VM', {
          nodeClaim: name,
          error: error instanceof Error ? error.message : String(error),
        }),
      );
    let put: Awaited<ReturnType<typeof vms.beginCreate>>;
    try {
      put = await vms.beginCreate(
        vmName,
        vmBody(settings, nodeClaim, offering, nodePool, nodeClass, {
          ...launch.image,
          bootstrapToken: bootstrap.token,
        }),
      );
    } catch (error) {
      const info = armErrorInfo(error);
      const failure = classifyLaunchError(info);
      if (failure.retryable || !isRestError(error)) {
        throw new TransientCloudError(
          `VM PUT for ${vmName} failed: ${info.message}`,
          failure.retryAfterSeconds,
        );
      }
      // ARM refused before creating anything; another offering would be refused alike.
      quotaRoom.release(vmName);
      await withdrawToken();
      if (failure.reason === 'AuthorizationFailed') throw new AuthorizationError(failure);
      throw new CreateError(failure);
    }
    if (!put.created) {
      quotaRoom.release(vmName);
      await withdrawToken();
      throw new InstanceExistsError(`VM ${vmName} was created meanwhile by another delivery`);
    }
    quotaRoom.created(vmName);
    return { vmName, providerID, offering, resources, created: true, pollerState: put.pollerState };
  }

  const resolveImages: CloudProvider['resolveImages'] = (lookups) =>
    Promise.all(
      lookups.map(async (lookup) => {
        const versions = await parts.images.list(lookup.gallery, lookup.definition);
        const version = newestImageVersion(versions);
        return {
          lookup,
          imageId: version ? communityGalleryImageId(lookup.gallery, lookup.definition, version) : undefined,
          versions,
        };
      }),
    );
  const markUnavailable: CloudProvider['markUnavailable'] = async (blocks, mark) => {
    for (const block of blocks) await parts.unavailable.mark({ block, ...mark });
  };

  return answeringTransientAsSeam({
    plan: (nodeClaim, classes) => refusingAuthorization(() => plan(nodeClaim, classes)),
    create: (nodeClaim, classes, launch) => refusingAuthorization(() => create(nodeClaim, classes, launch)),

    pollLaunch: (vmName, pollerState) => pollLaunch(parts, vmName, pollerState),

    launchFailureOf: (reported) => classifyLaunchError(reported),

    async rememberLaunchFailure(offering, failure) {
      // The group changed under the cached read: the next launch reads it afresh.
      if (offering.reservationId !== undefined) parts.reservations.invalidate();
      if (!isFailureMemory(failure.unavailable)) return undefined;
      const remembered = rememberFailure(failure.unavailable, offering);
      // Refused for quota all the same (another instance's launches, a limit lowered): read it afresh.
      if (remembered.quota) quotaRoom.refused();
      const expiresAt = new Date(parts.now().getTime() + remembered.ttlSeconds * 1000);
      for (const block of remembered.blocks) {
        await parts.unavailable.mark({
          block,
          reason: failure.reason,
          message: describeLaunchFailure(failure),
          expiresAt,
          ...(remembered.quota ? { quota: remembered.quota } : {}),
        });
      }
      return { blocks: remembered.blocks.map(blockKey), ttlSeconds: remembered.ttlSeconds };
    },

    resourcesOf,

    recordedResourcesOf: (offering, recorded) => capacityFor(offering, recordedCapacityOptions(recorded)),

    async get(vmName) {
      const vm = await vms.get(vmName);
      return vm ? instanceOf(vm) : undefined;
    },

    async list() {
      return (await vms.list()).map(instanceOf);
    },

    async delete(target) {
      const state = await vms.beginDelete(typeof target === 'string' ? target : target.name);
      if (typeof target !== 'string') await forgetQuotaFreedBy(parts, target);
      return state;
    },

    async reboot(vmName): Promise<RebootStart> {
      try {
        return await vms.beginRestart(vmName);
      } catch (error) {
        if (isTransient(error) || !isRestError(error)) throw error;
        parts.log.warn('VM restart refused', { vmName, code: error.code, error: error.message });
        return { failed: `${error.code ?? error.statusCode ?? 'error'}: ${error.message}` };
      }
    },

    pollReboot: (pollerState): Promise<RebootProgress> => vms.pollRestart(pollerState),

    async offeringOf(instance, options = {}) {
      const offerings = options.withReservations
        ? (await offeringsWithReservations(parts)).offerings
        : await catalogOfferings(parts);
      return offeringOfInstance(instance, offerings);
    },

    async offerings(options = {}) {
      return (await offeringsWithReservations(parts, options)).offerings;
    },

    prices: () => parts.pricing.prices(),

    async unavailableOfferings() {
      return (await parts.unavailable.listActive(parts.now())).map((u) => u.block);
    },

    markUnavailable,

    forgetReservations: () => parts.reservations.invalidate(),

    capacityOptions: (nodeClass) => capacityOptions(settings, nodeClass),

    launchLabels,

    nodeOverlays: (nodePools) => currentNodeOverlays(parts, nodePools),

    evaluateNodeOverlays: (overlays, nodePools) => evaluateOverlays(parts, overlays, nodePools),

    resolveImages,

    ...lifecycleAnswers(() => settings.clusterName, { resolveImages, markUnavailable, now: parts.now }),
  });
}

/**
 * The sizing a launch monitor's input carried before `create` returned the node's resources: the capacity
 * options launch resolved from the NodeClass, written by this provider's earlier version in this shape.
 */
export function recordedCapacityOptions(recorded: object): CapacityOptions {
  const {
    maxPods,
    osDiskSizeGB,
    kubernetesVersion,
    networkPlugin,
    networkPluginMode,
    vmMemoryOverheadFraction,
  }: CapacityOptions = recorded;
  return {
    ...(maxPods !== undefined ? { maxPods } : {}),
    ...(osDiskSizeGB !== undefined ? { osDiskSizeGB } : {}),
    ...(kubernetesVersion !== undefined ? { kubernetesVersion } : {}),
    ...(networkPlugin !== undefined ? { networkPlugin } : {}),
    ...(networkPluginMode !== undefined ? { networkPluginMode } : {}),
    ...(vmMemoryOverheadFraction !== undefined ? { vmMemoryOverheadFraction } : {}),
  };
}

/**
 * The provider with every asynchronous method's transient ARM or storage error (throttled, a server
 * error, no answer) thrown as TransientCloudError, the one type the lifecycle's retries recognise.
 */
function answeringTransientAsSeam(provider: CloudProvider): CloudProvider {
  const seamed = { ...provider };
  for (const key of Object.keys(provider) as (keyof CloudProvider)[]) {
    const method = provider[key] as (...args: unknown[]) => unknown;
    (seamed as Record<keyof CloudProvider, unknown>)[key] = (...args: unknown[]) => {
      const result = method(...args);
      return result instanceof Promise ? result.catch(rethrowTransientAsSeam) : result;
    };
  }
  return seamed;
}

function rethrowTransientAsSeam(error: unknown): never {
  if (error instanceof CloudProviderError || !isTransient(error)) throw error;
  const info = armErrorInfo(error);
  throw new TransientCloudError(info.message, info.retryAfterSeconds, { cause: error });
}

/** One poll of a launch, its failure classified (capacity, quota, a missing permission, transient, …). */
export async function pollLaunch(
  parts: Pick<CloudProviderParts, 'vms' | 'log'>,
  vmName: string,
  pollerState: string | undefined,
): Promise<LaunchProgress> {
  const progress = await pollCreation(parts, vmName, pollerState);
  if (progress.status !== 'Failed') return progress;
  return { status: 'Failed', failure: classifyLaunchError(progress.error) };
}

/**
 * One request against a VM's creation: its operation when there is one, else the VM itself. Throttling
 * and server errors are no outcome: the creation is still in progress, and the budget is reported as
 * exhausted so the launch monitor waits its longest interval.
 */
export async function pollCreation(
  { vms, log }: Pick<CloudProviderParts, 'vms' | 'log'>,
  vmName: string,
  pollerState: string | undefined,
): Promise<CreationProgress> {
  try {
    if (!pollerState) return await pollByGet(vms, vmName);
    const poll = await vms.pollCreation(pollerState);
    return poll.status === 'Succeeded' ? { status: 'Succeeded' } : poll;
  } catch (error) {
    // The VM's read refused for want of a permission (the poller's refusal is already an outcome): the
    // same poll would be refused again, so it is the outcome, recorded as the PUT's refusal is.
    if (isAuthorizationRefusal(error)) return { status: 'Failed', error: armErrorInfo(error) };
    if (!isTransient(error)) throw error;
    log.warn('transient error while polling VM creation', { vmName, error });
    return { status: 'InProgress', rateLimitRemaining: 0, ...(pollerState ? { pollerState } : {}) };
  }
}

/**
 * Without a poller (the VM already existed when launch ran), the VM's provisioningState is the outcome.
 * Only a failed VM is read again, with its instance view: that names the failed operation's code and
 * message, which the plain GET does not, so the failure is classified as the LRO's would be. Polls of a
 * VM still being created stay plain GETs.
 */
async function pollByGet(vms: VirtualMachines, vmName: string): Promise<CreationProgress> {
  const vm = await vms.get(vmName);
  if (!vm) return { status: 'Failed', error: { code: 'NotFound', message: `VM ${vmName} no longer exists` } };
  switch (vm.provisioningState) {
    case 'Succeeded':
      return { status: 'Succeeded' };
    case 'Failed': {
      const viewed = await vms.get(vmName, { instanceView: true });
      const failure = provisioningFailureOf(viewed?.instanceView?.statuses);
      return {
        status: 'Failed',
        error: {
          ...(failure?.code ? { code: failure.code } : {}),
          message: failure?.message ?? `VM ${vmName} provisioning failed`,
        },
      };
    }
    default:
      return { status: 'InProgress' };
  }
}

/**
 * An ARM refusal for want of a permission, from any request a launch makes (the VM PUT, reading the VM,
 * the SKU catalog, the image gallery), as AuthorizationError: the same request would be refused again,
 * so the NodeClaim waits with the missing action named instead of the message being retried.
 */
async function refusingAuthorization<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!isRestError(error)) throw error;
    const failure = classifyLaunchError(armErrorInfo(error));
    if (failure.reason === 'AuthorizationFailed') throw new AuthorizationError(failure);
    throw error;
  }
}

function toInstance(vm: VirtualMachine, providerID: string): Instance {
  const imageID = imageIdOf(vm);
  const vmSize = vm.hardwareProfile?.vmSize;
  const zoneNumber = vm.zones?.[0];
  const reservationGroupId = vm.capacityReservation?.capacityReservationGroup?.id;
  return {
    name: vm.name ?? '',
    providerID,
    state: vm.provisioningState,
    tags: vm.tags ?? {},
    ...(vm.timeCreated ? { createdAt: vm.timeCreated } : {}),
    ...(imageID ? { imageID } : {}),
    ...(vmSize ? { vmSize } : {}),
    ...(zoneNumber ? { zoneNumber } : {}),
    spot: vm.priority === 'Spot',
    ...(reservationGroupId ? { reservationGroupId } : {}),
  };
}

/** The image the VM runs: the gallery image ID, or publisher:offer:sku:version for marketplace images. */
function imageIdOf(vm: VirtualMachine): string | undefined {
  const image = vm.storageProfile?.imageReference;
  if (!image) return undefined;
  if (image.id) return image.id;
  if (image.communityGalleryImageId) return image.communityGalleryImageId;
  if (image.sharedGalleryImageId) return image.sharedGalleryImageId;
  const version = image.exactVersion ?? image.version;
  return [image.publisher, image.offer, image.sku, version].every(Boolean)
    ? `${image.publisher}:${image.offer}:${image.sku}:${version}`
    : undefined;
}
