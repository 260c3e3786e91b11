// In-memory pods with the contracts termination's drain (DrainPods) and a provisioning window's pod reads
// rely on. For the drain, an eviction or a delete marks the pod terminating (deletionTimestamp at the end
// of its grace period, as the API server does) and the pod stays listed until a test plays its kubelet
// with `remove`; a missing pod answers 404, and a test can make an eviction be refused (429 for a
// PodDisruptionBudget, 403, 500) through `refusals`. For provisioning, pods are listed bound (to a node,
// not finished) or unbound, as the window's field selectors list them.
import type { V1Pod } from '@kubernetes/client-node';
import type { DrainPods, NodePods, PodRef } from '../../shared/kube/drain-pods.js';
import { FakeApiError } from './fake-api-error.js';

const keyOf = (pod: PodRef): string => `${pod.namespace}/${pod.name}`;
const DEFAULT_GRACE_SECONDS = 30;

export class FakePods implements DrainPods {
  private readonly pods = new Map<string, V1Pod>();
  /** Evictions the API accepted, as "namespace/name", in order. */
  readonly evicted: string[] = [];
  /** Deletions the API accepted, as "namespace/name", in order. */
  readonly deleted: string[] = [];
  /** The error an eviction of "namespace/name" is refused with instead of being accepted. */
  readonly refusals = new Map<string, Error>();

  constructor(private readonly now: () => Date) {}

  seed(pod: V1Pod): void {
    const ref = { namespace: pod.metadata?.namespace ?? 'default', name: pod.metadata?.name ?? '' };
    this.pods.set(keyOf(ref), structuredClone(pod));
  }

  peek(ref: PodRef): V1Pod | undefined {
    const pod = this.pods.get(keyOf(ref));
    return pod ? structuredClone(pod) : undefined;
  }

  /** The pod's kubelet finished it: it is gone from the API. */
  remove(ref: PodRef): void {
    this.pods.delete(keyOf(ref));
  }

  /** Pods bound to a node and not finished, as provisioning lists them. */
  async bound(): Promise<V1Pod[]> {
    return this.matching(
      (pod) =>
        Boolean(pod.spec?.nodeName) && pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed',
    );
  }

  /** Pods bound to no node. */
  async unbound(): Promise<V1Pod[]> {
    return this.matching((pod) => !pod.spec?.nodeName);
  }

  async onNode(nodeName: string): Promise<NodePods> {
    return {
      pods: this.matching((pod) => pod.spec?.nodeName === nodeName),
      evict: (ref) => this.evict(ref),
      delete: (ref) => this.delete(ref),
    };
  }

  private matching(predicate: (pod: V1Pod) => boolean): V1Pod[] {
    return [...this.pods.values()].filter(predicate).map((pod) => structuredClone(pod));
  }

  async evict(ref: PodRef): Promise<void> {
    const refusal = this.refusals.get(keyOf(ref));
    if (refusal) throw refusal;
    this.markTerminating(ref);
    this.evicted.push(keyOf(ref));
  }

  async delete(ref: PodRef): Promise<void> {
    this.markTerminating(ref);
    this.deleted.push(keyOf(ref));
  }

  private markTerminating(ref: PodRef): void {
    const pod = this.pods.get(keyOf(ref));
    if (!pod) throw new FakeApiError(404, `pod ${keyOf(ref)} not found`);
    const graceSeconds = pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS;
    pod.metadata = {
      ...pod.metadata,
      deletionTimestamp:
        pod.metadata?.deletionTimestamp ?? new Date(this.now().getTime() + graceSeconds * 1000),
    };
  }
}
