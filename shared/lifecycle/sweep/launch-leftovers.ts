// Orchestration leftovers of NodeClaims that are gone: a launch monitor still polling for a VM nobody
// wants any more, and the finished launch and termination instances whose histories would otherwise pile
// up in the task hub forever (one pair per node ever launched).
//
// The orchestration client cannot list instances, and instance IDs are derived from NodeClaim UIDs, so
// the sweep finds "gone" NodeClaims by difference: the UIDs it saw in its previous run that are missing
// from this one. That memory lives in the process (a timer-triggered app keeps its worker warm between
// occurrences, and the lease keeps one sweeper at a time), so:
// - after a process start the first sweep only records a baseline, and NodeClaims that vanished while no
//   sweep process was alive leave their histories behind (a running monitor among them still stops on its
//   own deadline, and records the failure against a missing NodeClaim, which deletes the VM);
// - a NodeClaim that disappears is cleaned up by whichever process sweeps next only if that process also
//   saw it before; after a failover the cleanup of that interval is lost the same way.
// Each gone UID is retried on later sweeps until both instances are absent, for a bounded number of runs.
import { isOrchestrationActive, type OrchestrationClient } from '../../runtime/definitions.js';
import type { Logger } from '../../observability/logger.js';
import { launchMonitorInstanceIds } from '../durable/launch-monitor-ids.js';
import type { LeftoverMemory } from '../sweep-step/leftover-memory.js';
import { terminationInstanceId } from '../termination/termination.js';

/** How many sweeps keep trying to clean up after one gone NodeClaim before giving up on it. */
export const MAX_CLEANUP_ATTEMPTS = 20;

/** Pure: the memory after a sweep that saw `current`; newly gone UIDs join `pending`. */
export function noteSweepUids(memory: LeftoverMemory, current: ReadonlySet<string>): LeftoverMemory {
  const pending = new Map(memory.pending);
  for (const uid of memory.previous ?? []) {
    if (!current.has(uid) && !pending.has(uid)) pending.set(uid, 0);
  }
  // A UID that is back (it cannot be, UIDs are unique, but a stale list page could omit one) is not gone.
  for (const uid of pending.keys()) if (current.has(uid)) pending.delete(uid);
  return { previous: new Set(current), pending };
}

export type LeftoverCleanup = 'clean' | 'in-progress';

/**
 * Stops the gone NodeClaim's launch monitor if it still runs, and purges both instances once they have
 * finished. A termination that is still finishing is left alone: it ends by itself (its last step finds
 * the NodeClaim gone) and is purged on a later sweep.
 */
export async function cleanUpLeftovers(
  orchestrations: OrchestrationClient,
  uid: string,
  log: Logger,
): Promise<LeftoverCleanup> {
  let clean = true;
  const monitors = new Set(launchMonitorInstanceIds(uid));
  for (const instanceId of [...monitors, terminationInstanceId(uid)]) {
    const status = await orchestrations.getStatus(instanceId);
    if (status === undefined) continue;
    if (isOrchestrationActive(status)) {
      // Purged on a later sweep, once it has stopped.
      clean = false;
      if (monitors.has(instanceId)) {
        await orchestrations.terminate(instanceId, 'NodeClaim no longer exists');
        log.info('launch monitor of a gone NodeClaim terminated', { instanceId });
      }
      continue;
    }
    await orchestrations.purge(instanceId);
    log.debug('orchestration history of a gone NodeClaim purged', { instanceId });
  }
  return clean ? 'clean' : 'in-progress';
}
