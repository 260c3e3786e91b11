// Pods and PodDisruptionBudgets, read in pages and converted at the edge into the plain shapes the
// consolidation decisions take (decisions/consolidation/pods.ts, pdb.ts).
import { PolicyV1Api, type V1Pod, type V1PodDisruptionBudget, type V1PodSpec } from '@kubernetes/client-node';
import type { PdbLimit } from '../decisions/consolidation/pdb.js';
import type { ConsolidationPod } from '../decisions/consolidation/pods.js';
import type { LabelSelectorRequirement, SchedulingPodSpec } from '../decisions/scheduling/types.js';
import { podRequests } from '../decisions/scheduling/resources.js';
import type { KubeClients } from './client.js';
import { listAllPages, pageOf, type ListPage } from './paging.js';

const iso = (value: Date | string | undefined): string | undefined =>
  value === undefined ? undefined : new Date(value).toISOString();

/**
 * A pod's effective requests in the simulation's units, as kube-scheduler charges them (sidecars, init
 * containers, overhead and the pod itself: scheduling/resources.ts); none when a quantity cannot be read
 * (the simulation reports that pod's error itself).
 */
function requestsOf(pod: V1Pod): Record<string, number> | undefined {
  if (!pod.spec) return undefined;
  // The simulation's pod spec is a subset of v1.PodSpec with the same field names.
  const parsed = podRequests(pod.spec as unknown as SchedulingPodSpec);
  return 'error' in parsed ? undefined : Object.fromEntries(parsed.resources);
}

export function toConsolidationPod(pod: V1Pod): ConsolidationPod {
  const meta = pod.metadata;
  const conditions = pod.status?.conditions ?? [];
  const scheduling = conditions.find((c) => c.type === 'PodScheduled');
  const scheduled = scheduling?.status === 'True' ? scheduling : undefined;
  const controller = meta?.ownerReferences?.find((o) => o.controller);
  const ready = conditions.some((c) => c.type === 'Ready' && c.status === 'True');
  const requests = requestsOf(pod);
  const deletion = iso(meta?.deletionTimestamp);
  const startTime = iso(pod.status?.startTime);
  const scheduledAt = iso(scheduled?.lastTransitionTime);
  return {
    namespace: meta?.namespace ?? 'default',
    name: meta?.name ?? '',
    uid: meta?.uid ?? '',
    labels: meta?.labels ?? {},
    annotations: meta?.annotations ?? {},
    ownerKinds: (meta?.ownerReferences ?? []).map((o) => o.kind),
    tolerations: (pod.spec?.tolerations ?? []).map((t) => ({
      ...(t.key !== undefined ? { key: t.key } : {}),
      ...(t.operator !== undefined ? { operator: t.operator } : {}),
      ...(t.effect !== undefined ? { effect: t.effect } : {}),
    })),
    ready,
    ...(pod.status?.phase ? { phase: pod.status.phase } : {}),
    ...(pod.spec?.nodeName ? { nodeName: pod.spec.nodeName } : {}),
    ...(pod.status?.nominatedNodeName ? { nominatedNodeName: pod.status.nominatedNodeName } : {}),
    ...(deletion ? { deletionTimestamp: deletion } : {}),
    ...(startTime ? { startTime } : {}),
    ...(pod.spec?.priority !== undefined ? { priority: pod.spec.priority } : {}),
    ...(scheduledAt ? { scheduledAt } : {}),
    ...(requests ? { requests } : {}),
    // The simulation's pod spec is a subset of v1.PodSpec with the same field names.
    ...(pod.spec ? { spec: pod.spec as unknown as SchedulingPodSpec } : {}),
    ...(meta?.creationTimestamp ? { creationTimestamp: new Date(meta.creationTimestamp).toISOString() } : {}),
    ...(controller
      ? {
          controller: {
            apiVersion: controller.apiVersion,
            kind: controller.kind,
            name: controller.name,
            uid: controller.uid,
          },
        }
      : {}),
    ...(scheduling
      ? {
          scheduling: {
            status: scheduling.status,
            ...(scheduling.reason ? { reason: scheduling.reason } : {}),
          },
        }
      : {}),
  };
}

