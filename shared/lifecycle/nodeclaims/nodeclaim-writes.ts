// The one NodeClaim writer of the lifecycle, as Karpenter's NodeClaim lifecycle controller: a phase reads
// the NodeClaim, says with a pure function what its new state is (status, and the labels, annotations and
// finalizers that phase owns), and this file writes just what changed, once. Each write carries the
// resourceVersion it was computed from, so a phase working from stale state gets a conflict; the
// NodeClaim is then read again and the function applied again, which keeps whatever else changed
// meanwhile. Nothing changed: nothing written. The NodeClaim gone (404, or another NodeClaim under the
// same name, told by its uid): said once, as `gone`, however far the call got.
//
// Status lives in the /status subresource and metadata in the main resource, so a change of both costs
// two writes, the second guarded by the version the first stored. Metadata goes first by default: a
// status is what says a phase got somewhere (Launched, the mark removed, the failed VM's providerID
// released), so what that relies on (the finalizer, a failed attempt's backoff, the retry count) is
// stored before it, and a crash between the two leaves a NodeClaim that the same step finishes. A step
// whose metadata is the record that its status was written (the pod-events digest) asks for status
// first, so a crash makes the next pass write the status again rather than skip it. After one part is
// stored, a conflict on the other re-applies the function for that part only: the stored part is never
// written twice, so a function that counts (one more failed attempt) counts once per call.
// (../status/status-write.ts is the other kind of status write: a NodePool's or AKSNodeClass's status is
// computed from the whole sweep view, so a conflict leaves it to the next sweep instead.)
import type { NodeClaim, NodeClaimStatus } from '../../models/index.js';
import { statusChanged } from '../../decisions/nodeclaim-status.js';
import { plainEqual } from '../../decisions/plain-equal.js';
import type { KarpenterObjects } from '../../kube/custom-objects.js';
import { isNotFound } from '../../kube/errors.js';
import { retryOnConflict } from '../../kube/retry-on-conflict.js';

/** A NodeClaim's new state as a phase wants it; a part left out stays as stored. */
export interface NodeClaimState {
  /** The whole status: a field left out is removed; the order of conditions does not count. */
  status?: NodeClaimStatus;
  /** The whole label map: a key left out is removed. */
  labels?: Record<string, string>;
  /** The whole annotation map: a key left out is removed. */
  annotations?: Record<string, string>;
  finalizers?: string[];
}

export type NodeClaimWrite =
  | {
      outcome: 'written';
      /** The NodeClaim as stored after the write. */
      nodeClaim: NodeClaim;
      /** The version the last write was computed from: what this call changed. */
      before: NodeClaim;
    }
  | { outcome: 'unchanged'; nodeClaim: NodeClaim }
  | { outcome: 'gone' };

export interface NodeClaimWriteOptions {
  /** Which part is written last when both change: 'status' (the default) or 'metadata'. */
  last?: 'status' | 'metadata';
  /**
   * False for a claim only one of several concurrent deliveries may win: a conflict is thrown to the
   * caller instead of re-read and re-applied.
   */
  retryConflicts?: boolean;
}

type Patch = Record<string, unknown>;

/**
 * Writes the change `next` makes to the NodeClaim `read` (the one the phase decided from): one guarded
 * merge patch per part that changed, metadata and status in the order `options.last` says. `next` is
 * applied to the stored NodeClaim again after a conflict, so it must decide from what it is given.
 */
export async function writeNodeClaim(
  objects: KarpenterObjects,
  read: NodeClaim,
  next: (current: NodeClaim) => NodeClaimState,
  options: NodeClaimWriteOptions = {},
): Promise<NodeClaimWrite> {
  const name = read.metadata.name;
  const order =
    options.last === 'metadata' ? (['status', 'metadata'] as const) : (['metadata', 'status'] as const);
  const stored = { metadata: false, status: false };
  let lastWritten: { nodeClaim: NodeClaim; before: NodeClaim } | undefined;

  const attempt = async (current: NodeClaim): Promise<NodeClaimWrite> => {
    if (current.metadata.uid !== read.metadata.uid) return { outcome: 'gone' };
    const wanted = next(current);
    const patches = {
      metadata: stored.metadata ? undefined : metadataPatchOf(current, wanted),
      status: stored.status ? undefined : statusPatchOf(current.status, wanted.status),
    };
    if (!patches.metadata && !patches.status) {
      return lastWritten
        ? { outcome: 'written', nodeClaim: current, before: lastWritten.before }
        : { outcome: 'unchanged', nodeClaim: current };
    }
    let nodeClaim = current;
    for (const part of order) {
      const patch = patches[part];
      if (!patch) continue;
      const guard = { resourceVersion: nodeClaim.metadata.resourceVersion };
      nodeClaim =
        part === 'metadata'
          ? await objects.nodeClaims.mergePatch(name, { metadata: { ...guard, ...patch } })
          : await objects.nodeClaims.mergePatchStatus(name, { metadata: guard, status: patch });
      stored[part] = true;
      lastWritten = { nodeClaim, before: current };
    }
    return { outcome: 'written', nodeClaim, before: current };
  };

  try {
    if (options.retryConflicts === false) return await attempt(read);
    return (await retryOnConflict(read, attempt, () => objects.nodeClaims.get(name))) ?? { outcome: 'gone' };
  } catch (error) {
    if (isNotFound(error)) return { outcome: 'gone' };
    throw error;
  }
}

