// In-memory Leases with the contract the app relies on: per Lease name, one holder at a time until the
// lease's duration has passed since its last renewal (judged with the caller's clock by leaseIsAvailable,
// as the real Lease is), renewals by the holder only, and a release that frees it at once. The sweep's
// Lease is the default one a test reads: `holdFor` seeds another holder, `record` and `acquisitions` are
// its; `recordOf` and `acquisitionsOf` name any other (the disruption-marks Lease).
import {
  leaseIsAvailable,
  type LeaseAttempt,
  type LeaseOptions,
  type LeaseRecord,
  type Leases,
} from '../../shared/kube/lease.js';
import { DEFAULT_SWEEP_LEASE } from '../../shared/lifecycle/sweep/sweep.js';

export class FakeLeases implements Leases {
  private readonly records = new Map<string, LeaseRecord>();
  private readonly taken = new Map<string, string[]>();

  /** The sweep Lease as stored; undefined when nobody holds it. */
  get record(): LeaseRecord | undefined {
    return this.recordOf(DEFAULT_SWEEP_LEASE.name);
  }

  /** Every holder that took the sweep Lease, in order. */
  get acquisitions(): readonly string[] {
    return this.acquisitionsOf(DEFAULT_SWEEP_LEASE.name);
  }

  recordOf(name: string): LeaseRecord | undefined {
    return this.records.get(name);
  }

  acquisitionsOf(name: string): readonly string[] {
    return this.taken.get(name) ?? [];
  }

  /** Someone else holds the Lease (the sweep's unless named), renewed at `renewTime`. */
  holdFor(
    holderIdentity: string,
    renewTime: Date,
    durationSeconds: number,
    name = DEFAULT_SWEEP_LEASE.name,
  ): void {
    this.records.set(name, { holderIdentity, renewTime, durationSeconds });
  }

  async tryAcquire(options: LeaseOptions, holderIdentity: string, now: () => Date): Promise<LeaseAttempt> {
    const { name } = options;
    const current = this.records.get(name);
    if (!leaseIsAvailable(current, holderIdentity, now())) {
      return { held: undefined, holder: current?.holderIdentity ?? '' };
    }
    this.records.set(name, { holderIdentity, renewTime: now(), durationSeconds: options.durationSeconds });
    this.taken.set(name, [...this.acquisitionsOf(name), holderIdentity]);
    const holds = () => this.records.get(name)?.holderIdentity === holderIdentity;
    return {
      held: {
        holderIdentity,
        renew: async () => {
          if (!holds()) return false;
          this.records.set(name, {
            holderIdentity,
            renewTime: now(),
            durationSeconds: options.durationSeconds,
          });
          return true;
        },
        release: async () => {
          if (holds()) this.records.delete(name);
        },
      },
    };
  }
}
