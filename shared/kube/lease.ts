// The sweep's singleton: a coordination.k8s.io/v1 Lease in the cluster it sweeps. Azure's timer trigger
// already runs one occurrence at a time per Function App, but that lock lives in the app's storage
// account: a second app pointed at the same cluster (a slot swap, a redeploy under another name, the local
// stack next to the deployed one) or a sweep that outlives the host's lock would overlap. The Lease sits
// next to the objects the sweep writes, so whoever can write them is subject to it. Its writes are
// resourceVersion-guarded, so two contenders can never both believe they hold it.
//
// Expiry is judged from the stored renewTime against this process's clock, which assumes clocks agree to
// well within the lease duration (NTP-synced Azure hosts do). The holder renews at a third of the duration
// while it works and releases the lease when done, so a crashed holder blocks sweeps for one duration at
// most and a healthy one never for longer than its own run.
import { CoordinationV1Api, V1MicroTime, type V1Lease } from '@kubernetes/client-node';
import { isAlreadyExists, isConflict, isNotFound } from './errors.js';
import { makeTimedApiClient, type KubeClients } from './client.js';

export interface LeaseOptions {
  name: string;
  namespace: string;
  durationSeconds: number;
}

export interface LeaseRecord {
  holderIdentity?: string;
  renewTime?: Date;
  durationSeconds?: number;
}

/** Pure: may `me` take the lease described by `record` at `now`? */
export function leaseIsAvailable(record: LeaseRecord | undefined, me: string, now: Date): boolean {
  if (!record?.holderIdentity || record.holderIdentity === me) return true;
  if (record.renewTime === undefined || record.durationSeconds === undefined) return true;
  return record.renewTime.getTime() + record.durationSeconds * 1000 <= now.getTime();
}

function asDate(value: unknown): Date | undefined {
  if (value instanceof Date) return value;
  if (typeof value !== 'string') return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

function recordOf(lease: V1Lease): LeaseRecord {
  const spec = lease.spec ?? {};
  const renewTime = asDate(spec.renewTime);
  return {
    ...(spec.holderIdentity ? { holderIdentity: spec.holderIdentity } : {}),
    ...(renewTime ? { renewTime } : {}),
    ...(spec.leaseDurationSeconds !== undefined ? { durationSeconds: spec.leaseDurationSeconds } : {}),
  };
}

export interface HeldLease {
  readonly holderIdentity: string;
  /** Extends the lease; false when it was lost (taken over after expiry, or deleted). */
  renew(): Promise<boolean>;
  /** Gives the lease up so the next sweep need not wait for it to expire. */
  release(): Promise<void>;
}

export type LeaseAttempt = { held: HeldLease } | { held: undefined; holder: string };

/** The sweep's way to the Lease, as a port on the dependencies (a unit test gives an in-memory one). */
export interface Leases {
  tryAcquire(options: LeaseOptions, holderIdentity: string, now: () => Date): Promise<LeaseAttempt>;
}

/** The Lease in the cluster, through the API server client. */
export function kubeLeases(kube: () => Promise<KubeClients>): Leases {
  return {
    tryAcquire: async (options, holderIdentity, now) =>
      tryAcquireLease(await kube(), options, holderIdentity, now),
  };
}

/** Takes the lease for `holderIdentity` if it is free or expired; otherwise says who holds it. */
export async function tryAcquireLease(
  clients: KubeClients,
  options: LeaseOptions,
  holderIdentity: string,
  now: () => Date,
): Promise<LeaseAttempt> {
  const api = makeTimedApiClient(clients.config, CoordinationV1Api);
  const { name, namespace } = options;
  const spec = (at: Date, transitions: number) => ({
    holderIdentity,
    leaseDurationSeconds: options.durationSeconds,
    acquireTime: new V1MicroTime(at),
    renewTime: new V1MicroTime(at),
    leaseTransitions: transitions,
  });

  let current: V1Lease;
  try {
    current = await api.readNamespacedLease({ name, namespace });
  } catch (error) {
    if (!isNotFound(error)) throw error;
    try {
      current = await api.createNamespacedLease({
        namespace,
        body: { metadata: { name, namespace }, spec: spec(now(), 0) },
      });
      return { held: heldLease(api, options, holderIdentity, current, now) };
    } catch (createError) {
      if (isAlreadyExists(createError))
        return { held: undefined, holder: 'another sweep (created concurrently)' };
      throw createError;
    }
  }

  const record = recordOf(current);
  if (!leaseIsAvailable(record, holderIdentity, now())) {
    return { held: undefined, holder: record.holderIdentity ?? '' };
  }
  try {
    const transitions = (current.spec?.leaseTransitions ?? 0) + (record.holderIdentity ? 1 : 0);
    const taken = await api.replaceNamespacedLease({
      name,
      namespace,
      body: { metadata: { ...current.metadata, name, namespace }, spec: spec(now(), transitions) },
    });
    return { held: heldLease(api, options, holderIdentity, taken, now) };
  } catch (error) {
    if (isConflict(error)) return { held: undefined, holder: 'another sweep (took it concurrently)' };
    throw error;
  }
}

function heldLease(
  api: CoordinationV1Api,
  options: LeaseOptions,
  holderIdentity: string,
  initial: V1Lease,
  now: () => Date,
): HeldLease {
  let lease = initial;
  let lost = false;
  const { name, namespace } = options;
  return {
    holderIdentity,
    async renew() {
      if (lost) return false;
      try {
        lease = await api.replaceNamespacedLease({
          name,
          namespace,
          body: { ...lease, spec: { ...lease.spec, holderIdentity, renewTime: new V1MicroTime(now()) } },
        });
        return true;
      } catch (error) {
        // Someone else wrote the lease since our last write: it was taken over after expiry. Ours is gone.
        if (isConflict(error) || isNotFound(error)) {
          lost = true;
          return false;
        }
        throw error;
      }
    },
    async release() {
      if (lost) return;
      lost = true;
      try {
        await api.replaceNamespacedLease({
          name,
          namespace,
          body: {
            ...lease,
            spec: {
              ...lease.spec,
              holderIdentity: undefined,
              renewTime: new V1MicroTime(now()),
              leaseDurationSeconds: 1,
            },
          },
        });
      } catch (error) {
        // Taken over or deleted: nothing of ours left to release.
        if (!isConflict(error) && !isNotFound(error)) throw error;
      }
    },
  };
}