/**
 * A cached pod as the API pod a provisioning window reads (cluster-state.ts, solve-input.ts): its name,
 * labels, annotations, creation, controlling owner, spec, phase, nominated node and PodScheduled
 * condition. Nothing else of the API pod is there (no other owner, condition or status field), so code
 * reading more of a window's pods must add it to the projection first.
 */
export function provisioningPodOf(pod: ConsolidationPod): V1Pod {
  const spec = (pod.spec ?? { containers: [] }) as unknown as V1PodSpec;
  return {
    metadata: {
      name: pod.name,
      namespace: pod.namespace,
      uid: pod.uid,
      labels: { ...pod.labels },
      annotations: { ...pod.annotations },
      ...(pod.creationTimestamp ? { creationTimestamp: new Date(pod.creationTimestamp) } : {}),
      ...(pod.deletionTimestamp ? { deletionTimestamp: new Date(pod.deletionTimestamp) } : {}),
      ...(pod.controller ? { ownerReferences: [{ ...pod.controller, controller: true }] } : {}),
    },
    spec: { ...spec, ...(pod.nodeName ? { nodeName: pod.nodeName } : {}) },
    status: {
      ...(pod.phase ? { phase: pod.phase } : {}),
      ...(pod.nominatedNodeName ? { nominatedNodeName: pod.nominatedNodeName } : {}),
      ...(pod.scheduling ? { conditions: [{ type: 'PodScheduled', ...pod.scheduling }] } : {}),
    },
  };
}

export function toPdbLimit(pdb: V1PodDisruptionBudget): PdbLimit {
  const selector = pdb.spec?.selector;
  return {
    namespace: pdb.metadata?.namespace ?? 'default',
    name: pdb.metadata?.name ?? '',
    disruptionsAllowed: pdb.status?.disruptionsAllowed ?? 0,
    ...(pdb.spec?.unhealthyPodEvictionPolicy
      ? { unhealthyPodEvictionPolicy: pdb.spec.unhealthyPodEvictionPolicy }
      : {}),
    ...(selector
      ? {
          selector: {
            ...(selector.matchLabels ? { matchLabels: selector.matchLabels } : {}),
            ...(selector.matchExpressions
              ? {
                  matchExpressions: selector.matchExpressions.map((e) => ({
                    key: e.key,
                    operator: e.operator as LabelSelectorRequirement['operator'],
                    ...(e.values ? { values: e.values } : {}),
                  })),
                }
              : {}),
          },
        }
      : {}),
  };
}

/** Every pod in the cluster (or on one node with `nodeName`), in pages. */
export async function listConsolidationPods(
  clients: KubeClients,
  options: { nodeName?: string } = {},
): Promise<ConsolidationPod[]> {
  const listPage = async (token: string | undefined, limit: number) =>
    pageOf(
      await clients.core.listPodForAllNamespaces({
        limit,
        ...(options.nodeName ? { fieldSelector: `spec.nodeName=${options.nodeName}` } : {}),
        ...(token ? { _continue: token } : {}),
      }),
    );
  return (await listAllPages(listPage, toConsolidationPod)).items;
}

/** One page of every namespace's pods, with the list's resourceVersion (where a watch resumes from). */
export async function listPodsPage(
  clients: KubeClients,
  continueToken: string | undefined,
  limit: number,
): Promise<ListPage<V1Pod>> {
  return pageOf(
    await clients.core.listPodForAllNamespaces({
      limit,
      ...(continueToken ? { _continue: continueToken } : {}),
    }),
  );
}

/** One page of every namespace's PodDisruptionBudgets, with the list's resourceVersion. */
export async function listPdbsPage(
  clients: KubeClients,
  continueToken: string | undefined,
  limit: number,
): Promise<ListPage<V1PodDisruptionBudget>> {
  const policy = clients.config.makeApiClient(PolicyV1Api);
  return pageOf(
    await policy.listPodDisruptionBudgetForAllNamespaces({
      limit,
      ...(continueToken ? { _continue: continueToken } : {}),
    }),
  );
}

/** Every PodDisruptionBudget in the cluster, in pages. */
export async function listPdbLimits(clients: KubeClients): Promise<PdbLimit[]> {
  return (await listAllPages((token, limit) => listPdbsPage(clients, token, limit), toPdbLimit)).items;
}