/** The NodeClaim as stored after `write`, or undefined when it is gone. */
export function nodeClaimAfter(write: NodeClaimWrite): NodeClaim | undefined {
  return write.outcome === 'gone' ? undefined : write.nodeClaim;
}

/** Whether `write` stored something. */
export function wasWritten(write: NodeClaimWrite): write is Extract<NodeClaimWrite, { outcome: 'written' }> {
  return write.outcome === 'written';
}

/**
 * The metadata part of the merge patch: the changed keys of labels and annotations (null removes one),
 * the finalizers whole.
 */
function metadataPatchOf(current: NodeClaim, wanted: NodeClaimState): Patch | undefined {
  const patch: Patch = {};
  const labels = wanted.labels && mapPatchOf(current.metadata.labels, wanted.labels);
  if (labels) patch.labels = labels;
  const annotations = wanted.annotations && mapPatchOf(current.metadata.annotations, wanted.annotations);
  if (annotations) patch.annotations = annotations;
  if (wanted.finalizers && !plainEqual(current.metadata.finalizers ?? [], wanted.finalizers))
    patch.finalizers = wanted.finalizers;
  return Object.keys(patch).length > 0 ? patch : undefined;
}

function mapPatchOf(
  current: Record<string, string> | undefined,
  wanted: Record<string, string>,
): Record<string, string | null> | undefined {
  const patch: Record<string, string | null> = {};
  for (const [key, value] of Object.entries(wanted)) if (current?.[key] !== value) patch[key] = value;
  for (const key of Object.keys(current ?? {})) if (!(key in wanted)) patch[key] = null;
  return Object.keys(patch).length > 0 ? patch : undefined;
}

/**
 * The status part: undefined when the status is as wanted (condition order does not count); otherwise
 * the keys that changed, a key no longer wanted as null, and the conditions whole when they changed.
 */
function statusPatchOf(
  current: NodeClaimStatus | undefined,
  wanted: NodeClaimStatus | undefined,
): Patch | undefined {
  if (wanted === undefined || !statusChanged(current, wanted)) return undefined;
  const { conditions: currentConditions, ...currentRest } = current ?? {};
  const { conditions: wantedConditions, ...wantedRest } = wanted;
  const patch = (objectPatchOf(currentRest, wantedRest) ?? {}) as Patch;
  if (statusChanged({ conditions: currentConditions ?? [] }, { conditions: wantedConditions ?? [] }))
    patch.conditions = wantedConditions ?? null;
  return patch;
}

/** RFC 7386 merge patch from `current` to `wanted`: objects recurse, anything else replaces, null removes. */
function objectPatchOf(current: object, wanted: object): Patch | undefined {
  const before = current as Patch;
  const after = wanted as Patch;
  const patch: Patch = {};
  for (const [key, value] of Object.entries(after)) {
    if (value === undefined || plainEqual(before[key], value)) continue;
    const nested =
      isPlainObject(value) && isPlainObject(before[key]) ? objectPatchOf(before[key], value) : value;
    if (nested !== undefined) patch[key] = nested;
  }
  for (const [key, value] of Object.entries(before))
    if (value !== undefined && after[key] === undefined) patch[key] = null;
  return Object.keys(patch).length > 0 ? patch : undefined;
}

function isPlainObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The NodeClaim as a `kubectl describe`-able event target. */
export function nodeClaimTarget(nodeClaim: NodeClaim): {
  apiVersion: string;
  kind: string;
  name: string;
  uid?: string;
} {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    name: nodeClaim.metadata.name,
    ...(nodeClaim.metadata.uid ? { uid: nodeClaim.metadata.uid } : {}),
  };
}
