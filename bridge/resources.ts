// The five collections the bridge watches (pending Pods among them), with their watch paths and paginated
// list calls. The custom resources' coordinates come from shared/kube/crd-names.ts; pages are read as
// everywhere else in the app (shared/kube/paging.ts).
import type { KubeConfig } from '@kubernetes/client-node';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import type { WatchedKind } from '../shared/events/cloud-event.js';
import type { CustomResourceName } from '../shared/kube/crd-names.js';
import { makeTimedApiClient } from '../shared/kube/client.js';
import { AKSNodeClassResource, NodeClaimResource, NodePoolResource } from '../shared/kube/crd-names.js';
import { LIST_PAGE_SIZE, pageOf } from '../shared/kube/paging.js';
import type { WatchedResource } from './watcher.js';

const PENDING_POD_FIELD_SELECTOR = 'spec.nodeName=';

export type WatchedResources = { [K in WatchedKind]: WatchedResource<K> };

export function watchedResources(kubeConfig: KubeConfig): WatchedResources {
  // Lists have a request timeout (a relist that never answers is retried by the watcher's backoff); the
  // watches themselves are long-lived streams and get no such timeout.
  const custom = makeTimedApiClient(kubeConfig, CustomObjectsApi);
  const core = makeTimedApiClient(kubeConfig, CoreV1Api);

  const customResource = <K extends 'NodeClaim' | 'NodePool' | 'AKSNodeClass'>(
    kind: K,
    resource: CustomResourceName,
  ): WatchedResource<K> => ({
    kind,
    path: `/apis/${resource.group}/${resource.version}/${resource.plural}`,
    listPage: async (continueToken) => {
      const list: unknown = await custom.listClusterCustomObject({
        group: resource.group,
        version: resource.version,
        plural: resource.plural,
        limit: LIST_PAGE_SIZE,
        ...(continueToken !== undefined && { _continue: continueToken }),
      });
      return pageOf(plainList(list));
    },
  });

  return {
    NodeClaim: customResource('NodeClaim', NodeClaimResource),
    NodePool: customResource('NodePool', NodePoolResource),
    AKSNodeClass: customResource('AKSNodeClass', AKSNodeClassResource),
    // Pending pods only: the API server filters on `spec.nodeName=`, so neither the list nor the watch
    // carries the (many more) bound pods, and a pod leaves the cache as soon as it binds.
    Pod: {
      kind: 'Pod',
      path: '/api/v1/pods',
      fieldSelector: PENDING_POD_FIELD_SELECTOR,
      listPage: async (continueToken) => {
        const list = await core.listPodForAllNamespaces({
          fieldSelector: PENDING_POD_FIELD_SELECTOR,
          limit: LIST_PAGE_SIZE,
          ...(continueToken !== undefined && { _continue: continueToken }),
        });
        return pageOf(list);
      },
    },
    Node: {
      kind: 'Node',
      path: '/api/v1/nodes',
      listPage: async (continueToken) => {
        const list = await core.listNode({
          limit: LIST_PAGE_SIZE,
          ...(continueToken !== undefined && { _continue: continueToken }),
        });
        return pageOf(list);
      },
    },
  };
}

/**
 * A custom-resource list as the shape paging reads: client-node returns it as plain JSON, typed unknown,
 * so anything that is not an array of items or a string token is read as absent.
 */
function plainList(list: unknown): {
  items: unknown[];
  metadata: { resourceVersion?: string; continue?: string };
} {
  const body = typeof list === 'object' && list !== null ? (list as Record<string, unknown>) : {};
  const metadata =
    typeof body['metadata'] === 'object' && body['metadata'] !== null
      ? (body['metadata'] as Record<string, unknown>)
      : {};
  const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
  const resourceVersion = text(metadata['resourceVersion']);
  const continueToken = text(metadata['continue']);
  return {
    items: Array.isArray(body['items']) ? (body['items'] as unknown[]) : [],
    metadata: {
      ...(resourceVersion !== undefined && { resourceVersion }),
      ...(continueToken !== undefined && { continue: continueToken }),
    },
  };
}
