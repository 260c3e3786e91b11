// Records what happens in the cluster and in the emulated cloud while a scenario plays: every version of
// every NodeClaim, Node, NodePool and Pod seen through watches (so a state that lasts milliseconds is not
// missed), every VM change, and every activity call of the host. The live view and the summaries read the
// current state; the invariants and the timeline read the history.
import { KubeConfig, Watch } from '@kubernetes/client-node';
import type { ArmEmulator, EmulatedVm, VmChangeType } from '../arm-emulator/index.js';
import type { Node, NodeClaim, NodePool } from '../../shared/models/index.js';
import type { ActivityCall } from '../stack/definitions.js';

/** The parts of a Pod the scenarios look at. */
export interface PodView {
  metadata: {
    name: string;
    namespace?: string;
    resourceVersion?: string;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
  };
  spec?: { nodeName?: string };
  status?: { phase?: string; conditions?: { type: string; status: string }[] };
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

  const follow = <T extends { metadata: { name: string; resourceVersion?: string } }>(
    path: string,
    query: Record<string, string>,
    current: Map<string, T>,
    log: Observed<T>[] | undefined,
    keep: (object: T) => boolean = () => true,
  ): void => {
    // A watch without a resourceVersion first replays every existing object as ADDED: that is the sync.
    let resolveSynced: () => void = () => undefined;
    syncs.push(
      new Promise<void>((resolve) => {
        resolveSynced = resolve;
        setTimeout(resolve, 2_000);
      }),
    );
    const open = (): void => {
      if (stopped) return;
      watch
        .watch(
          path,
          { ...query, allowWatchBookmarks: 'false' },
          (type: string, object: T) => {
            if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') return;
            if (!keep(object)) return;
            const name = object.metadata.name;
            // A reopened watch replays every object as ADDED; one the recorder already has at the same
            // resourceVersion did not change, and recording it would make a quiet cluster look busy (the
            // client ends a watch after 30 s without a line, so a quiet cluster reopens it every 30 s).
            if (type === 'ADDED' && sameVersion(current.get(name), object)) return;
            if (type === 'DELETED') current.delete(name);
            else current.set(name, object);
            log?.push({ at: Date.now(), type, object });
            resolveSynced();
          },
          () => {
            // Watches end (timeouts, API server restarts); reopen while recording.
            if (!stopped) setTimeout(open, 200);
          },
        )
        .then(
          (request: { abort(): void }) => {
            aborts.push(() => request.abort());
            setTimeout(resolveSynced, 300);
          },
          () => {
            if (!stopped) setTimeout(open, 500);
          },
        );
    };
    open();
  };

  const selector: Record<string, string> = options.labelSelector
    ? { labelSelector: options.labelSelector }
    : {};
  follow<NodeClaim>('/apis/karpenter.sh/v1/nodeclaims', selector, nodeClaims, history.nodeClaims);
  follow<NodePool>('/apis/karpenter.sh/v1/nodepools', selector, nodePools, undefined);
  const token = options.nodeNameToken;
  follow<Node>('/api/v1/nodes', {}, nodes, history.nodes, (node) =>
    token === undefined ? true : node.metadata.name.includes(token),
  );
  if (options.podNamespace)
    follow<PodView>(`/api/v1/namespaces/${options.podNamespace}/pods`, {}, pods, history.pods);

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
