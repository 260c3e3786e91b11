import { DEFAULT_GC_SCHEDULE } from '../shared/config/settings.js';
import { getDependencies } from '../shared/lifecycle/dependencies.js';
import { collectOrphanVms as collect } from '../shared/lifecycle/garbage-collection.js';
import type { TimerFunctionDefinition } from '../shared/runtime/definitions.js';
import { registerWithAzureFunctions } from '../shared/runtime/azure-functions.js';

/**
 * Timer-triggered: deletes VMs tagged for this cluster whose NodeClaim no longer exists. The schedule
 * (NCRONTAB with seconds, GC_SCHEDULE) is read when the module loads, as the Functions host expects.
 */
export const collectOrphanVms: TimerFunctionDefinition = {
  kind: 'timer',
  name: 'collectOrphanVms',
  schedule: process.env.GC_SCHEDULE?.trim() || DEFAULT_GC_SCHEDULE,
  handler: async () => {
    await collect(getDependencies());
  },
};

registerWithAzureFunctions(collectOrphanVms);
