// Records what happens in the cluster and in the emulated cloud while a scenario plays: every version of
// every NodeClaim, Node, NodePool and Pod seen through watches (so a state that lasts milliseconds is not
// missed), every VM change, and every activity call of the host. The live view and the summaries read the
// current state; the invariants and the timeline read the history.
import { CoreV1Api, CustomObjectsApi, KubeConfig, Watch } from '@kubernetes/client-node';
import type { ArmEmulator, EmulatedVm, VmChangeType } from '../arm-emulator/index.js';
import type { Node, NodeClaim, NodePool } from '../../shared/models/index.js';
import { withoutManagedFields } from '../../shared/kube/cluster-reader.js';
import type { ActivityCall } from '../stack/definitions.js';

/** The parts of a Pod the scenarios look at. */
export interface PodView {
  metadata: {
    name: string;
    namespace?: string;
    resourceVersion?: string;
    deletionTimestamp?: string;
    /** The grace period the API server added to the time of the delete (or eviction) to make deletionTimestamp. */
    deletionGracePeriodSeconds?: number;
    labels?: Record<string, string>;
  };
  spec?: { nodeName?: string };
  status?: {
    phase?: string;
    nominatedNodeName?: string;
    conditions?: { type: string; status: string; reason?: string; lastTransitionTime?: string }[];
  };
}

/** Only the PodView of a pod as the API server sends it, so the history keeps no more than is read. */
export function podView(pod: PodView): PodView {
  const { name, namespace, resourceVersion, deletionTimestamp, deletionGracePeriodSeconds, labels } =
    pod.metadata;
  const status = pod.status;
  return {
    metadata: {
      name,
      ...(namespace !== undefined && { namespace }),
      ...(resourceVersion !== undefined && { resourceVersion }),
      ...(deletionTimestamp !== undefined && { deletionTimestamp }),
      ...(deletionGracePeriodSeconds !== undefined && { deletionGracePeriodSeconds }),
      ...(labels !== undefined && { labels }),
    },
    ...(pod.spec?.nodeName !== undefined && { spec: { nodeName: pod.spec.nodeName } }),
    ...(status && {
      status: {
        ...(status.phase !== undefined && { phase: status.phase }),
        ...(status.nominatedNodeName !== undefined && { nominatedNodeName: status.nominatedNodeName }),
        ...(status.conditions && {
          conditions: status.conditions.map(({ type, status: value, reason, lastTransitionTime }) => ({
            type,
            status: value,
            ...(reason !== undefined && { reason }),
            ...(lastTransitionTime !== undefined && { lastTransitionTime }),
          })),
        }),
      },
    }),
  };
}

export type WatchedType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface Observed<T> {
  /** Date.now() when the watch delivered it. */
  at: number;
  type: WatchedType;
  object: T;
}

export interface VmObservation {
  at: number;
  type: VmChangeType;
  vm: EmulatedVm;
}

export interface RecorderOptions {
  kubeconfigPath: string;
  emulator: ArmEmulator;
  /** Only NodeClaims (and NodePools) matching this label selector are recorded. */
  labelSelector?: string;
  /** Only Nodes whose name contains this are recorded (Nodes are named after their VMs). */
  nodeNameToken?: string;
  /** Namespace whose Pods are recorded; none when omitted. */
  podNamespace?: string;
}

export interface Recorder {
  readonly startedAt: number;
  readonly nodeClaims: Map<string, NodeClaim>;
  readonly nodes: Map<string, Node>;
  readonly nodePools: Map<string, NodePool>;
  readonly pods: Map<string, PodView>;
  readonly history: {
    nodeClaims: Observed<NodeClaim>[];
    nodes: Observed<Node>[];
    pods: Observed<PodView>[];
    vms: VmObservation[];
    activities: ActivityCall[];
  };
  /** Feed for the stack's onActivity. */
  recordActivity(call: ActivityCall): void;
  /** Resolves when every watch has delivered its initial list. */
  synced(): Promise<void>;
  stop(): void;
}

/** One list of a collection: its objects as the API server's JSON, and the version to watch from. */
interface Listed<T> {
  items: T[];
  resourceVersion: string;
}

/**
 * A typed list as JSON: the client turns timestamps into Dates, and the history keeps what a watch
 * delivers (RFC 3339 strings), which a JSON round trip gives back.
 */
function asJson<T>(list: { items: unknown[]; metadata?: { resourceVersion?: string } }): Listed<T> {
  return {
    items: JSON.parse(JSON.stringify(list.items)) as T[],
    resourceVersion: list.metadata?.resourceVersion ?? '',
  };
}

async function listCustom<T>(
  custom: CustomObjectsApi,
  plural: string,
  labelSelector: string | undefined,
): Promise<Listed<T>> {
  const list = (await custom.listClusterCustomObject({
    group: 'karpenter.sh',
    version: 'v1',
    plural,
    ...(labelSelector !== undefined && { labelSelector }),
  })) as { items?: T[]; metadata?: { resourceVersion?: string } };
  return { items: list.items ?? [], resourceVersion: list.metadata?.resourceVersion ?? '' };
}

