// A status write guarded by the resourceVersion the sweep read: an object changed or deleted since is left
// as read, and the next sweep decides from the new version. For NodePool and AKSNodeClass status, which
// is computed from the whole sweep view, not from the object alone; a NodeClaim's status is a function of
// the NodeClaim, so its writes re-read and re-apply on a conflict instead (../nodeclaims/nodeclaim-writes.ts).
import { isConflict, isNotFound } from '../../kube/errors.js';

export interface StatusWrite<T> {
  /** The object as it is now: the written version, or the one read when nothing was written. */
  object: T;
  written: boolean;
}

/**
 * Merge-patches `status` onto the object as read, unless it changed or went away since. The caller
 * passes its own mergePatchStatus call, so which resource's status it writes stays visible where it is
 * written (the RBAC check reads call sites).
 */
export async function writeStatus<T extends { metadata: { name: string; resourceVersion?: string } }>(
  read: T,
  status: object,
  mergePatchStatus: (name: string, patch: object) => Promise<T>,
): Promise<StatusWrite<T>> {
  try {
    const written = await mergePatchStatus(read.metadata.name, {
      metadata: { resourceVersion: read.metadata.resourceVersion },
      status,
    });
    return { object: written, written: true };
  } catch (error) {
    if (isConflict(error) || isNotFound(error)) return { object: read, written: false };
    throw error;
  }
}
