// The functions started from outside the app: bridge events from the Storage queue, and two timers.
// A timer's schedule (NCRONTAB with seconds) is read when this module loads, because the Functions host
// reads it at indexing time; the settings validate the same variables on first run.
import { timerSchedules } from '../shared/config/settings.js';
import type { DependencySource } from '../shared/lifecycle/dependencies.js';
import { collectOrphanVms } from '../shared/lifecycle/garbage-collection/garbage-collection.js';
import { handleObjectEvent } from '../shared/lifecycle/bridge-events/object-events.js';
import { runLifecycleSweep } from '../shared/lifecycle/sweep/sweep.js';
import type { FunctionDefinition } from '../shared/runtime/definitions.js';
import { TriggerNames } from '../shared/runtime/function-names.js';

export function triggerFunctions(getDependencies: DependencySource): readonly FunctionDefinition[] {
  return [
    // One message per Kubernetes object change, published by the event bridge.
    {
      kind: 'queue',
      name: TriggerNames.objectEvents,
      // Resolved from app settings by the Functions host (and by the local host), like every %NAME%.
      queueName: '%EVENTS_QUEUE_NAME%',
      connection: 'AzureWebJobsStorage',
      handler: (message, context) => handleObjectEvent(getDependencies(), message, context),
    },
    // Launch safety net, registration, initialization, liveness, termination, drift, disruption budgets and
    // static NodePools for every NodeClaim (shared/lifecycle/sweep/steps.ts).
    {
      kind: 'timer',
      name: TriggerNames.lifecycleSweep,
      schedule: timerSchedules().sweep,
      handler: async (_timer, context) => {
        const result = await runLifecycleSweep(getDependencies(), context);
        if (result.status === 'skipped')
          context.log.info('lifecycle sweep skipped', { reason: result.reason });
      },
    },
    // Deletes VMs tagged for this cluster whose NodeClaim no longer exists (GC_SCHEDULE).
    {
      kind: 'timer',
      name: TriggerNames.collectOrphanVms,
      schedule: timerSchedules().gc,
      handler: async () => {
        await collectOrphanVms(getDependencies());
      },
    },
  ];
}
