// An in-memory sweep Lease with the contract the sweep relies on: one holder at a time until the lease's
// duration has passed since its last renewal (judged with the caller's clock by leaseIsAvailable, as the
// real Lease is), renewals by the holder only, and a release that frees it at once. A test seeds another
// holder with `holdFor` and asserts on `record` and `acquisitions`.
import {
  leaseIsAvailable,
  type LeaseAttempt,
  type LeaseOptions,
  type LeaseRecord,
  type Leases,
} from '../../shared/lifecycle/sweep/lease.js';

export class FakeLeases implements Leases {
  /** The Lease as stored; undefined when nobody holds it. */
  record: LeaseRecord | undefined;
  /** Every holder that took the lease, in order. */
  readonly acquisitions: string[] = [];

  /** Someone else holds the lease, renewed at `renewTime`. */
  holdFor(holderIdentity: string, renewTime: Date, durationSeconds: number): void {
    this.record = { holderIdentity, renewTime, durationSeconds };
  }

  async tryAcquire(options: LeaseOptions, holderIdentity: string, now: () => Date): Promise<LeaseAttempt> {
    if (!leaseIsAvailable(this.record, holderIdentity, now())) {
      return { held: undefined, holder: this.record?.holderIdentity ?? '' };
    }
    this.record = { holderIdentity, renewTime: now(), durationSeconds: options.durationSeconds };
    this.acquisitions.push(holderIdentity);
    const holds = () => this.record?.holderIdentity === holderIdentity;
    return {
      held: {
        holderIdentity,
        renew: async () => {
          if (!holds()) return false;
          this.record = { holderIdentity, renewTime: now(), durationSeconds: options.durationSeconds };
          return true;
        },
        release: async () => {
          if (holds()) this.record = undefined;
        },
      },
    };
  }
}
