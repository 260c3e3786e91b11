// What the launch-leftovers step remembers from one sweep to the next in this process: the NodeClaim UIDs
// it saw, and the gone ones it is still cleaning up after (../sweep/launch-leftovers.ts says why that
// memory is in the process). Every step's context carries it (sweep-step.ts), so it sits beside the step
// interface rather than in the sweep's folder, which lists the steps and so imports them.
export interface LeftoverMemory {
  /** UIDs of the NodeClaims the previous sweep saw; undefined before this process's first sweep. */
  previous: Set<string> | undefined;
  /** Gone UIDs still being cleaned up, with the number of attempts made. */
  pending: Map<string, number>;
}

export function createLeftoverMemory(): LeftoverMemory {
  return { previous: undefined, pending: new Map() };
}
