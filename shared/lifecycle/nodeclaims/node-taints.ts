// Adds or removes karpenter.sh/disrupted:NoSchedule on a Node: termination's drain and a replacement's
// old node both use it.
// Each write is guarded by the Node's resourceVersion (see decisions/node-patch.ts); a conflict re-reads
// and retries, and a Node that is already as wanted costs one read and no write.
import { guardedNodePatch } from '../../decisions/node-patch.js';
import { isNotFound } from '../../kube/errors.js';
import { retryOnConflict } from '../../kube/retry-on-conflict.js';
import { WellKnown } from '../../models/karpenter.js';
import type { Node, Taint } from '../../models/kube.js';
import type { LifecycleDependencies } from '../dependencies.js';

export const disruptedTaint: Taint = { key: WellKnown.disruptedTaintKey, effect: 'NoSchedule' };

const isDisruptedTaint = (t: Taint): boolean =>
  t.key === WellKnown.disruptedTaintKey && t.effect === 'NoSchedule';

export function taintsWithDisrupted(taints: readonly Taint[] | undefined, now: Date): Taint[] | undefined {
  const current = taints ?? [];
  if (current.some(isDisruptedTaint)) return undefined;
  return [...current, { ...disruptedTaint, timeAdded: now.toISOString().replace(/\.\d{3}Z$/, 'Z') }];
}

export function taintsWithoutDisrupted(taints: readonly Taint[] | undefined): Taint[] | undefined {
  const current = taints ?? [];
  return current.some(isDisruptedTaint) ? current.filter((t) => !isDisruptedTaint(t)) : undefined;
}

/** Applies `change` to one Node's taints until it sticks; returns the Node as stored, or undefined if gone. */
async function updateTaints(
  deps: LifecycleDependencies,
  node: Node,
  change: (taints: readonly Taint[] | undefined) => Taint[] | undefined,
): Promise<Node | undefined> {
  return retryOnConflict(
    node,
    async (current) => {
      const taints = change(current.spec.taints);
      if (taints === undefined) return current;
      try {
        return await deps.nodes.patch(
          current.metadata.name,
          guardedNodePatch(current, { ...current, spec: { ...current.spec, taints } }),
        );
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
    },
    (stale) => deps.nodes.get(stale.metadata.name),
  );
}

export async function taintNodeDisrupted(deps: LifecycleDependencies, node: Node): Promise<Node | undefined> {
  return updateTaints(deps, node, (taints) => taintsWithDisrupted(taints, deps.now()));
}

export async function untaintNodeDisrupted(
  deps: LifecycleDependencies,
  node: Node,
): Promise<Node | undefined> {
  return updateTaints(deps, node, taintsWithoutDisrupted);
}
