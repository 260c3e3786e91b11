// The annotations a launch's claim writes on its NodeClaim, cloud-agnostic: the lifecycle writes them
// (launch's claim, the reservation seat's commitment) and reads them (registration revokes the attempt's
// bootstrap token), as Karpenter's core keeps its own NodeClaim annotations. The cloud provider reads them
// too (the bootstrap token of the attempt, the claimants of a reservation), which is why they live here
// rather than with either side.

/** The annotation a launch's claim writes with its attempt (the invocation that claimed the launch). */
export const LAUNCH_ATTEMPT_ANNOTATION = 'karpenter.azure.com/launch-attempt';

/**
 * When a launch claimed its reservation slot (RFC 3339 with milliseconds), written with the reservation
 * label in the launch's claim, before it lists the other claimants.
 */
export const RESERVATION_CLAIMED_AT_ANNOTATION = 'karpenter.azure.com/reservation-claimed-at';

/**
 * Set (to the reservation's ID) by a launch that held a seat by its claim and is about to send its VM
 * PUT, before it lists the claimants a second time (holdsCommittedSeat).
 */
export const RESERVATION_COMMITTED_ANNOTATION = 'karpenter.azure.com/reservation-committed';
