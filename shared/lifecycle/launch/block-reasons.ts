// Why a launch waits instead of failing: the NodeClaim's AKSNodeClass or NodePool is missing, a field of
// its AKSNodeClass does not parse (the class is then ValidationSucceeded=False too), its requirements are
// invalid, no node image resolves for the chosen offering, Azure refused the VM for
// want of a permission, or a VM of someone else's has the NodeClaim's VM name. The launch writes the reason as Launched=False with an event.
export const LaunchBlockReasons = {
  nodeClassNotFound: 'NodeClassNotFound',
  /** A field of the AKSNodeClass that would reach the node does not parse (nodeclass-validation.ts). */
  nodeClassInvalid: 'NodeClassInvalid',
  nodePoolNotFound: 'NodePoolNotFound',
  invalidRequirements: 'InvalidRequirements',
  imageNotResolved: 'ImageNotResolved',
  authorizationFailed: 'AuthorizationFailed',
  /** A VM with the NodeClaim's VM name exists whose tags name another cluster or NodeClaim. */
  vmNameConflict: 'VMNameConflict',
} as const;

export type LaunchBlockReason = (typeof LaunchBlockReasons)[keyof typeof LaunchBlockReasons];

// The sweep launches these again on its own, so creating or fixing the class lets the NodeClaim launch
// without a new event. ImageNotResolved is not among them, nor AuthorizationFailed: a role assignment is
// nothing the sweep can see change, so the NodeClaim waits, visibly, until liveness replaces it after the
// registration timeout (one attempt per NodeClaim, never a loop).
const retriedBySweep: ReadonlySet<string> = new Set<LaunchBlockReason>([
  LaunchBlockReasons.nodeClassNotFound,
  LaunchBlockReasons.nodeClassInvalid,
  LaunchBlockReasons.nodePoolNotFound,
  LaunchBlockReasons.invalidRequirements,
]);

export function isRetriedLaunchBlock(reason: string): boolean {
  return retriedBySweep.has(reason);
}
