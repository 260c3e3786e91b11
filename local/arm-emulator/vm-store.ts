// The emulated virtual machines and their change notifications. Keys are case-insensitive, as ARM
// resource IDs are.

import type { ArmErrorDetail } from './errors.js';
import { communityGalleryImageIdOf } from './gallery-images.js';
import type { VmSpec } from './vm-spec.js';

export type ProvisioningState = 'Creating' | 'Updating' | 'Succeeded' | 'Failed' | 'Deleting';

export interface StoredVm {
  id: string;
  subscriptionId: string;
  resourceGroup: string;
  name: string;
  vmId: string;
  timeCreated: string;
  osDiskName: string;
  spec: VmSpec;
  provisioningState: ProvisioningState;
  /** Why the last operation failed, when provisioningState is Failed. */
  failure: ArmErrorDetail | undefined;
  /** The operation in flight, if any. */
  pendingOperationId: string | undefined;
  /** Set while a restart runs and after a spot eviction that deallocated it; absent: running. */
  powerState?: 'restarting' | 'deallocated';
  /** When a preemption announced for this spot VM evicts it (Scheduled Events' NotBefore). */
  preemptionNotBefore?: string | undefined;
}

/** A copy safe to hand out: what tests and the kubelet simulator see. */
export interface EmulatedVm {
  id: string;
  subscriptionId: string;
  resourceGroup: string;
  name: string;
  vmId: string;
  location: string;
  zones: string[];
  vmSize: string;
  priority: VmSpec['priority'];
  evictionPolicy: VmSpec['evictionPolicy'];
  tags: Record<string, string>;
  computerName: string;
  /** Base64 bootstrap data exactly as sent in osProfile.customData. */
  customData: string | undefined;
  /**
   * storageProfile.imageReference.communityGalleryImageId as sent: the node image version the VM boots,
   * whose behaviour the kubelet simulator plays (gallery-images.ts). Undefined for any other image kind.
   */
  communityGalleryImageId: string | undefined;
  provisioningState: ProvisioningState;
  failure: ArmErrorDetail | undefined;
  timeCreated: string;
  powerState: 'running' | 'restarting' | 'deallocated' | undefined;
  /** Set from a preemption's notice until the eviction (vm-power.ts). */
  preemptionNotBefore: string | undefined;
}

/**
 * `restarting` / `restarted`: a restart's guest reboot begins / the VM runs again; `preemption-scheduled`:
 * a spot eviction notice (the VM's preemptionNotBefore says when); `evicted`: the spot VM was evicted
 * (deallocated, or deleted: then `deleting` and `deleted` follow).
 */
export type VmChangeType =
  | 'creating'
  | 'succeeded'
  | 'failed'
  | 'deleting'
  | 'deleted'
  | 'restarting'
  | 'restarted'
  | 'preemption-scheduled'
  | 'evicted';

export interface VmChangeEvent {
  type: VmChangeType;
  vm: EmulatedVm;
}

export type VmChangeListener = (event: VmChangeEvent) => void;

export function vmKey(subscriptionId: string, resourceGroup: string, name: string): string {
  return `${subscriptionId}/${resourceGroup}/${name}`.toLowerCase();
}

export function toEmulatedVm(vm: StoredVm): EmulatedVm {
  return {
    id: vm.id,
    subscriptionId: vm.subscriptionId,
    resourceGroup: vm.resourceGroup,
    name: vm.name,
    vmId: vm.vmId,
    location: vm.spec.location,
    zones: [...vm.spec.zones],
    vmSize: vm.spec.vmSize,
    priority: vm.spec.priority,
    evictionPolicy: vm.spec.evictionPolicy,
    tags: { ...vm.spec.tags },
    computerName: vm.spec.computerName,
    customData: vm.spec.customData,
    communityGalleryImageId: communityGalleryImageIdOf(vm.spec.properties),
    provisioningState: vm.provisioningState,
    failure: vm.failure ? { ...vm.failure } : undefined,
    timeCreated: vm.timeCreated,
    powerState: vm.provisioningState === 'Succeeded' ? (vm.powerState ?? 'running') : vm.powerState,
    preemptionNotBefore: vm.preemptionNotBefore,
  };
}

export class VmStore {
  private readonly vms = new Map<string, StoredVm>();
  private readonly listeners = new Set<VmChangeListener>();

  get(subscriptionId: string, resourceGroup: string, name: string): StoredVm | undefined {
    return this.vms.get(vmKey(subscriptionId, resourceGroup, name));
  }

  put(vm: StoredVm): void {
    this.vms.set(vmKey(vm.subscriptionId, vm.resourceGroup, vm.name), vm);
  }

  remove(vm: StoredVm): void {
    this.vms.delete(vmKey(vm.subscriptionId, vm.resourceGroup, vm.name));
  }

  /** VMs of a subscription, optionally of one resource group, in creation order. */
  list(subscriptionId: string, resourceGroup?: string): StoredVm[] {
    const sub = subscriptionId.toLowerCase();
    const rg = resourceGroup?.toLowerCase();
    return [...this.vms.values()].filter(
      (vm) =>
        vm.subscriptionId.toLowerCase() === sub &&
        (rg === undefined || vm.resourceGroup.toLowerCase() === rg),
    );
  }

  all(): StoredVm[] {
    return [...this.vms.values()];
  }

  clear(): void {
    this.vms.clear();
  }

  onChange(listener: VmChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(type: VmChangeType, vm: StoredVm): void {
    const event: VmChangeEvent = { type, vm: toEmulatedVm(vm) };
    for (const listener of this.listeners) {
      // A listener's failure is its own problem; it must not break the emulator's state machine.
      try {
        listener(event);
      } catch (error) {
        process.stderr.write(`arm-emulator: VM change listener failed: ${String(error)}\n`);
      }
    }
  }
}
