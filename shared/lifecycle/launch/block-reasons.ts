// Why a launch waits instead of failing: the NodeClaim's AKSNodeClass or NodePool is missing, its
// requirements are invalid, or no node image resolves for the chosen offering. The launch writes the
// reason as Launched=False with an event.
export const LaunchBlockReasons = {
  nodeClassNotFound: 'NodeClassNotFound',
  nodePoolNotFound: 'NodePoolNotFound',
  invalidRequirements: 'InvalidRequirements',
  imageNotResolved: 'ImageNotResolved',
} as const;

export type LaunchBlockReason = (typeof LaunchBlockReasons)[keyof typeof LaunchBlockReasons];

// The sweep launches these again on its own, so creating or fixing the class lets the NodeClaim launch
// without a new event. ImageNotResolved is not among them.
const retriedBySweep: ReadonlySet<string> = new Set<LaunchBlockReason>([
  LaunchBlockReasons.nodeClassNotFound,
  LaunchBlockReasons.nodePoolNotFound,
  LaunchBlockReasons.invalidRequirements,
]);

export function isRetriedLaunchBlock(reason: string): boolean {
  return retriedBySweep.has(reason);
}
