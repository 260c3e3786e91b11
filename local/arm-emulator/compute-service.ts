// Virtual machine semantics: create/update/delete as long-running operations, the provisioning
// state machine (Creating → Succeeded | Failed, Deleting → gone), idempotent PUT, immutable
// properties, catalog checks, injected faults and the vCPU quota the VMs already hold.

import { randomBytes, randomUUID } from 'node:crypto';
import {
  allocationFailure,
  familyQuotaExceeded,
  lowPriorityQuotaExceeded,
  operationPreempted,
  regionalQuotaExceeded,
  skuNotAvailable,
  vmMarkedForDeletion,
} from './azure-messages.js';
import {
  ArmError,
  invalidParameter,
  preconditionFailed,
  propertyChangeNotAllowed,
  resourceNotFound,
  type ArmErrorDetail,
} from './errors.js';
import type { AsyncFaultEffect, FaultRegistry, LaunchFacts, SyncFaultEffect } from './faults.js';
import { createLatencyFor, deleteLatencyFor, type Latencies } from './latencies.js';
import { renderOperation, type AsyncOperation, type OperationStore } from './operations.js';
import type { ProvisioningHolds } from './provisioning-holds.js';
import { capacityReservationGroupOfVm, type CapacityReservationStore } from './capacity-reservations.js';
import { findSku, isKnownSize, placementRestriction, skuVcpus, type ResourceSku } from './sku-catalog.js';
import { parseVmSpec, validateVmName, type VmSpec } from './vm-spec.js';
import { ScheduledActions } from './scheduled-actions.js';
import type { QuotaState } from './quotas.js';
import type { NodeImageGallery } from './gallery-images.js';
import type { StoredVm, VmStore } from './vm-store.js';
import { renderVm } from './vm-view.js';

export interface ServiceResponse {
  status: number;
  body?: unknown;
  headers: Record<string, string>;
}

export interface VmAddress {
  subscriptionId: string;
  resourceGroup: string;
  name: string;
}

export interface RequestContext {
  /** https://host:port as the client addressed us; operation URLs are built on it. */
  baseUrl: string;
  apiVersion: string;
}

export interface ComputeServiceDeps {
  store: VmStore;
  operations: OperationStore;
  faults: FaultRegistry;
  catalog: () => readonly ResourceSku[];
  latencies: () => Latencies;
  holds: ProvisioningHolds;
  reservations: CapacityReservationStore;
  quotas: QuotaState;
  images: NodeImageGallery;
}

const vmResourceType = 'Microsoft.Compute/virtualMachines';

export class ComputeService {
  private readonly actions = new ScheduledActions();

  constructor(private readonly deps: ComputeServiceDeps) {}

  /** Cancels every scheduled state transition (for stop and reset). */
  cancelTimers(): void {
    this.actions.cancelAll();
  }

  putVm(
    address: VmAddress,
    body: unknown,
    context: RequestContext,
    conditions: { ifNoneMatch?: string | undefined } = {},
  ): ServiceResponse {
    const nameError = validateVmName(address.name);
    if (nameError) throw nameError;
    const spec = parseVmSpec(body, (imageReference) => this.deps.images.check(imageReference));
    const existing = this.deps.store.get(address.subscriptionId, address.resourceGroup, address.name);
    if (conditions.ifNoneMatch !== undefined) {
      // ARM supports only `*` here: create, but never update, whatever state the existing VM is in.
      if (conditions.ifNoneMatch.trim() !== '*') {
        throw invalidParameter(
          `The value '${conditions.ifNoneMatch}' of the If-None-Match header is not supported; only '*' is.`,
          'If-None-Match',
        );
      }
      if (existing) throw preconditionFailed();
    }
    if (existing) return this.putExisting(existing, spec, context);

    const sku = this.checkCatalog(address, spec);
    const group = capacityReservationGroupOfVm(spec.properties);
    if (group !== undefined) this.deps.reservations.checkVmPut(group, spec);
    const facts = launchFacts(address.name, spec);
    const syncFault = this.deps.faults.takeSync(facts);
    if (syncFault) throw syncFaultError(syncFault, address, spec, sku);
    this.deps.quotas.checkLaunch(address.subscriptionId, spec.location, spec.priority, sku);

    const vm: StoredVm = {
      id: `/subscriptions/${address.subscriptionId}/resourceGroups/${address.resourceGroup}/providers/${vmResourceType}/${address.name}`,
      subscriptionId: address.subscriptionId,
      resourceGroup: address.resourceGroup,
      name: address.name,
      vmId: randomUUID(),
      timeCreated: new Date().toISOString(),
      osDiskName: `${address.name}_OsDisk_1_${randomBytes(16).toString('hex')}`,
      spec,
      provisioningState: 'Creating',
      failure: undefined,
      pendingOperationId: undefined,
    };
    this.deps.store.put(vm);
    const operation = this.startProvisioning(vm, 'create', facts);
    this.deps.store.emit('creating', vm);
    return {
      status: 201,
      body: renderVm(vm),
      headers: { 'azure-asyncoperation': this.operationUrl(operation, false, context) },
    };
  }

