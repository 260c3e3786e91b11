// NodeClaims opened in this solve, kept sorted by pod count so the emptiest is tried first, as
// Karpenter re-sorts its in-flight NodeClaims before each pod (scheduler.go addToInflightNode). Keeping
// the order incrementally (a claim that gains a pod moves past the claims it now outnumbers) avoids
// sorting every open NodeClaim for every pod.
import type { NewClaim } from './new-claim.js';

export class ClaimQueue {
  private readonly sorted: NewClaim[] = [];
  private readonly created: NewClaim[] = [];

  push(claim: NewClaim): void {
    this.created.push(claim);
    const at = this.firstWithMoreThan(claim.pods.length - 1);
    this.sorted.splice(at, 0, claim);
    for (let i = at; i < this.sorted.length; i++) (this.sorted[i] as NewClaim).position = i;
  }

  /** Call after `claim` gained one pod. */
  grew(claim: NewClaim): void {
    const count = claim.pods.length;
    // Claims from its position up to the first with `count` pods or more had count - 1, like it did.
    const end = this.firstWithMoreThan(count - 1, claim);
    const last = end - 1;
    if (last <= claim.position) return;
    const other = this.sorted[last] as NewClaim;
    this.sorted[last] = claim;
    this.sorted[claim.position] = other;
    other.position = claim.position;
    claim.position = last;
  }

  emptiestFirst(): readonly NewClaim[] {
    return this.sorted;
  }

  inCreationOrder(): readonly NewClaim[] {
    return this.created;
  }

  /** Index of the first claim with more than `count` pods (binary search). */
  private firstWithMoreThan(count: number, grown?: NewClaim): number {
    let low = 0;
    let high = this.sorted.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const claim = this.sorted[middle] as NewClaim;
      // The claim that just grew still sits where its old count belongs.
      const pods = claim === grown ? claim.pods.length - 1 : claim.pods.length;
      if (pods > count) high = middle;
      else low = middle + 1;
    }
    return low;
  }
}
