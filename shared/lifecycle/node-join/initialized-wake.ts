// After node-join, on either of its paths (the bridge's Node event, the sweep's initialization step): a
// replacement that this call moved to Initialized=True wakes the disruption command waiting for it
// (../nodeclaims/replacement-wake.ts). Only the call that wrote the transition wakes, so a Node event
// repeated, or a sweep that finds it already done, raises nothing.
import type { Logger } from '../../observability/logger.js';
import type { OrchestrationClient } from '../../runtime/definitions.js';
import { wakeReplacementCommand, type WakeOutcome } from '../nodeclaims/replacement-wake.js';
import type { NodeEventOutcome } from './registration.js';

export async function wakeOnInitialized(
  orchestrations: OrchestrationClient,
  log: Logger,
  result: NodeEventOutcome,
): Promise<WakeOutcome | undefined> {
  if (result.outcome !== 'initialized' || !result.statusWritten) return undefined;
  return wakeReplacementCommand(orchestrations, log, result.nodeClaim, 'Initialized');
}
