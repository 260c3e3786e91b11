// Reads and writes the NodePool's memory of failed consolidation commands (decisions/consolidation/
// command-memory.ts): the sweep passes the held keys to the search, a failed command is recorded with its
// backoff, and a command that succeeded clears the memory. The write is a guarded merge patch of one
// annotation, so it never touches the user's spec.
import {
  CONSOLIDATION_FAILURES_ANNOTATION,
  heldCommandKeys,
  parseCommandMemory,
  rememberFailedCommand,
  serializeCommandMemory,
  type FailedCommand,
} from '../../decisions/consolidation/command-memory.js';
import { retryOnConflict } from '../../kube/retry-on-conflict.js';
import type { NodePool } from '../../models/karpenter.js';
import type { LifecycleDependencies } from '../dependencies.js';

export function heldConsolidationCommands(nodePool: NodePool, now: Date): Set<string> {
  return heldCommandKeys(
    parseCommandMemory(nodePool.metadata.annotations?.[CONSOLIDATION_FAILURES_ANNOTATION]),
    now,
  );
}

/** Records that the command `key` failed; returns the record (with its hold) or undefined if the pool is gone. */
export async function rememberFailedConsolidation(
  deps: Pick<LifecycleDependencies, 'objects' | 'now' | 'settings'>,
  nodePoolName: string,
  failure: { key: string; why: string },
): Promise<FailedCommand | undefined> {
  const nodePool = await deps.objects.nodePools.get(nodePoolName);
  if (!nodePool) return undefined;
  const baseMs = deps.settings.disruption.replacementBackoffMinutes * 60_000;
  return retryOnConflict(
    nodePool,
    async (current) => {
      const memory = rememberFailedCommand(
        parseCommandMemory(current.metadata.annotations?.[CONSOLIDATION_FAILURES_ANNOTATION]),
        failure,
        deps.now(),
        baseMs,
      );
      await deps.objects.nodePools.mergePatch(current.metadata.name, {
        metadata: {
          resourceVersion: current.metadata.resourceVersion,
          annotations: { [CONSOLIDATION_FAILURES_ANNOTATION]: serializeCommandMemory(memory) },
        },
      });
      return memory.commands.find((c) => c.key === failure.key);
    },
    () => deps.objects.nodePools.get(nodePoolName),
  );
}

/** A command succeeded: the NodePool's failures are forgotten (written only when there are any). */
export async function forgetConsolidationFailures(
  deps: Pick<LifecycleDependencies, 'objects'>,
  nodePoolName: string,
): Promise<void> {
  const nodePool = await deps.objects.nodePools.get(nodePoolName);
  if (nodePool?.metadata.annotations?.[CONSOLIDATION_FAILURES_ANNOTATION] === undefined) return;
  await deps.objects.nodePools.mergePatch(nodePoolName, {
    metadata: { annotations: { [CONSOLIDATION_FAILURES_ANNOTATION]: null } },
  });
}
