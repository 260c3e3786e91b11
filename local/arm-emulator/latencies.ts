// How long emulated operations take. Real VM creations take one to several minutes; the defaults
// are short so the local stack feels responsive, and tests usually shrink them further.

import { globToRegExp } from './faults.js';

export interface LatencyOverride {
  /** Glob on the VM name (`*`, `?`), case-insensitive. The first matching override wins. */
  vmName: string;
  createMs?: number;
  deleteMs?: number;
}

export interface Latencies {
  /** Creating → Succeeded/Failed. */
  createMs: number;
  /** Deleting → gone. */
  deleteMs: number;
  /** A restart's operation (the guest reboot) → the VM runs again. */
  restartMs: number;
  /** Retry-After (seconds) on operation status responses while the operation runs. */
  retryAfterSeconds: number;
  overrides: LatencyOverride[];
}

export const defaultLatencies: Latencies = {
  createMs: 4_000,
  deleteMs: 2_000,
  restartMs: 3_000,
  retryAfterSeconds: 1,
  overrides: [],
};

export function mergeLatencies(current: Latencies, change: Partial<Latencies>): Latencies {
  const next = { ...current, ...change, overrides: change.overrides ?? current.overrides };
  for (const key of ['createMs', 'deleteMs', 'restartMs', 'retryAfterSeconds'] as const) {
    const value = next[key];
    if (!Number.isFinite(value) || value < 0) throw new Error(`latency ${key} must be a non-negative number`);
  }
  return next;
}

function override(latencies: Latencies, vmName: string): LatencyOverride | undefined {
  return latencies.overrides.find((o) => globToRegExp(o.vmName).test(vmName));
}

export function createLatencyFor(latencies: Latencies, vmName: string): number {
  return override(latencies, vmName)?.createMs ?? latencies.createMs;
}

export function deleteLatencyFor(latencies: Latencies, vmName: string): number {
  return override(latencies, vmName)?.deleteMs ?? latencies.deleteMs;
}
