import { DEFAULT_SWEEP_SCHEDULE } from '../shared/config/settings.js';
import { getDependencies } from '../shared/lifecycle/dependencies.js';
import { runLifecycleSweep } from '../shared/lifecycle/sweep/sweep.js';
import type { TimerFunctionDefinition } from '../shared/runtime/definitions.js';
import { registerWithAzureFunctions } from '../shared/runtime/azure-functions.js';

/**
 * Timer-triggered: registration, initialization and liveness for every NodeClaim, plus cleanup. The
 * schedule (NCRONTAB with seconds) is read when the module loads, because the Functions host reads a
 * timer's schedule at indexing time; SWEEP_SCHEDULE is validated with the other settings on first run.
 */
export const lifecycleSweep: TimerFunctionDefinition = {
  kind: 'timer',
  name: 'lifecycleSweep',
  schedule: process.env.SWEEP_SCHEDULE?.trim() || DEFAULT_SWEEP_SCHEDULE,
  handler: async (_timer, context) => {
    const result = await runLifecycleSweep(getDependencies(), context);
    if (result.status === 'skipped') context.log.info('lifecycle sweep skipped', { reason: result.reason });
  },
};

registerWithAzureFunctions(lifecycleSweep);
