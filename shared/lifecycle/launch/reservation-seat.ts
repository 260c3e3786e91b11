// Taking one of a capacity reservation's slots for the NodeClaim about to send its VM PUT. Several
// launches (on several instances, or one host's concurrent messages) may read the same last slot, so the
// claimants agree on who goes in, in two checks, each on a fresh list and answered by the cloud provider
// against the reservations as its plan read them: the claim order (holdsReservationSeat) lets through the
// launches that come first by their claims, then a commitment written on the NodeClaim orders those by
// the API server's own write order (holdsCommittedSeat), so no interleaving of concurrent launches
// overallocates the group (docs/capacity-reservations.md). The taking lives in the lifecycle, not the
// cloud provider, because the commitment is a NodeClaim write, and NodeClaims are written by the
// lifecycle's one writer (../nodeclaims/nodeclaim-writes.ts); the provider writes no Kubernetes object.
import { RESERVATION_COMMITTED_ANNOTATION } from '../../decisions/launch-annotations.js';
import type { NodeClaim } from '../../models/index.js';
import { WellKnown } from '../../models/karpenter.js';
import { ReservationContendedError, type ReservationRecords } from '../../cloudprovider/types.js';
import type { LifecycleDependencies } from '../dependencies.js';
import { writeNodeClaim } from '../nodeclaims/nodeclaim-writes.js';

/**
 * The NodeClaim as stored with its commitment, or undefined when it is gone. Throws
 * ReservationContendedError (having given its commitment back) when other launches hold every slot.
 */
export async function takeReservationSeat(
  deps: Pick<LifecycleDependencies, 'objects' | 'cloud'>,
  records: ReservationRecords,
  reservationId: string,
  nodeClaim: NodeClaim,
): Promise<NodeClaim | undefined> {
  const name = nodeClaim.metadata.name;
  if (!deps.cloud.holdsReservationSeat(records, reservationId, await listClaimants(deps), name))
    throw new ReservationContendedError(`reservation ${reservationId} is contended`);
  const commit = await writeNodeClaim(deps.objects, nodeClaim, (current) => ({
    annotations: { ...current.metadata.annotations, [RESERVATION_COMMITTED_ANNOTATION]: reservationId },
  }));
  if (commit.outcome === 'gone') return undefined;
  const committed = commit.nodeClaim;
  const listed = await listClaimants(deps);
  if (
    deps.cloud.holdsCommittedSeat(
      records,
      reservationId,
      listed,
      name,
      committed.metadata.resourceVersion ?? '',
    )
  )
    return committed;
  await writeNodeClaim(deps.objects, committed, (current) => {
    const { [RESERVATION_COMMITTED_ANNOTATION]: _withdrawn, ...annotations } =
      current.metadata.annotations ?? {};
    return { annotations };
  });
  throw new ReservationContendedError(`reservation ${reservationId} is taken by earlier launches`);
}

/** The NodeClaims of this cluster that carry a reservation label, read from the API server. */
function listClaimants(deps: Pick<LifecycleDependencies, 'objects'>): Promise<NodeClaim[]> {
  return deps.objects.nodeClaims.list({ labelSelector: WellKnown.capacityReservationIdLabel });
}
