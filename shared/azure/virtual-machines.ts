// Virtual machine I/O for one resource group: get, begin create (returning the serialized poller), poll
// once, begin delete, list. Nothing here decides anything; errors are returned in a shape the pure
// classifier (shared/cloudprovider/azure/decisions/launch-errors.ts) understands.
import { restorePoller, type ComputeManagementClient, type VirtualMachine } from '@azure/arm-compute';
import { isRestError } from '@azure/core-rest-pipeline';
import { observeResponses } from './compute-client.js';

export interface ArmErrorInfo {
  code?: string;
  statusCode?: number;
  message: string;
  retryAfterSeconds?: number;
}

export type CreationPoll =
  | { status: 'InProgress'; pollerState: string; retryAfterSeconds?: number; rateLimitRemaining?: number }
  | { status: 'Succeeded'; vm: VirtualMachine }
  | { status: 'Failed'; error: ArmErrorInfo };

export type DeletionState = 'Deleting' | 'Gone';

/** A restart's long-running operation, polled as a creation is: one request per poll. */
export type RestartPoll =
  | { status: 'InProgress'; pollerState: string; retryAfterSeconds?: number }
  | { status: 'Succeeded' }
  | { status: 'Failed'; error: ArmErrorInfo };

export class VirtualMachines {
  constructor(
    private readonly client: ComputeManagementClient,
    private readonly resourceGroup: string,
  ) {}

  /** The VM, or undefined when it does not exist; `instanceView` adds its statuses (one request still). */
  async get(name: string, options: { instanceView?: boolean } = {}): Promise<VirtualMachine | undefined> {
    try {
      return await this.client.virtualMachines.get(
        this.resourceGroup,
        name,
        options.instanceView ? { expand: 'instanceView' } : undefined,
      );
    } catch (error) {
      if (isRestError(error) && error.statusCode === 404) return undefined;
      throw error;
    }
  }

  /**
   * Sends a create-only PUT (`If-None-Match: *`) and returns as soon as ARM has accepted it, with the
   * poller serialized so another process can continue polling; or `exists` when ARM refused it because
   * the VM is already there (created by another delivery, or by an earlier attempt whose answer was
   * lost), so a repeated PUT never updates a VM. Throws what ARM answered when it refused the PUT.
   */
  async beginCreate(
    name: string,
    body: VirtualMachine,
  ): Promise<{ created: true; pollerState: string } | { created: false }> {
    try {
      const poller = this.client.virtualMachines.createOrUpdate(this.resourceGroup, name, body, {
        ifNoneMatch: '*',
      });
      await poller.submitted();
      return { created: true, pollerState: await poller.serialize() };
    } catch (error) {
      if (isRestError(error) && error.statusCode === 412) return { created: false };
      throw error;
    }
  }

  /** One polling request against the operation the serialized poller points at. */
  async pollCreation(pollerState: string): Promise<CreationPoll> {
    const poller = restorePoller(this.client, pollerState, this.client.virtualMachines.createOrUpdate);
    try {
      const observed = await observeResponses(() => poller.poll());
      if (poller.isDone && poller.result) return { status: 'Succeeded', vm: poller.result };
      if (poller.isDone) {
        return { status: 'Failed', error: { message: 'The operation finished without a virtual machine' } };
      }
      return {
        status: 'InProgress',
        pollerState: await poller.serialize(),
        ...(observed.rateLimitRemaining !== undefined
          ? { rateLimitRemaining: observed.rateLimitRemaining }
          : {}),
        ...(observed.retryAfterSeconds !== undefined
          ? { retryAfterSeconds: observed.retryAfterSeconds }
          : {}),
      };
    } catch (error) {
      if (isTransient(error)) throw error;
      return { status: 'Failed', error: armErrorInfo(error) };
    }
  }

  /** Starts deletion (forced: the node is being discarded) and returns without waiting for the LRO. */
  async beginDelete(name: string): Promise<DeletionState> {
    try {
      const poller = this.client.virtualMachines.delete(this.resourceGroup, name, { forceDeletion: true });
      await poller.submitted();
      return 'Deleting';
    } catch (error) {
      if (isRestError(error) && error.statusCode === 404) return 'Gone';
      throw error;
    }
  }

  /**
   * Starts a restart (POST .../restart) and returns once ARM accepted it, with the poller serialized so
   * the repair workflow can poll it from any process; `gone` when the VM no longer exists.
   */
  async beginRestart(name: string): Promise<{ pollerState: string } | 'gone'> {
    try {
      const poller = this.client.virtualMachines.restart(this.resourceGroup, name);
      await poller.submitted();
      return { pollerState: await poller.serialize() };
    } catch (error) {
      if (isRestError(error) && error.statusCode === 404) return 'gone';
      throw error;
    }
  }

  /** One polling request against the restart's operation. */
  async pollRestart(pollerState: string): Promise<RestartPoll> {
    const poller = restorePoller(this.client, pollerState, this.client.virtualMachines.restart);
    try {
      const observed = await observeResponses(() => poller.poll());
      if (poller.isDone) {
        const error = poller.operationState?.error;
        return error ? { status: 'Failed', error: armErrorInfo(error) } : { status: 'Succeeded' };
      }
      return {
        status: 'InProgress',
        pollerState: await poller.serialize(),
        ...(observed.retryAfterSeconds !== undefined
          ? { retryAfterSeconds: observed.retryAfterSeconds }
          : {}),
      };
    } catch (error) {
      if (isTransient(error)) throw error;
      return { status: 'Failed', error: armErrorInfo(error) };
    }
  }

  async list(): Promise<VirtualMachine[]> {
    const result: VirtualMachine[] = [];
    for await (const vm of this.client.virtualMachines.list(this.resourceGroup)) result.push(vm);
    return result;
  }
}

/**
 * Throttling, server errors and requests that got no answer (timed out, connection reset) are worth
 * retrying as they are; everything else is an outcome.
 */
export function isTransient(error: unknown): boolean {
  if (error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError')) return true;
  if (!isRestError(error)) return false;
  const status = error.statusCode ?? 0;
  return status === 429 || status >= 500 || status === 0;
}

/**
 * ARM refused the request for want of a permission (`AuthorizationFailed`, or `LinkedAuthorizationFailed`
 * for what a request links): sent again, it is refused again until a role assignment changes.
 */
export function isAuthorizationRefusal(error: unknown): boolean {
  return (
    isRestError(error) && (error.code === 'AuthorizationFailed' || error.code === 'LinkedAuthorizationFailed')
  );
}

export function armErrorInfo(error: unknown): ArmErrorInfo {
  if (isRestError(error)) {
    const retryAfter = Number(error.response?.headers.get('retry-after'));
    return {
      ...(error.code ? { code: error.code } : {}),
      ...(error.statusCode ? { statusCode: error.statusCode } : {}),
      message: error.message,
      ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterSeconds: retryAfter } : {}),
    };
  }
  return { message: error instanceof Error ? error.message : String(error) };
}
