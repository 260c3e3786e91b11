// JSON Patch (RFC 6902) between two states of the same Node, for the fields this project writes on Nodes:
// labels, annotations, finalizers, ownerReferences and taints.
//
// Why JSON Patch and not a PUT: the domain Node model carries only the fields the project reads, so a PUT
// built from it would erase everything else on the Node (status, podCIDR, configSource...). A patch
// touches exactly the fields that changed.
//
// Why the guard is a `replace` of /metadata/resourceVersion rather than a `test`: both stop the write if
// the Node changed since it was read, but a failed `test` makes the apiserver answer 422 Unprocessable
// Entity, indistinguishable from a malformed patch, while a stale resourceVersion in the patched object
// makes it answer 409 Conflict (optimistic-lock check in the generic registry store), the standard
// "re-read and retry" signal. With the guard in place, replacing whole arrays (taints, finalizers) is
// safe: nobody can have changed them between our read and our write.
import type { Node } from '../models/kube.js';
import { plainEqual } from './plain-equal.js';

export type JsonPatchOperation =
  | { op: 'add'; path: string; value: unknown }
  | { op: 'replace'; path: string; value: unknown }
  | { op: 'remove'; path: string }
  | { op: 'test'; path: string; value: unknown };

/** Escapes one JSON Pointer reference token (RFC 6901): label keys such as "karpenter.sh/nodepool" contain '/'. */
export function escapeJsonPointerToken(token: string): string {
  return token.replaceAll('~', '~0').replaceAll('/', '~1');
}

/**
 * The guarded patch that turns `before` into `after`. Returns [] when nothing differs, so the caller can
 * skip the request. Throws when `before` has no resourceVersion: an unguarded write could overwrite a
 * concurrent change, which is exactly what registration must never do.
 */
export function guardedNodePatch(before: Node, after: Node): JsonPatchOperation[] {
  const changes: JsonPatchOperation[] = [
    ...mapDiff('/metadata/labels', before.metadata.labels, after.metadata.labels),
    ...mapDiff('/metadata/annotations', before.metadata.annotations, after.metadata.annotations),
    ...wholeValueDiff('/metadata/finalizers', before.metadata.finalizers, after.metadata.finalizers),
    ...wholeValueDiff(
      '/metadata/ownerReferences',
      before.metadata.ownerReferences,
      after.metadata.ownerReferences,
    ),
    ...wholeValueDiff('/spec/taints', before.spec.taints, after.spec.taints),
  ];
  if (changes.length === 0) return [];
  const resourceVersion = before.metadata.resourceVersion;
  if (!resourceVersion) {
    throw new Error(
      `Node ${before.metadata.name} has no resourceVersion; refusing to build an unguarded patch`,
    );
  }
  return [{ op: 'replace', path: '/metadata/resourceVersion', value: resourceVersion }, ...changes];
}

function isEmptyMap(map: Record<string, string> | undefined): boolean {
  return map === undefined || Object.keys(map).length === 0;
}

function mapDiff(
  path: string,
  before: Record<string, string> | undefined,
  after: Record<string, string> | undefined,
): JsonPatchOperation[] {
  if (isEmptyMap(after)) return isEmptyMap(before) ? [] : [{ op: 'remove', path }];
  // A key-level "add" needs the parent object to exist and the apiserver omits empty maps, so write the
  // whole map when there was none (safe under the resourceVersion guard).
  if (before === undefined || isEmptyMap(before)) return [{ op: 'add', path, value: after }];
  const ops: JsonPatchOperation[] = [];
  const next = after ?? {};
  for (const [key, value] of Object.entries(next)) {
    const keyPath = `${path}/${escapeJsonPointerToken(key)}`;
    if (!(key in before)) ops.push({ op: 'add', path: keyPath, value });
    else if (before[key] !== value) ops.push({ op: 'replace', path: keyPath, value });
  }
  for (const key of Object.keys(before)) {
    if (!(key in next)) ops.push({ op: 'remove', path: `${path}/${escapeJsonPointerToken(key)}` });
  }
  return ops;
}

function wholeValueDiff(
  path: string,
  before: unknown[] | undefined,
  after: unknown[] | undefined,
): JsonPatchOperation[] {
  const beforeEmpty = before === undefined || before.length === 0;
  const afterEmpty = after === undefined || after.length === 0;
  if (afterEmpty) return beforeEmpty ? [] : [{ op: 'remove', path }];
  if (plainEqual(before, after)) return [];
  // "add" on an existing member replaces it and on a missing member creates it (RFC 6902 4.1).
  return [{ op: 'add', path, value: after }];
}