  getVm(address: VmAddress, options: { instanceView?: boolean } = {}): ServiceResponse {
    const vm = this.deps.store.get(address.subscriptionId, address.resourceGroup, address.name);
    if (!vm) throw resourceNotFound(vmResourceType, address.name, address.resourceGroup);
    return { status: 200, body: renderVm(vm, options), headers: {} };
  }

  deleteVm(address: VmAddress, context: RequestContext): ServiceResponse {
    const vm = this.deps.store.get(address.subscriptionId, address.resourceGroup, address.name);
    // ARM answers a DELETE of something that does not exist with 204: deletion is idempotent.
    if (!vm) return { status: 204, headers: {} };

    if (vm.provisioningState === 'Deleting' && vm.pendingOperationId) {
      const running = this.deps.operations.get(vm.subscriptionId, vm.pendingOperationId);
      if (running) return this.acceptedDelete(running, context);
    }
    if (vm.pendingOperationId) this.deps.operations.finish(vm.pendingOperationId, operationPreempted());

    const operation = this.deps.operations.start(vm.subscriptionId, vm.spec.location, 'delete', vm.id);
    vm.provisioningState = 'Deleting';
    vm.pendingOperationId = operation.id;
    this.deps.store.emit('deleting', vm);
    this.schedule(deleteLatencyFor(this.deps.latencies(), vm.name), () => {
      if (vm.pendingOperationId !== operation.id) return;
      this.deps.store.remove(vm);
      this.deps.operations.finish(operation.id);
      this.deps.store.emit('deleted', vm);
    });
    return this.acceptedDelete(operation, context);
  }

  listVms(subscriptionId: string, resourceGroup: string | undefined): unknown[] {
    return this.deps.store.list(subscriptionId, resourceGroup).map((vm) => renderVm(vm));
  }

  getOperation(
    subscriptionId: string,
    id: string,
    monitor: boolean,
    context: RequestContext,
  ): ServiceResponse {
    const operation = this.deps.operations.get(subscriptionId, id);
    if (!operation) {
      throw new ArmError(404, 'NotFound', `The operation '${id}' could not be found.`);
    }
    const retryAfter = String(this.deps.latencies().retryAfterSeconds);
    if (!monitor) {
      const headers: Record<string, string> =
        operation.status === 'InProgress' ? { 'retry-after': retryAfter } : {};
      return { status: 200, body: renderOperation(operation), headers };
    }
    // The Location ("monitor") flavour speaks through status codes: 202 while running.
    if (operation.status === 'InProgress') {
      return {
        status: 202,
        headers: { 'retry-after': retryAfter, location: this.operationUrl(operation, true, context) },
      };
    }
    if (operation.status === 'Succeeded') return { status: 200, headers: {} };
    const error = operation.error ?? { code: 'InternalOperationError', message: 'The operation failed.' };
    return { status: 409, body: { error }, headers: {} };
  }

  private acceptedDelete(operation: AsyncOperation, context: RequestContext): ServiceResponse {
    return {
      status: 202,
      headers: {
        'azure-asyncoperation': this.operationUrl(operation, false, context),
        location: this.operationUrl(operation, true, context),
        'retry-after': String(this.deps.latencies().retryAfterSeconds),
      },
    };
  }

  private putExisting(vm: StoredVm, spec: VmSpec, context: RequestContext): ServiceResponse {
    if (vm.provisioningState === 'Deleting') throw vmMarkedForDeletion(vm.name);
    if (spec.location !== vm.spec.location) {
      throw new ArmError(
        400,
        'InvalidResourceLocation',
        `The resource '${vm.name}' already exists in location '${vm.spec.location}' in resource group ` +
          `'${vm.resourceGroup}'. A resource with the same name cannot be created in location '${spec.location}'. ` +
          'Please select a new resource name.',
      );
    }
    if (spec.vmSize.toLowerCase() !== vm.spec.vmSize.toLowerCase())
      throw propertyChangeNotAllowed('hardwareProfile.vmSize');
    if (spec.zones.join(',') !== vm.spec.zones.join(',')) throw propertyChangeNotAllowed('zones');
    if (spec.priority !== vm.spec.priority) throw propertyChangeNotAllowed('priority');
    if ((spec.customData ?? '') !== (vm.spec.customData ?? '')) throw propertyChangeNotAllowed('customData');

    vm.spec = { ...vm.spec, tags: spec.tags };
    if (vm.provisioningState !== 'Failed') {
      // Nothing to provision: answer with the current state. If a creation is still running the
      // client keeps polling the VM itself until provisioningState is terminal.
      const headers: Record<string, string> = {};
      const running = vm.pendingOperationId
        ? this.deps.operations.get(vm.subscriptionId, vm.pendingOperationId)
        : undefined;
      if (running && running.status === 'InProgress') {
        headers['azure-asyncoperation'] = this.operationUrl(running, false, context);
      }
      return { status: 200, body: renderVm(vm), headers };
    }

    // A PUT on a Failed VM retries its provisioning, as Compute does; the failed VM held no cores, so the
    // retry needs them again.
    const sku = findSku(this.deps.catalog(), vm.spec.vmSize, vm.spec.location);
    if (sku) this.deps.quotas.checkLaunch(vm.subscriptionId, vm.spec.location, vm.spec.priority, sku);
    vm.provisioningState = 'Updating';
    vm.failure = undefined;
    const operation = this.startProvisioning(vm, 'update', launchFacts(vm.name, vm.spec));
    this.deps.store.emit('creating', vm);
    return {
      status: 200,
      body: renderVm(vm),
      headers: { 'azure-asyncoperation': this.operationUrl(operation, false, context) },
    };
  }

