// Routes a bridge event to the lifecycle phase that owns it. The event only names an object; the phase
// reads its current state, so a late, duplicated or reordered event does the right thing or nothing.
import { bridgeProbeOf, parseObjectChangeEvent } from '../../events/cloud-event.js';
import type { HandlerContext } from '../../runtime/definitions.js';
import type { LifecycleDependencies } from '../dependencies.js';
import { describeEvictionNoticeOutcome, repairOnEvictionNotice } from './eviction-notice.js';
import { disruptAfterDeletion } from './freed-slot.js';
import { wakeOnInitialized } from '../node-join/initialized-wake.js';
import { reconcileLaunch } from '../launch/launch.js';
import { signalProvisioning } from '../provisioning/signal.js';
import { describeNodeEventOutcome, registerNodeFromEvent } from '../node-join/registration.js';
import { needsTermination, reconcileTermination } from '../termination/termination.js';

export async function handleObjectEvent(
  deps: LifecycleDependencies,
  message: unknown,
  context: Pick<HandlerContext, 'orchestrations' | 'invocationId' | 'log'>,
): Promise<void> {
  // The bridge's readiness probe names no object: it only proved that the bridge may send. Dropped here,
  // so it neither reaches a phase nor the poison queue.
  const probe = bridgeProbeOf(message);
  if (probe) {
    context.log.debug('bridge readiness probe; nothing to do', { eventId: probe.id, source: probe.source });
    return;
  }
  // A malformed message throws MalformedEventError before anything is read or written; the host retries
  // it and then moves it to the poison queue with this error's message as the reason.
  const event = parseObjectChangeEvent(message);
  const { kind, name, uid, changeType, nodePool } = event.data;
  const log = context.log.with({ eventId: event.id, kind, name, uid, changeType });

  switch (kind) {
    case 'NodeClaim': {
      const nodeClaim = await deps.objects.nodeClaims.get(name);
      if (!nodeClaim) {
        if (!nodePool) {
          log.debug('NodeClaim is gone; nothing to do');
          return;
        }
        const outcome = await disruptAfterDeletion(deps, context, nodePool);
        if (!outcome.ran) {
          log.debug("NodeClaim is gone; its NodePool's pass in progress runs once more for it", { nodePool });
          return;
        }
        const { result, runs } = outcome;
        log.info('NodeClaim is gone; its NodePool disrupted into the freed budget', {
          nodePool,
          passes: runs,
          ...(result.status === 'skipped' ? {} : { steps: result.steps }),
        });
        return;
      }
      if (needsTermination(nodeClaim)) {
        const outcome = await reconcileTermination(deps, nodeClaim, context);
        log.info('termination reconciled', { outcome });
        return;
      }
      const result = await reconcileLaunch(deps, name, context);
      log.info('launch reconciled', { ...result });
      return;
    }
    case 'Node': {
      // Read once for both: registration (or initialization), then a spot eviction notice.
      const node = await deps.nodes.get(name);
      if (!node) {
        log.debug('Node is gone; nothing to do');
        return;
      }
      const result = await registerNodeFromEvent(deps, node);
      log.info('node event reconciled', describeNodeEventOutcome(result));
      await wakeOnInitialized(context.orchestrations, log, result);
      // A spot eviction notice is answered now, not at the next sweep: Azure evicts about 30 s after it.
      const notice = await repairOnEvictionNotice(deps, context, node);
      if (notice.outcome === 'repair-run') {
        log.info('spot eviction notice: node repair run', describeEvictionNoticeOutcome(notice));
      } else {
        log.debug('spot eviction notice: nothing to repair', describeEvictionNoticeOutcome(notice));
      }
      return;
    }
    case 'Pod': {
      // The bridge forwards only pods that became provisionable; the window re-reads every one of them.
      const outcome = await signalProvisioning(
        context.orchestrations,
        deps.settings.provisioning,
        deps.now(),
      );
      log.info('provisioning signalled', { outcome });
      return;
    }
    case 'NodePool':
    case 'AKSNodeClass':
      // Drift and budgets are reconciled by the lifecycle sweep, which reads these kinds.
      log.debug('event left to the lifecycle sweep');
      return;
  }
}
