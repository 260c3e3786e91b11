// Wakes the disruption command (../disruption/executor-v2.ts) waiting for a replacement NodeClaim, at the moment the replacement's fate
// is written: Initialized=True (node-join), or Launched=False (the launch's failure). The command then
// goes on at once instead of polling, so its Durable cost no longer grows with how long a replacement
// takes, and no activity slot is held by a wait. The replacement carries its command's instance ID in an
// annotation, written when the executor created it.
//
// The event is a hint, never the only way on: the executor still checks every replacement on a slow
// fallback timer, so a wake lost to a host killed between the write and the raise, or a replacement made
// before the annotation existed, costs only time. A wake for a command that has already ended is normal
// (the fallback check got there first) and is dropped.
import { DisruptionAnnotations } from '../../decisions/disruption-state.js';
import type { NodeClaim } from '../../models/karpenter.js';
import type { Logger } from '../../observability/logger.js';
import { isOrchestrationActive, type OrchestrationClient } from '../../runtime/definitions.js';
import { DisruptionNames } from '../../runtime/function-names.js';

/** The external event's payload: which replacement, and what was written on it. */
export interface ReplacementWake {
  replacement: string;
  status: 'Initialized' | 'Failed';
}

/** Woken; no command to wake (not a replacement, or made before the annotation); ended; or not reached. */
export type WakeOutcome = 'woken' | 'no-command' | 'command-ended' | 'unreached';

/**
 * Raises the wake on the command that created `nodeClaim`, if any. Never throws for a command that is
 * not running; a failure to reach a running one is logged and left to the fallback check (the write that
 * led here has succeeded and must not be retried for it).
 */
export async function wakeReplacementCommand(
  orchestrations: OrchestrationClient,
  log: Logger,
  nodeClaim: NodeClaim,
  status: ReplacementWake['status'],
): Promise<WakeOutcome> {
  const instanceId = nodeClaim.metadata.annotations?.[DisruptionAnnotations.command];
  if (!instanceId) return 'no-command';
  const wake: ReplacementWake = { replacement: nodeClaim.metadata.name, status };
  try {
    await orchestrations.raiseEvent(instanceId, DisruptionNames.replacementChanged, wake);
    log.debug('disruption command woken by its replacement', { instanceId, ...wake });
    return 'woken';
  } catch (error) {
    const current = await orchestrations.getStatus(instanceId).catch(() => null);
    if (current === undefined || (current !== null && !isOrchestrationActive(current)))
      return 'command-ended';
    log.warn('could not wake the disruption command of a replacement; its fallback check will see it', {
      instanceId,
      ...wake,
      error: error instanceof Error ? error.message : String(error),
    });
    return 'unreached';
  }
}