  private startProvisioning(vm: StoredVm, kind: 'create' | 'update', facts: LaunchFacts): AsyncOperation {
    const asyncFault = this.deps.faults.takeAsync(facts);
    const operation = this.deps.operations.start(vm.subscriptionId, vm.spec.location, kind, vm.id);
    vm.pendingOperationId = operation.id;
    const finish = () => {
      if (vm.pendingOperationId !== operation.id) return;
      vm.pendingOperationId = undefined;
      if (asyncFault) {
        const failure = asyncFaultDetail(asyncFault);
        vm.provisioningState = 'Failed';
        vm.failure = failure;
        this.deps.operations.finish(operation.id, failure);
        this.deps.store.emit('failed', vm);
      } else {
        vm.provisioningState = 'Succeeded';
        this.deps.operations.finish(operation.id);
        this.deps.store.emit('succeeded', vm);
      }
    };
    this.schedule(createLatencyFor(this.deps.latencies(), vm.name), () =>
      this.deps.holds.finishWhenReleased(vm.name, finish),
    );
    return operation;
  }

  private checkCatalog(address: VmAddress, spec: VmSpec): ResourceSku {
    const catalog = this.deps.catalog();
    if (!isKnownSize(catalog, spec.vmSize)) {
      throw invalidParameter(
        `The value '${spec.vmSize}' provided for the VM size is not valid. Use a size listed by the resource SKUs API.`,
        'hardwareProfile.vmSize',
      );
    }
    const sku = findSku(catalog, spec.vmSize, spec.location);
    const zone = spec.zones[0];
    if (!sku || placementRestriction(sku, zone)) {
      throw skuNotAvailable(vmIdOf(address), spec.location, zone, address.subscriptionId);
    }
    return sku;
  }

  private schedule(delayMs: number, action: () => void): void {
    this.actions.schedule(delayMs, action);
  }

  private operationUrl(operation: AsyncOperation, monitor: boolean, context: RequestContext): string {
    return context.baseUrl + this.deps.operations.path(operation, monitor, context.apiVersion);
  }
}

function vmIdOf(address: VmAddress): string {
  return `/subscriptions/${address.subscriptionId}/resourceGroups/${address.resourceGroup}/providers/${vmResourceType}/${address.name}`;
}

function launchFacts(vmName: string, spec: VmSpec): LaunchFacts {
  return {
    vmName,
    vmSize: spec.vmSize,
    zone: spec.zones[0],
    priority: spec.priority,
    location: spec.location,
  };
}

function syncFaultError(
  effect: SyncFaultEffect,
  address: VmAddress,
  spec: VmSpec,
  sku: ResourceSku,
): ArmError {
  const required = skuVcpus(sku);
  const figures = (currentLimit = 10, currentUsage = 8) => ({
    currentLimit,
    currentUsage,
    additionalRequired: required,
  });
  switch (effect.type) {
    case 'familyQuota':
      return familyQuotaExceeded(
        effect.family ?? sku.family,
        spec.location,
        figures(effect.currentLimit, effect.currentUsage),
      );
    case 'regionalQuota':
      return regionalQuotaExceeded(
        spec.location,
        figures(effect.currentLimit ?? 100, effect.currentUsage ?? 98),
      );
    case 'lowPriorityQuota':
      return lowPriorityQuotaExceeded(spec.location, figures(effect.currentLimit, effect.currentUsage));
    case 'skuNotAvailable':
      return skuNotAvailable(vmIdOf(address), spec.location, spec.zones[0], address.subscriptionId);
    case 'syncError':
      return new ArmError(effect.status, effect.code, effect.message);
  }
}

function asyncFaultDetail(effect: AsyncFaultEffect): ArmErrorDetail {
  if (effect.type === 'asyncError') return { code: effect.code, message: effect.message };
  return allocationFailure(effect.type);
}
