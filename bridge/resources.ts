// The five collections the bridge watches (pending Pods among them), with their watch paths and paginated
// list calls. The custom resources' coordinates come from shared/kube/crd-names.ts.
import type { KubeConfig, V1ListMeta } from '@kubernetes/client-node';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import type { WatchedKind } from '../shared/events/cloud-event.js';
import type { CustomResourceName } from '../shared/kube/crd-names.js';
import { makeTimedApiClient } from '../shared/kube/client.js';
import { AKSNodeClassResource, NodeClaimResource, NodePoolResource } from '../shared/kube/crd-names.js';
import type { WatchedResource, ListPage } from './watcher.js';

/** Objects per list page: keeps a relist of a large cluster from being one huge response. */
export const LIST_PAGE_SIZE = 500;

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
      return pageOf(list);
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
        return typedPageOf(list);
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
        return typedPageOf(list);
      },
    },
  };
}

/** A page of a core list, as client-node's models carry it (`_continue` for the API's `continue`). */
function typedPageOf(list: { items: unknown[]; metadata?: V1ListMeta }): ListPage {
  return {
    items: list.items,
    resourceVersion: list.metadata?.resourceVersion,
    continueToken: list.metadata?._continue,
  };
}

/** A page of a custom-resource list, which client-node returns as plain JSON. */
function pageOf(list: unknown): ListPage {
  const body = typeof list === 'object' && list !== null ? (list as Record<string, unknown>) : {};
  const metadata =
    typeof body['metadata'] === 'object' && body['metadata'] !== null
      ? (body['metadata'] as Record<string, unknown>)
      : {};
  return {
    items: Array.isArray(body['items']) ? body['items'] : [],
    resourceVersion:
      typeof metadata['resourceVersion'] === 'string' ? metadata['resourceVersion'] : undefined,
    continueToken: typeof metadata['continue'] === 'string' ? metadata['continue'] : undefined,
  };
}
