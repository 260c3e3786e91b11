// Stops the launch monitors of NodeClaims that are gone and purges their finished orchestrations
// (../launch-leftovers.ts explains how "gone" is found without listing instances).
import { cleanUpLeftovers, MAX_CLEANUP_ATTEMPTS, noteSweepUids } from '../launch-leftovers.js';
import { forEachObject, type SweepStep } from '../../sweep-step/sweep-step.js';

export const launchLeftoversStep: SweepStep = {
  name: 'launch-leftovers',
  async run(context) {
    const seen = new Set(
      context.view.snapshot.nodeClaims
        .map((n) => n.metadata.uid)
        .filter((uid): uid is string => Boolean(uid)),
    );
    const memory = noteSweepUids(context.memory.leftovers, seen);
    context.memory.leftovers = memory;
    const report = await forEachObject(
      context,
      'launch-leftovers',
      [...memory.pending.keys()],
      String,
      async (uid) => {
        const attempts = (memory.pending.get(uid) ?? 0) + 1;
        const result = await cleanUpLeftovers(context.orchestrations, uid, context.log);
        if (result === 'clean' || attempts >= MAX_CLEANUP_ATTEMPTS) memory.pending.delete(uid);
        else memory.pending.set(uid, attempts);
        return true;
      },
    );
    return report;
  },
};