export function startRecorder(options: RecorderOptions): Recorder {
  const config = new KubeConfig();
  config.loadFromFile(options.kubeconfigPath);
  const watch = new Watch(config);
  const startedAt = Date.now();
  const nodeClaims = new Map<string, NodeClaim>();
  const nodes = new Map<string, Node>();
  const nodePools = new Map<string, NodePool>();
  const pods = new Map<string, PodView>();
  const history: Recorder['history'] = { nodeClaims: [], nodes: [], pods: [], vms: [], activities: [] };
  const aborts: (() => void)[] = [];
  const syncs: Promise<void>[] = [];
  let stopped = false;

  const sameVersion = (
    known: { metadata: { resourceVersion?: string } } | undefined,
    seen: { metadata: { resourceVersion?: string } },
  ) =>
    known !== undefined &&
    known.metadata.resourceVersion !== undefined &&
    known.metadata.resourceVersion === seen.metadata.resourceVersion;

  const core = config.makeApiClient(CoreV1Api);
  const custom = config.makeApiClient(CustomObjectsApi);
  const selector: Record<string, string> = options.labelSelector
    ? { labelSelector: options.labelSelector }
    : {};

  /**
   * Records every version of one collection: a list first, then a watch from the list's version. A
   * watch that ends (its 30 s idle timeout, an API server restart) resumes from the last version it
   * delivered, so the server replays what happened meanwhile, deletions included. When that version is
   * too old (410 Gone, as after the API server's restart), the collection is listed again and what is
   * missing from the list is recorded as DELETED at that moment: without it, a pod deleted during an
   * outage would stay pending in the history forever.
   */
  const follow = <T extends { metadata: { name: string; resourceVersion?: string } }>(
    path: string,
    query: Record<string, string>,
    list: () => Promise<Listed<T>>,
    current: Map<string, T>,
    log: Observed<T>[] | undefined,
    keep: (object: T) => boolean = () => true,
    slim: (object: T) => T = withoutManagedFields,
  ): void => {
    let resolveSynced: () => void = () => undefined;
    syncs.push(
      new Promise<void>((resolve) => {
        resolveSynced = resolve;
      }),
    );
    let version: string | undefined;
    const record = (type: WatchedType, seen: T): void => {
      const object = slim(seen);
      const name = object.metadata.name;
      if (type === 'DELETED') current.delete(name);
      else current.set(name, object);
      log?.push({ at: Date.now(), type, object });
    };
    const relist = async (): Promise<void> => {
      const listed = await list();
      const seen = new Set<string>();
      for (const object of listed.items) {
        if (!keep(object)) continue;
        seen.add(object.metadata.name);
        const known = current.get(object.metadata.name);
        if (sameVersion(known, object)) continue;
        record(known === undefined ? 'ADDED' : 'MODIFIED', object);
      }
      for (const [name, object] of [...current]) if (!seen.has(name)) record('DELETED', object);
      version = listed.resourceVersion;
      resolveSynced();
    };
    const reopen = (delayMs: number): void => {
      if (!stopped) setTimeout(() => void open(), delayMs);
    };
    const open = async (): Promise<void> => {
      if (stopped) return;
      try {
        if (version === undefined) await relist();
      } catch {
        reopen(500);
        return;
      }
      watch
        .watch(
          path,
          { ...query, resourceVersion: version, allowWatchBookmarks: 'true' },
          (type: string, object: T & { code?: number }) => {
            if (type === 'ERROR') {
              // 410 Gone: the version is older than the server keeps; list again.
              if (object.code === 410) version = undefined;
              return;
            }
            if (object.metadata?.resourceVersion) version = object.metadata.resourceVersion;
            if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') return;
            if (!keep(object)) return;
            if (type !== 'DELETED' && sameVersion(current.get(object.metadata.name), object)) return;
            record(type, object);
          },
          (error: unknown) => {
            if ((error as { statusCode?: number } | null)?.statusCode === 410) version = undefined;
            reopen(200);
          },
        )
        .then(
          (request: { abort(): void }) => {
            aborts.push(() => request.abort());
          },
          () => reopen(500),
        );
    };
    void open();
  };

  follow<NodeClaim>(
    '/apis/karpenter.sh/v1/nodeclaims',
    selector,
    () => listCustom<NodeClaim>(custom, 'nodeclaims', selector.labelSelector),
    nodeClaims,
    history.nodeClaims,
  );
  follow<NodePool>(
    '/apis/karpenter.sh/v1/nodepools',
    selector,
    () => listCustom<NodePool>(custom, 'nodepools', selector.labelSelector),
    nodePools,
    undefined,
  );
  const token = options.nodeNameToken;
  follow<Node>(
    '/api/v1/nodes',
    {},
    async () => asJson<Node>(await core.listNode()),
    nodes,
    history.nodes,
    (node) => (token === undefined ? true : node.metadata.name.includes(token)),
  );
  const podNamespace = options.podNamespace;
  if (podNamespace)
    follow<PodView>(
      `/api/v1/namespaces/${podNamespace}/pods`,
      {},
      async () => asJson<PodView>(await core.listNamespacedPod({ namespace: podNamespace })),
      pods,
      history.pods,
      () => true,
      podView,
    );

  const offVm = options.emulator.controls.onVmChange((change) =>
    history.vms.push({ at: Date.now(), type: change.type, vm: change.vm }),
  );

  return {
    startedAt,
    nodeClaims,
    nodes,
    nodePools,
    pods,
    history,
    recordActivity: (call) => history.activities.push(call),
    synced: async () => {
      await Promise.all(syncs);
    },
    stop: () => {
      stopped = true;
      offVm();
      for (const abort of aborts) abort();
    },
  };
}
