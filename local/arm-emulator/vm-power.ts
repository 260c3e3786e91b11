// What happens to a running VM besides create and delete: a restart (POST .../restart, a long-running
// operation like a delete: 202 with Azure-AsyncOperation and Location, the guest rebooting meanwhile), and
// a spot preemption, which Azure decides on its own: first the eviction notice (IMDS Scheduled Events'
// Preempt event with its NotBefore, which the node's agent turns into the PreemptionScheduled condition),
// then, once the notice has run out, the eviction itself per the VM's evictionPolicy (Delete: the VM and
// its disks are deleted; Deallocate: the VM stays, deallocated).
import type { ComputeService, RequestContext, ServiceResponse, VmAddress } from './compute-service.js';
import { ArmError, resourceNotFound } from './errors.js';
import type { Latencies } from './latencies.js';
import type { OperationStore } from './operations.js';
import { ScheduledActions } from './scheduled-actions.js';
import type { StoredVm, VmStore } from './vm-store.js';

/** Azure announces a spot eviction at least 30 seconds ahead (IMDS Scheduled Events, Preempt). */
export const DEFAULT_PREEMPTION_NOTICE_MS = 30_000;

export interface PreemptionNotice {
  vmName: string;
  /** When the eviction happens (Scheduled Events' NotBefore). */
  notBefore: string;
  evictionPolicy: 'Deallocate' | 'Delete';
}

export interface VmPowerDeps {
  store: VmStore;
  operations: OperationStore;
  compute: ComputeService;
  latencies: () => Latencies;
}

const vmResourceType = 'Microsoft.Compute/virtualMachines';

function operationNotAllowed(operation: string, vm: StoredVm, why: string): ArmError {
  return new ArmError(
    409,
    'OperationNotAllowed',
    `Operation '${operation}' is not allowed on VM '${vm.name}' since ${why}.`,
  );
}

export class VmPowerService {
  private readonly actions = new ScheduledActions();

  constructor(private readonly deps: VmPowerDeps) {}

  cancelTimers(): void {
    this.actions.cancelAll();
  }

  restartVm(address: VmAddress, context: RequestContext): ServiceResponse {
    const vm = this.deps.store.get(address.subscriptionId, address.resourceGroup, address.name);
    if (!vm) throw resourceNotFound(vmResourceType, address.name, address.resourceGroup);
    if (vm.provisioningState === 'Deleting')
      throw operationNotAllowed('restart', vm, 'the VM is being deleted');
    if (vm.provisioningState !== 'Succeeded' || vm.pendingOperationId) {
      throw operationNotAllowed('restart', vm, 'another operation is in progress on it');
    }
    if (vm.powerState === 'deallocated') throw operationNotAllowed('restart', vm, 'the VM is deallocated');

    const operation = this.deps.operations.start(vm.subscriptionId, vm.spec.location, 'restart', vm.id);
    vm.pendingOperationId = operation.id;
    vm.powerState = 'restarting';
    this.deps.store.emit('restarting', vm);
    this.schedule(this.deps.latencies().restartMs, () => {
      if (vm.pendingOperationId !== operation.id) return;
      vm.pendingOperationId = undefined;
      vm.powerState = undefined;
      this.deps.operations.finish(operation.id);
      this.deps.store.emit('restarted', vm);
    });
    const retryAfter = String(this.deps.latencies().retryAfterSeconds);
    const url = (monitor: boolean) =>
      context.baseUrl + this.deps.operations.path(operation, monitor, context.apiVersion);
    return {
      status: 202,
      headers: { 'azure-asyncoperation': url(false), location: url(true), 'retry-after': retryAfter },
    };
  }

  /**
   * Azure preempts a spot VM: the notice now, the eviction `noticeMs` later (unless the VM is deleted
   * first, as a node drained within its notice is).
   */
  preempt(vmName: string, noticeMs = DEFAULT_PREEMPTION_NOTICE_MS): PreemptionNotice {
    const vm = this.deps.store.all().find((v) => v.name.toLowerCase() === vmName.toLowerCase());
    if (!vm) throw new ArmError(404, 'NotFound', `no VM named '${vmName}'`);
    if (vm.spec.priority === 'Regular') {
      throw operationNotAllowed('preempt', vm, 'only Spot and Low priority VMs are preempted');
    }
    if (vm.provisioningState !== 'Succeeded' || vm.powerState === 'deallocated') {
      throw operationNotAllowed('preempt', vm, 'the VM is not running');
    }
    const notice: PreemptionNotice = {
      vmName: vm.name,
      notBefore: new Date(Date.now() + noticeMs).toISOString(),
      evictionPolicy: vm.spec.evictionPolicy ?? 'Deallocate',
    };
    vm.preemptionNotBefore = notice.notBefore;
    this.deps.store.emit('preemption-scheduled', vm);
    this.schedule(noticeMs, () => this.evict(vm));
    return notice;
  }

  private evict(vm: StoredVm): void {
    const current = this.deps.store.get(vm.subscriptionId, vm.resourceGroup, vm.name);
    // Deleted (or deleting) within the notice: nothing is left to evict.
    if (current !== vm || vm.provisioningState === 'Deleting') return;
    vm.preemptionNotBefore = undefined;
    if ((vm.spec.evictionPolicy ?? 'Deallocate') === 'Delete') {
      this.deps.store.emit('evicted', vm);
      this.deps.compute.deleteVm(
        { subscriptionId: vm.subscriptionId, resourceGroup: vm.resourceGroup, name: vm.name },
        { baseUrl: '', apiVersion: '' },
      );
      return;
    }
    vm.powerState = 'deallocated';
    this.deps.store.emit('evicted', vm);
  }

  private schedule(delayMs: number, action: () => void): void {
    this.actions.schedule(delayMs, action);
  }
}
