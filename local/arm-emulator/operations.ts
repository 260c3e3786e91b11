// Async operations (ARM long-running operations): what the Azure-AsyncOperation and Location URLs
// point at, and the status document Compute returns for them.

import { randomUUID } from 'node:crypto';
import type { ArmErrorDetail } from './errors.js';

export type OperationStatus = 'InProgress' | 'Succeeded' | 'Failed' | 'Canceled';

export interface AsyncOperation {
  id: string;
  subscriptionId: string;
  location: string;
  kind: 'create' | 'update' | 'delete' | 'restart';
  resourceId: string;
  status: OperationStatus;
  startTime: string;
  endTime: string | undefined;
  error: ArmErrorDetail | undefined;
}

const maxKeptOperations = 50_000;

export class OperationStore {
  private readonly operations = new Map<string, AsyncOperation>();

  start(
    subscriptionId: string,
    location: string,
    kind: AsyncOperation['kind'],
    resourceId: string,
  ): AsyncOperation {
    this.prune();
    const operation: AsyncOperation = {
      id: randomUUID(),
      subscriptionId,
      location,
      kind,
      resourceId,
      status: 'InProgress',
      startTime: new Date().toISOString(),
      endTime: undefined,
      error: undefined,
    };
    this.operations.set(operation.id, operation);
    return operation;
  }

  get(subscriptionId: string, id: string): AsyncOperation | undefined {
    const operation = this.operations.get(id);
    return operation && operation.subscriptionId.toLowerCase() === subscriptionId.toLowerCase()
      ? operation
      : undefined;
  }

  finish(id: string, error?: ArmErrorDetail): void {
    const operation = this.operations.get(id);
    if (!operation || operation.status !== 'InProgress') return;
    operation.status = error ? 'Failed' : 'Succeeded';
    operation.error = error;
    operation.endTime = new Date().toISOString();
  }

  clear(): void {
    this.operations.clear();
  }

  /** Relative URL of the operation; `monitor` selects the Location-header flavour. */
  path(operation: AsyncOperation, monitor: boolean, apiVersion: string): string {
    const query = new URLSearchParams({ p: operation.id.slice(0, 8) });
    if (monitor) query.set('monitor', 'true');
    query.set('api-version', apiVersion);
    return (
      `/subscriptions/${operation.subscriptionId}/providers/Microsoft.Compute/locations/${operation.location}` +
      `/operations/${operation.id}?${query.toString()}`
    );
  }

  private prune(): void {
    if (this.operations.size < maxKeptOperations) return;
    for (const [id, operation] of this.operations) {
      if (operation.status !== 'InProgress') this.operations.delete(id);
      if (this.operations.size < maxKeptOperations / 2) return;
    }
  }
}

/** The status document, as `GET .../operations/{id}` returns it. */
export function renderOperation(operation: AsyncOperation): Record<string, unknown> {
  return {
    startTime: operation.startTime,
    ...(operation.endTime !== undefined ? { endTime: operation.endTime } : {}),
    status: operation.status,
    ...(operation.error !== undefined ? { error: operation.error } : {}),
    name: operation.id,
  };
}
