// The bridge's informer (ResourceWatcher) and the client's ListWatch cache behind it, driven by a scripted
// list and a Watch double whose events the test sends itself. ListWatch files its cache by namespace and
// then name, so what the watcher caches must carry the namespace: StatefulSet pods are named alike in
// every namespace (web-0), and two of them pending at once must be two cache entries, each deleted on
// its own. The real API server's version of this is in test/integration/bridge.test.ts.
import { KubeConfig, Watch } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { WatchedKind } from '../../shared/events/cloud-event.js';
import { silentLogger } from '../../shared/observability/logger.js';
import type { WatchedObjects } from '../../bridge/projection.js';
import type { InformerVerb } from '../../bridge/relevance.js';
import { isProvisionable } from '../../bridge/relevance.js';
import type { WatchedResource } from '../../bridge/watcher.js';
import { ResourceWatcher } from '../../bridge/watcher.js';

type WatchCallback = (phase: string, apiObj: unknown, watchObj?: unknown) => void;
type DoneCallback = (err: unknown) => void;

/** A Watch that opens no connection: the test sends the events the API server would. */
class ScriptedWatch extends Watch {
  #callback: WatchCallback | undefined;
  opened = 0;

  override async watch(
    _path: string,
    _queryParams: Record<string, string | number | boolean | undefined>,
    callback: WatchCallback,
    _done: DoneCallback,
  ): Promise<AbortController> {
    await Promise.resolve();
    this.#callback = callback;
    this.opened += 1;
    return new AbortController();
  }

  send(phase: 'ADDED' | 'MODIFIED' | 'DELETED', object: unknown): void {
    if (this.#callback === undefined) throw new Error('no watch is open');
    this.#callback(phase, object, { type: phase, object });
  }
}

let resourceVersion = 100;

/** A pending pod the scheduler found no node for, as the API server sends it (trimmed). */
function pendingPod(namespace: string, name: string, uid: string): Record<string, unknown> {
  resourceVersion += 1;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      uid,
      resourceVersion: String(resourceVersion),
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'ss', controller: true },
      ],
    },
    spec: { containers: [{ name: 'app', image: 'nginx' }] },
    status: {
      phase: 'Pending',
      conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }],
    },
  };
}

interface Heard {
  verb: InformerVerb;
  key: string;
  initialList: boolean;
}

function podWatcher(initial: unknown[]) {
  const watch = new ScriptedWatch(new KubeConfig());
  const heard: Heard[] = [];
  const resource: WatchedResource<'Pod'> = {
    kind: 'Pod',
    path: '/api/v1/pods',
    fieldSelector: 'spec.nodeName=',
    listPage: async () => {
      await Promise.resolve();
      return { items: initial, resourceVersion: String(resourceVersion), continueToken: undefined };
    },
  };
  const watcher = new ResourceWatcher<'Pod'>({
    kubeConfig: new KubeConfig(),
    resource,
    watch,
    backoff: { initialMs: 10, maxMs: 10, factor: 1, jitter: 0 },
    logger: silentLogger,
    onNotification: (verb, pod, initialList) =>
      heard.push({ verb, key: `${pod.metadata.namespace}/${pod.metadata.name}`, initialList }),
  });
  return { watch, watcher, heard };
}

function keys<K extends WatchedKind>(watcher: ResourceWatcher<K>): string[] {
  return watcher
    .objects()
    .map((object: WatchedObjects[K]) => {
      const namespace = (object.metadata as { namespace?: string }).namespace ?? '';
      return `${namespace}/${object.metadata.name}`;
    })
    .sort();
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('ResourceWatcher cache', () => {
  it('keeps pods named alike in two namespaces apart, from the initial list', async () => {
    const { watch, watcher, heard } = podWatcher([
      pendingPod('shop', 'web-0', 'u-shop'),
      pendingPod('blog', 'web-0', 'u-blog'),
    ]);
    watcher.start();
    try {
      await until(() => watch.opened === 1, 'the watch to open after the list');
      expect(keys(watcher)).toEqual(['blog/web-0', 'shop/web-0']);
      expect(watcher.stats().cached).toBe(2);
      // Both are news of a pod, not one an update of the other.
      expect(heard).toEqual([
        { verb: 'add', key: 'shop/web-0', initialList: true },
        { verb: 'add', key: 'blog/web-0', initialList: true },
      ]);
      expect(watcher.objects().filter(isProvisionable)).toHaveLength(2);
    } finally {
      await watcher.stop();
    }
  });

  it('deletes one of two pods named alike and keeps the other, then deletes that one too', async () => {
    const { watch, watcher, heard } = podWatcher([]);
    watcher.start();
    try {
      await until(() => watch.opened === 1, 'the watch to open after the list');
      const shop = pendingPod('shop', 'web-0', 'u-shop');
      const blog = pendingPod('blog', 'web-0', 'u-blog');
      watch.send('ADDED', shop);
      watch.send('ADDED', blog);
      watch.send('DELETED', shop);
      // The other pod is still pending and still known: the pod resync can still announce it.
      expect(keys(watcher)).toEqual(['blog/web-0']);
      expect(watcher.objects().find(isProvisionable)?.metadata.uid).toBe('u-blog');

      watch.send('DELETED', blog);
      expect(keys(watcher)).toEqual([]);
      expect(heard.map(({ verb, key }) => `${verb} ${key}`)).toEqual([
        'add shop/web-0',
        'add blog/web-0',
        'delete shop/web-0',
        'delete blog/web-0',
      ]);
    } finally {
      await watcher.stop();
    }
  });

  it('caches cluster-scoped kinds by name alone', async () => {
    const watch = new ScriptedWatch(new KubeConfig());
    const names: string[] = [];
    const watcher = new ResourceWatcher<'Node'>({
      kubeConfig: new KubeConfig(),
      resource: {
        kind: 'Node',
        path: '/api/v1/nodes',
        listPage: async () => {
          await Promise.resolve();
          return { items: [], resourceVersion: '1', continueToken: undefined };
        },
      },
      watch,
      backoff: { initialMs: 10, maxMs: 10, factor: 1, jitter: 0 },
      logger: silentLogger,
      onNotification: (verb, node) => names.push(`${verb} ${node.metadata.name}`),
    });
    watcher.start();
    try {
      await until(() => watch.opened === 1, 'the watch to open after the list');
      watch.send('ADDED', { metadata: { name: 'aks-a', uid: 'n1', resourceVersion: '5' }, spec: {} });
      watch.send('ADDED', { metadata: { name: 'aks-b', uid: 'n2', resourceVersion: '6' }, spec: {} });
      watch.send('MODIFIED', { metadata: { name: 'aks-a', uid: 'n1', resourceVersion: '7' }, spec: {} });
      watch.send('DELETED', { metadata: { name: 'aks-a', uid: 'n1', resourceVersion: '8' }, spec: {} });
      expect(names).toEqual(['add aks-a', 'add aks-b', 'update aks-a', 'delete aks-a']);
      expect(keys(watcher)).toEqual(['/aks-b']);
    } finally {
      await watcher.stop();
    }
  });
});
