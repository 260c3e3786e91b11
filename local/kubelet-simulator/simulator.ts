// The kubelet simulator: a Node for every emulated VM that is running, behaving the way the kubelet on
// that VM and its neighbours would.
//
// Who does what, as in a real cluster:
// - kubelet (simulated): registers the Node after the VM boots, with the labels and taints of its
//   kubelet_node_labels and --register-with-taints of the AKSNodeConfig decoded from the VM's custom data; posts Ready=True
//   once "the network plugin is up"; renews its Lease in kube-node-lease; reports status every 5 min;
//   posts the status of the pods bound to it. All of that as the node itself (system:node:<name>, the
//   certificate of its TLS bootstrap), so the Node authorizer and NodeRestriction judge it; the parts
//   that are not the kubelet's (the Node informer, the agent, the cloud node controller) use the admin
//   kubeconfig, as their ServiceAccounts would have those rights.
// - kube-apiserver (real): its TaintNodesByCondition admission plugin adds
//   node.kubernetes.io/not-ready:NoSchedule to every new Node.
// - kube-controller-manager (real, in the shared control plane): the node lifecycle controller keeps
//   the not-ready / unreachable taints in line with the Ready condition (it removes not-ready once
//   kubelet posts Ready=True) and marks a node Unknown when its Lease goes stale; the garbage collector
//   deletes a Node's Lease with the Node (the Lease is owned by it).
// - an agent DaemonSet (simulated, e.g. cilium): removes configured startup taints some time after the
//   node registered, and again whenever they reappear (registration may copy them back).
// - the cloud node lifecycle controller (simulated; cloud-controller-manager does not run here):
//   deletes the Node once its VM is gone.
//
// A VM created from a node image version the emulator marks bad (bad-node-image.ts) plays that image at
// each boot: kubelet never posts Ready=True, the containers of its pods crash-loop, or the node problem
// detector finds the node unhealthy a minute after it went Ready. Any other VM behaves as above.
import { randomUUID } from 'node:crypto';
import { KubeConfig, ListWatch, Watch, type KubernetesObject } from '@kubernetes/client-node';
import {
  kubeletRegistration,
  parseNodeCustomData,
  type KubeletRegistration,
} from '../../shared/cloudprovider/azure/decisions/aks-node-config.js';
import { decodeCustomData } from '../../shared/cloudprovider/azure/decisions/bootstrap.js';
import { parseProviderId, providerIdFor } from '../../shared/cloudprovider/azure/decisions/vm-spec.js';
import { isAlreadyExists, isConflict, isNotFound, statusCodeOf } from '../../shared/kube/errors.js';
import { silentLogger, type Logger } from '../../shared/observability/logger.js';
import {
  skuCatalog,
  type EmulatedVm,
  type EmulatorControls,
  type NodeImageBehavior,
  type ResourceSku,
} from '../arm-emulator/index.js';
import type { VmChangeEvent } from '../arm-emulator/index.js';
import { startPodRunner, type PodRunner } from './pod-runner.js';
import { HeartbeatLoop, KUBELET_HEARTBEAT_MS } from './heartbeat-loop.js';
import { ClusterApi } from './cluster-api.js';
import { KubeletApi } from './kubelet-api.js';
import { startLeaseRenewer } from './lease-renewer.js';
import { kubeRest, type KubeRequest, type KubeRest } from './kube-rest.js';
import { vmHardware } from './node-resources.js';
import { apiEndpoint, ensureNodeBootstrapBindings } from './node-bootstrap-rbac.js';
import { nodeConnections } from './node-connections.js';
import { reissueNodeCertificate, tlsBootstrap, type NodeCertificate } from './tls-bootstrap.js';
import {
  heartbeatStatusPatch,
  readyStatusPatch,
  registrationNode,
  withoutTaintKeys,
} from './node-template.js';
import { nodeView, sameProviderId, type NodeJson, type NodeView } from './node-view.js';
import {
  clearedCondition,
  conditionPatch,
  preemptionCondition,
  type SimulatedCondition,
} from './node-conditions.js';
import {
  CRASH_RESTART_MS,
  imageName,
  notReadyStatusPatch,
  UNHEALTHY_AFTER_READY_MS,
  unhealthyImageCondition,
} from './bad-node-image.js';

export interface StartupTaintRemoval {
  /** Taint keys the simulated agent removes (any effect), e.g. node.cilium.io/agent-not-ready. */
  keys: string[];
  /** After the Node registered. */
  delayMs: number;
}

export interface KubeletSimulatorOptions {
  kubeconfigPath: string;
  /** `nodeImageBehavior` tells how the image a VM was created from behaves (gallery-images.ts). */
  emulator: { controls: Pick<EmulatorControls, 'vms' | 'onVmChange' | 'nodeImageBehavior'> };
  /** Only VMs of this subscription and resource group get Nodes (and only their Nodes are deleted). */
  subscriptionId: string;
  resourceGroup: string;
  /** From VM Succeeded to Node registration. Default 3000. */
  bootDelayMs?: number;
  /** From registration to Ready=True. Default 2000. */
  readyDelayMs?: number;
  startupTaintRemoval?: StartupTaintRemoval | undefined;
  /** From a pod's binding to one of these Nodes to Running and Ready. Default 1000. */
  podStartDelayMs?: number;
  /** From a pod's deletion to its containers' exit, capped by its grace period. Default 1000. */
  podShutdownDelayMs?: number;
  /**
   * Lease renewal period; default 10000 (kubelet's). Not scaled by `speed`: the controller-manager's
   * node-monitor grace period (50 s) runs on real time, so a slowed-down heartbeat would make nodes
   * go Unknown and a sped-up one would only cost requests.
   */
  heartbeatIntervalMs?: number;
  /** Node status report period when nothing changed; default 300000 (kubelet's). Not scaled. */
  statusReportIntervalMs?: number;
  /**
   * Divides the boot, ready, startup-taint and pod delays, and a bad image's minute to NodeHealthy=False
   * and its containers' restart period: 10 makes them ten times shorter. Default 1.
   */
  speed?: number;
  /** Where capacity comes from; default the emulator's catalog. */
  catalog?: readonly ResourceSku[];
  /** Requests in flight at once for heartbeats. Default 8. */
  concurrency?: number;
  /**
   * Renew the Leases from a process of their own (lease-renewer.ts says why): for a cluster of hundreds
   * of nodes whose simulator shares its process with a busy function host. Default false: in-process.
   */
  leaseProcess?: boolean;
  log?: Logger;
}

export interface KubeletSimulatorStats {
  /** Nodes with live heartbeats. */
  nodes: number;
  /** Pods this simulator started (Running and Ready). */
  podsStarted: number;
  /** API requests made so far, by purpose. */
  requests: Record<string, number>;
}

export interface FaultOptions {
  /** The fault outlives a VM restart (a broken disk, not a wedged process); default false. */
  survivesReboot?: boolean;
}

export interface KubeletSimulator {
  /** Stops every timer and watch; leaves Nodes and Leases as they are (a restart adopts them). */
  stop(): Promise<void>;
  /**
   * The node's kubelet dies: no more Lease renewals or status reports, so the real
   * kube-controller-manager marks the Node Ready=Unknown after its grace period. A restart of the VM
   * starts kubelet again, unless `survivesReboot`.
   */
  stopKubelet(nodeName: string, options?: FaultOptions): void;
  /**
   * A node agent posts a condition (kubernetes.azure.com/NodeHealthy=False); a restart of the VM clears
   * it (posting the opposite status), unless `survivesReboot`.
   */
  raiseCondition(nodeName: string, condition: SimulatedCondition, options?: FaultOptions): Promise<void>;
  /** Who the API server takes a node's kubelet to be: the identity its heartbeats and writes use. */
  nodeIdentity(nodeName: string): Promise<{ username: string; groups: string[] }>;
  /** The node agent's problem goes away by itself: the raised condition's opposite status is posted. */
  clearCondition(nodeName: string, conditionType: string): Promise<void>;
  /** Names of the Nodes this simulator keeps alive. */
  nodes(): string[];
  stats(): KubeletSimulatorStats;
}

type Phase =
  /** Waiting for the boot delay (or for a retry of a failed registration). */
  | 'booting'
  | 'registering'
  /** Registered: heartbeats run. */
  | 'running'
  /** The VM is being deleted: the machine is off, nothing more happens. */
  | 'stopped'
  /** The VM restarts: the guest is down until the restart's operation ends and it boots again. */
  | 'rebooting'
  /** kubelet died (stopKubelet): the machine runs, nothing posts for the Node until a reboot. */
  | 'kubelet-stopped'
  /** Somebody deleted the Node; like kubelet, do not re-register until restarted. */
  | 'node-gone'
  /** The VM carries no bootstrap data this kubelet can use; it never joins. */
  | 'unbootable';

interface TrackedVm {
  key: string;
  vmName: string;
  nodeName: string;
  providerId: string;
  phase: Phase;
  nodeUid: string | undefined;
  /** Whether the node's Lease is known to exist (decides whether a renewal starts with create or patch). */
  leaseExists: boolean;
  agentReady: boolean;
  registrationAttempts: number;
  /** The node's own client (its certificate), once TLS bootstrap or adoption gave it one. */
  kubelet?: { api: KubeletApi; request: KubeRequest; certificate: NodeCertificate };
  timers: Set<NodeJS.Timeout>;
  /** stopKubelet's fault, while it lasts. */
  kubeletFault?: FaultOptions;
  /** Conditions raised by raiseCondition, by type, while they last. */
  conditionFaults: Map<string, { condition: SimulatedCondition; options: FaultOptions }>;
  /** The image the VM was created from, and how it behaves as of the last boot. */
  image: { id: string | undefined; behavior: NodeImageBehavior };
}

const defaults = {
  bootDelayMs: 3_000,
  readyDelayMs: 2_000,
  podStartDelayMs: 1_000,
  podShutdownDelayMs: 1_000,
  heartbeatIntervalMs: KUBELET_HEARTBEAT_MS,
  statusReportIntervalMs: 300_000,
  concurrency: 8,
};
const maxRegistrationBackoffMs = 30_000;
/** How long kubelet waits for its CSR to be approved and signed before it starts over. */
const csrTimeoutMs = 30_000;
const informerRestartDelayMs = 1_000;
const maxTaintPatchAttempts = 5;

function vmKey(vm: Pick<EmulatedVm, 'id'>): string {
  return vm.id.toLowerCase();
}

export async function startKubeletSimulator(options: KubeletSimulatorOptions): Promise<KubeletSimulator> {
  const log = options.log ?? silentLogger;
  const speed = options.speed ?? 1;
  if (!(speed > 0) || !Number.isFinite(speed))
    throw new Error(`speed must be a positive number, got ${speed}`);
  const scaled = (ms: number): number => ms / speed;
  const bootDelayMs = scaled(options.bootDelayMs ?? defaults.bootDelayMs);
  const readyDelayMs = scaled(options.readyDelayMs ?? defaults.readyDelayMs);
  const startupTaints = options.startupTaintRemoval;
  const startupTaintDelayMs = scaled(startupTaints?.delayMs ?? 0);
  const unhealthyAfterReadyMs = scaled(UNHEALTHY_AFTER_READY_MS);
  const catalog = options.catalog ?? skuCatalog;
  const subscription = options.subscriptionId.toLowerCase();
  const resourceGroup = options.resourceGroup.toLowerCase();
  const concurrency = options.concurrency ?? defaults.concurrency;

  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(options.kubeconfigPath);
  const counts: Record<string, number> = {};
  // The admin's pool: the informers' lists, taint and deletion writes, certificate reissues.
  const rest: KubeRest = await kubeRest(kubeConfig, concurrency + 4, counts);
  const cluster = new ClusterApi(rest.request);
  const kubeletVersion = await cluster.kubeletVersion();
  // The simulated VMs reach the API server where the admin kubeconfig does: AKSNodeConfig names only the
  // API server's host (AKS serves on 443), and the local one listens elsewhere.
  const endpoint = await apiEndpoint(kubeConfig);
  const connections = nodeConnections(endpoint, counts);
  const kubeletWith = (certificate: NodeCertificate): NonNullable<TrackedVm['kubelet']> => {
    const request = connections.as(certificate);
    return { api: new KubeletApi(request), request, certificate };
  };
  await ensureNodeBootstrapBindings(rest);

  const tracked = new Map<string, TrackedVm>();
  const byNodeName = new Map<string, TrackedVm>();
  const inFlight = new Set<Promise<unknown>>();
  const taintWork = new Map<string, { rerun: boolean }>();
  let stopped = false;

  const inScope = (vm: Pick<EmulatedVm, 'subscriptionId' | 'resourceGroup'>): boolean =>
    vm.subscriptionId.toLowerCase() === subscription && vm.resourceGroup.toLowerCase() === resourceGroup;

  /** Runs background work so stop() can wait for it and a failure is logged, never unhandled. */
  const background = (what: string, fields: Record<string, unknown>, work: () => Promise<unknown>): void => {
    if (stopped) return;
    const promise = work()
      .catch((error: unknown) => log.error(`${what} failed`, { ...fields, error }))
      .finally(() => inFlight.delete(promise));
    inFlight.add(promise);
  };

  const later = (vm: TrackedVm, ms: number, what: string, work: () => Promise<unknown>): void => {
    if (stopped) return;
    const timer = setTimeout(
      () => {
        vm.timers.delete(timer);
        background(what, { node: vm.nodeName }, work);
      },
      Math.max(0, ms),
    );
    vm.timers.add(timer);
  };

  const cancelTimers = (vm: TrackedVm): void => {
    for (const timer of vm.timers) clearTimeout(timer);
    vm.timers.clear();
  };

  // --- The Node informer: existing Nodes for adoption, and changes the agent reacts to. ---------------
  // Both the list (our own client) and the watch deliver the API server's JSON as parsed, with
  // timestamps as strings; ListWatch's KubernetesObject type claims Dates, hence the one cast below.
  const informer = new ListWatch<KubernetesObject>(
    '/api/v1/nodes',
    new Watch(kubeConfig),
    async () => {
      const list = await cluster.listNodes();
      return { ...list, items: list.items as KubernetesObject[] };
    },
    false,
  );
  const asJson = (node: KubernetesObject): NodeJson => node as NodeJson;
  const cachedNode = (name: string): NodeView | undefined => {
    const node = informer.get(name);
    return node ? nodeView(asJson(node)) : undefined;
  };
  const nodeWithProviderId = (providerId: string): NodeView | undefined => {
    for (const node of informer.list().map(asJson)) {
      if (sameProviderId(node.spec?.providerID, providerId)) return nodeView(node);
    }
    return undefined;
  };

  // --- kubelet: registration, Ready, status reports. ---------------------------------------------------
  const leaseIntervalMs = options.heartbeatIntervalMs ?? defaults.heartbeatIntervalMs;
  // kubelet compares the Node's status on the server with its own every sync and posts a difference at
  // once: a Node the controller-manager marked Unknown while this kubelet could not reach the API server
  // (an outage) is Ready again within a heartbeat, not at the next 5-minute report.
  const leaseRenewed = async (vm: TrackedVm): Promise<void> => {
    vm.leaseExists = true;
    if (cachedNode(vm.nodeName)?.ready === 'Unknown') await markReady(vm);
  };
  const leaseRenewer = options.leaseProcess
    ? await startLeaseRenewer({
        server: endpoint.server.href,
        caPem: endpoint.caPem,
        leaseIntervalMs,
        concurrency,
        log,
        onRenewed: (nodeName) => {
          const vm = byNodeName.get(nodeName);
          if (vm?.phase !== 'running') return;
          vm.leaseExists = true;
          // Read from the cache here: at 50 renewals a second, work only for a Node to correct.
          if (cachedNode(nodeName)?.ready === 'Unknown') {
            background('post ready', { node: nodeName }, () => markReady(vm));
          }
        },
        leaseOf: (nodeName) => {
          const vm = byNodeName.get(nodeName);
          if (vm?.phase !== 'running' || !vm.kubelet || vm.nodeUid === undefined) return undefined;
          return { nodeUid: vm.nodeUid, certificate: vm.kubelet.certificate, leaseExists: vm.leaseExists };
        },
      })
    : undefined;
  const heartbeats = new HeartbeatLoop({
    leaseIntervalMs,
    statusReportIntervalMs: options.statusReportIntervalMs ?? defaults.statusReportIntervalMs,
    concurrency,
    log,
    ...(leaseRenewer
      ? {}
      : {
          renewLease: async (nodeName: string) => {
            const vm = byNodeName.get(nodeName);
            if (vm?.phase !== 'running' || vm.nodeUid === undefined || !vm.kubelet) return;
            await vm.kubelet.api.renewLease(nodeName, vm.nodeUid, vm.leaseExists);
            await leaseRenewed(vm);
          },
        }),
    reportStatus: async (nodeName) => {
      const node = cachedNode(nodeName);
      const kubelet = byNodeName.get(nodeName)?.kubelet;
      if (!node || !kubelet) return;
      try {
        await kubelet.api.patchNodeStatus(
          'report status',
          nodeName,
          heartbeatStatusPatch(node.conditionTypes, new Date()),
        );
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    },
  });

  /** kubelet starts: its Lease renewals (here or in the renewer's process) and its status reports. */
  const startBeating = (vm: TrackedVm, lastStatusReportAt: number): void => {
    heartbeats.add(vm.nodeName, lastStatusReportAt);
    leaseRenewer?.add(vm.nodeName);
  };
  const stopBeating = (vm: TrackedVm): void => {
    heartbeats.remove(vm.nodeName);
    leaseRenewer?.remove(vm.nodeName);
  };

  /** kubelet posts its Ready condition: True, or False for good on an image whose CNI never comes up. */
  const markReady = async (vm: TrackedVm): Promise<void> => {
    if (vm.phase !== 'running' || !vm.kubelet) return;
    try {
      if (vm.image.behavior === 'kubeletNeverReady') {
        const transition = cachedNode(vm.nodeName)?.ready !== 'False';
        const patch = notReadyStatusPatch(imageName(vm.image.id), new Date(), transition);
        await vm.kubelet.api.patchNodeStatus('post not ready', vm.nodeName, patch);
        log.info('node not ready: bad node image', { node: vm.nodeName, image: vm.image.id });
        return;
      }
      await vm.kubelet.api.patchNodeStatus('post ready', vm.nodeName, readyStatusPatch(new Date()));
      log.info('node ready', { node: vm.nodeName });
    } catch (error) {
      if (isNotFound(error)) return;
      later(vm, 1_000, 'post ready', () => markReady(vm));
      throw error;
    }
  };

  const nodeRunning = (vm: TrackedVm, node: NodeView, adopted: boolean): void => {
    vm.phase = 'running';
    vm.nodeUid = node.uid;
    vm.leaseExists = adopted;
    byNodeName.set(vm.nodeName, vm);
    startBeating(vm, adopted ? Date.now() : node.createdAt);
    const now = Date.now();
    if (node.ready !== 'True') {
      later(vm, node.createdAt + readyDelayMs - now, 'post ready', () => markReady(vm));
    }
    if (vm.image.behavior === 'unhealthyAfterAMinute') {
      const readyAt = node.createdAt + readyDelayMs;
      later(vm, readyAt + unhealthyAfterReadyMs - now, 'detect node problem', () => imageProblem(vm));
    }
    if (startupTaints && startupTaints.keys.length > 0) {
      later(vm, node.createdAt + startupTaintDelayMs - now, 'remove startup taints', async () => {
        vm.agentReady = true;
        await removeStartupTaints(vm);
      });
    }
    log.info(adopted ? 'adopted existing node' : 'node registered', { node: vm.nodeName, vm: vm.vmName });
    pods.nodeRunning(vm.nodeName);
  };

  const readBootstrap = (vm: EmulatedVm): KubeletRegistration | string => {
    if (vm.customData === undefined || vm.customData === '') return 'the VM has no custom data';
    try {
      return kubeletRegistration(parseNodeCustomData(decodeCustomData(vm.customData)));
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  };

  const register = async (vm: TrackedVm, emulated: EmulatedVm): Promise<void> => {
    if (vm.phase !== 'booting') return;
    const bootstrap = readBootstrap(emulated);
    if (typeof bootstrap === 'string') {
      vm.phase = 'unbootable';
      log.warn('VM never joins: no usable bootstrap data', { vm: vm.vmName, reason: bootstrap });
      return;
    }
    const hardware = vmHardware(catalog, emulated.vmSize, emulated.location);
    if (!hardware) {
      vm.phase = 'unbootable';
      log.warn('VM never joins: size not in the SKU catalog', { vm: vm.vmName, vmSize: emulated.vmSize });
      return;
    }
    const node = registrationNode({
      nodeName: vm.nodeName,
      providerId: vm.providerId,
      vm: emulated,
      bootstrap,
      hardware,
      // kubelet runs the version the configuration asked for (the image installs it at boot).
      kubeletVersion: `v${bootstrap.kubernetesVersion}`,
      bootId: randomUUID(),
      now: new Date(),
    });
    vm.phase = 'registering';
    vm.registrationAttempts += 1;
    let registered: NodeView;
    try {
      // TLS bootstrap with the VM's own token, then the Node is created with the node's certificate.
      vm.kubelet ??= kubeletWith(
        await tlsBootstrap(endpoint, bootstrap.bootstrapToken, vm.nodeName, csrTimeoutMs),
      );
      registered = nodeView(await vm.kubelet.api.createNode(node));
    } catch (error) {
      if (statusCodeOf(error) === 401) {
        log.warn('bootstrap token rejected (unknown, expired or deleted); kubelet keeps retrying', {
          vm: vm.vmName,
        });
      }
      if (!isAlreadyExists(error)) {
        // kubelet keeps trying to register for as long as the machine runs.
        if (vm.phase === 'registering') {
          vm.phase = 'booting';
          const backoff = Math.min(maxRegistrationBackoffMs, 500 * 2 ** vm.registrationAttempts);
          later(vm, backoff, 'register node', () => register(vm, emulated));
        }
        throw error;
      }
      const existing = await vm.kubelet?.api.readNode(vm.nodeName);
      if (!existing || !sameProviderId(existing.spec?.providerID, vm.providerId)) {
        vm.phase = 'unbootable';
        log.error('a different Node already has this name; the VM cannot join', {
          node: vm.nodeName,
          providerId: existing?.spec?.providerID,
        });
        return;
      }
      registered = nodeView(existing);
    }
    if (vm.phase !== 'registering') {
      // The VM went away while the request was in flight: the Node must not outlive it.
      await cluster.deleteNode(registered.name, registered.uid);
      return;
    }
    nodeRunning(vm, registered, false);
  };

  // --- The agent DaemonSet: startup taints. -------------------------------------------------------------
  const hasStartupTaint = (node: NodeView): boolean =>
    startupTaints !== undefined && node.taints.some((t) => startupTaints.keys.includes(t.key));

  const removeStartupTaints = async (vm: TrackedVm): Promise<void> => {
    if (!startupTaints || !vm.agentReady || vm.phase !== 'running') return;
    const running = taintWork.get(vm.nodeName);
    if (running) {
      running.rerun = true;
      return;
    }
    const work = { rerun: true };
    taintWork.set(vm.nodeName, work);
    try {
      while (work.rerun && vm.phase === 'running') {
        work.rerun = false;
        let node = cachedNode(vm.nodeName);
        for (let attempt = 1; node && hasStartupTaint(node); attempt++) {
          try {
            await cluster.replaceTaints(node, withoutTaintKeys(node.taints, startupTaints.keys));
            log.info('startup taints removed', { node: vm.nodeName, keys: startupTaints.keys });
            break;
          } catch (error) {
            if (isNotFound(error)) return;
            // Someone (registration, the node lifecycle controller) wrote the Node since it was read: 409
            // from the resourceVersion guard, or 422 when the patch's own operations no longer apply to
            // the stored Node (a `remove` of a taint list that is already gone), which the API server
            // checks first. Either way the cached Node was stale: read it again.
            const stale = isConflict(error) || statusCodeOf(error) === 422;
            if (!stale || attempt >= maxTaintPatchAttempts) throw error;
            const fresh = await cluster.readNode(vm.nodeName);
            node = fresh ? nodeView(fresh) : undefined;
          }
        }
      }
    } finally {
      taintWork.delete(vm.nodeName);
    }
  };

  // --- The cloud node lifecycle controller: VM gone → Node gone. --------------------------------------
  const deleteNodeOf = async (providerId: string, nodeName: string): Promise<void> => {
    const node = nodeWithProviderId(providerId) ?? (await readOwnNode(nodeName, providerId));
    if (!node) return;
    if (await cluster.deleteNode(node.name, node.uid)) {
      log.info('node deleted: its VM is gone', { node: node.name });
    }
  };
  const readOwnNode = async (nodeName: string, providerId: string): Promise<NodeView | undefined> => {
    const node = await cluster.readNode(nodeName);
    return node && sameProviderId(node.spec?.providerID, providerId) ? nodeView(node) : undefined;
  };

  /**
   * A Node that is registered already (the simulator restarted): its kubelet goes on as the node, with
   * the certificate it would have kept on disk (reissued, see reissueNodeCertificate).
   */
  const adopt = async (vm: TrackedVm, node: NodeView): Promise<void> => {
    try {
      vm.kubelet ??= kubeletWith(await reissueNodeCertificate(rest.request, vm.nodeName, csrTimeoutMs));
    } catch (error) {
      if (vm.phase === 'booting') later(vm, 1_000, 'adopt node', () => adopt(vm, node));
      throw error;
    }
    if (vm.phase === 'booting') nodeRunning(vm, node, true);
  };

  // --- VM events. ---------------------------------------------------------------------------------------
  /** Tracks a VM that runs; resolves once an existing Node of it has been adopted. */
  const vmRunning = async (emulated: EmulatedVm): Promise<void> => {
    const key = vmKey(emulated);
    if (tracked.has(key)) return;
    const vm: TrackedVm = {
      key,
      vmName: emulated.name,
      nodeName: emulated.computerName,
      providerId: providerIdFor({
        subscriptionId: emulated.subscriptionId,
        resourceGroup: emulated.resourceGroup,
        vmName: emulated.name,
      }),
      phase: 'booting',
      nodeUid: undefined,
      leaseExists: false,
      agentReady: false,
      registrationAttempts: 0,
      timers: new Set(),
      conditionFaults: new Map(),
      image: {
        id: emulated.communityGalleryImageId,
        behavior: options.emulator.controls.nodeImageBehavior(emulated.communityGalleryImageId),
      },
    };
    tracked.set(key, vm);
    const existing = nodeWithProviderId(vm.providerId);
    if (existing) await adopt(vm, existing);
    else later(vm, bootDelayMs, 'register node', () => register(vm, emulated));
  };

  const vmStopping = (key: string): TrackedVm | undefined => {
    const vm = tracked.get(key);
    if (!vm) return undefined;
    cancelTimers(vm);
    stopBeating(vm);
    vm.phase = 'stopped';
    return vm;
  };

  // --- Faults, reboots and the spot eviction notice. ----------------------------------------------------
  // Conditions of node agents (node-problem-detector, the scheduled-events watcher) are posted with the
  // node's own credentials too: the Node authorizer lets them patch only this Node's status.
  const postCondition = async (vm: TrackedVm, condition: SimulatedCondition, transition: boolean) => {
    if (!vm.kubelet) return;
    try {
      await vm.kubelet.api.patchNodeStatus(
        `post ${condition.type}`,
        vm.nodeName,
        conditionPatch(condition, new Date(), transition),
      );
      log.info('node condition posted', {
        node: vm.nodeName,
        type: condition.type,
        status: condition.status,
      });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  };

  /**
   * The node problem detector finds a node of a bad image unhealthy. Raised as a fault that a reboot
   * clears (the detector starts over at boot); the image then fails again a minute after Ready.
   */
  const imageProblem = async (vm: TrackedVm): Promise<void> => {
    if (vm.phase !== 'running' || vm.image.behavior !== 'unhealthyAfterAMinute') return;
    const condition = unhealthyImageCondition(imageName(vm.image.id));
    vm.conditionFaults.set(condition.type, { condition, options: {} });
    await postCondition(vm, condition, true);
  };

  const trackedNode = (nodeName: string): TrackedVm => {
    const vm = byNodeName.get(nodeName);
    if (!vm) throw new Error(`the simulator runs no Node named ${nodeName}`);
    return vm;
  };

  const rebootStarted = (key: string): void => {
    const vm = tracked.get(key);
    if (vm?.phase !== 'running' && vm?.phase !== 'kubelet-stopped') return;
    cancelTimers(vm);
    stopBeating(vm);
    vm.phase = 'rebooting';
    log.info('VM restarting: the guest is down', { node: vm.nodeName });
  };

  /** The guest boots again: kubelet starts (unless its fault survives), Ready is posted, faults cleared. */
  const rebooted = async (vm: TrackedVm): Promise<void> => {
    if (vm.phase !== 'rebooting') return;
    if (vm.kubeletFault && !vm.kubeletFault.survivesReboot) delete vm.kubeletFault;
    if (vm.kubeletFault) {
      vm.phase = 'kubelet-stopped';
      log.info('VM restarted; kubelet still does not run', { node: vm.nodeName });
      return;
    }
    vm.phase = 'running';
    vm.image.behavior = options.emulator.controls.nodeImageBehavior(vm.image.id);
    startBeating(vm, Date.now());
    log.info('VM restarted; kubelet runs again', { node: vm.nodeName });
    pods.nodeRunning(vm.nodeName);
    if (vm.image.behavior === 'unhealthyAfterAMinute') {
      // Ready is posted right below: the minute starts now.
      later(vm, unhealthyAfterReadyMs, 'detect node problem', () => imageProblem(vm));
    }
    await markReady(vm);
    for (const [type, fault] of vm.conditionFaults) {
      if (fault.options.survivesReboot) continue;
      vm.conditionFaults.delete(type);
      await postCondition(vm, clearedCondition(fault.condition, 'cleared after the VM restarted'), true);
    }
  };

  const preemptionAnnounced = (emulated: EmulatedVm): void => {
    const vm = tracked.get(vmKey(emulated));
    if (!vm || (vm.phase !== 'running' && vm.phase !== 'kubelet-stopped') || !emulated.preemptionNotBefore)
      return;
    const condition = preemptionCondition(emulated.preemptionNotBefore);
    background('post preemption notice', { node: vm.nodeName }, () => postCondition(vm, condition, true));
  };

  const onVmChange = ({ type, vm: emulated }: VmChangeEvent): void => {
    if (stopped || !inScope(emulated)) return;
    const key = vmKey(emulated);
    switch (type) {
      case 'succeeded':
        background('start node', { vm: emulated.name }, () => vmRunning(emulated));
        return;
      case 'deleting':
      case 'evicted':
        vmStopping(key);
        return;
      case 'restarting':
        rebootStarted(key);
        return;
      case 'restarted': {
        const vm = tracked.get(key);
        if (vm) later(vm, bootDelayMs, 'boot after restart', () => rebooted(vm));
        return;
      }
      case 'preemption-scheduled':
        preemptionAnnounced(emulated);
        return;
      case 'deleted': {
        const vm = vmStopping(key);
        tracked.delete(key);
        if (vm && byNodeName.get(vm.nodeName) === vm) byNodeName.delete(vm.nodeName);
        const providerId = providerIdFor({
          subscriptionId: emulated.subscriptionId,
          resourceGroup: emulated.resourceGroup,
          vmName: emulated.name,
        });
        background('delete node', { vm: emulated.name }, () =>
          deleteNodeOf(providerId, emulated.computerName),
        );
        return;
      }
      // A create that failed never ran an OS; a creating VM has not booted yet.
      case 'creating':
      case 'failed':
        return;
    }
  };

  // --- Informer events. ---------------------------------------------------------------------------------
  informer.on('add', (node) => onNodeChange(node));
  informer.on('update', (node) => onNodeChange(node));
  informer.on('delete', (node) => {
    const vm = byNodeName.get(node.metadata?.name ?? '');
    if (vm?.phase !== 'running' || vm.nodeUid !== node.metadata?.uid) return;
    stopBeating(vm);
    cancelTimers(vm);
    vm.phase = 'node-gone';
    log.info('node deleted while its VM runs; heartbeats stop', { node: vm.nodeName });
  });
  informer.on('error', (error: unknown) => {
    if (stopped) return;
    log.warn('node watch failed; restarting', { error });
    setTimeout(() => {
      if (!stopped) background('restart node watch', {}, () => informer.start());
    }, informerRestartDelayMs);
  });
  function onNodeChange(node: KubernetesObject): void {
    const vm = byNodeName.get(node.metadata?.name ?? '');
    if (!vm?.agentReady || vm.phase !== 'running') return;
    if (!hasStartupTaint(nodeView(asJson(node)))) return;
    background('remove startup taints', { node: vm.nodeName }, () => removeStartupTaints(vm));
  }

  await informer.start();
  const pods: PodRunner = await startPodRunner({
    kubeConfig,
    rest,
    isRunningNode: (nodeName) => byNodeName.get(nodeName)?.phase === 'running',
    kubeletOf: (nodeName) => byNodeName.get(nodeName)?.kubelet?.request,
    startDelayMs: scaled(options.podStartDelayMs ?? defaults.podStartDelayMs),
    shutdownDelayMs: scaled(options.podShutdownDelayMs ?? defaults.podShutdownDelayMs),
    crashesPods: (nodeName) => byNodeName.get(nodeName)?.image.behavior === 'podsCrash',
    crashRestartMs: scaled(CRASH_RESTART_MS),
    log,
  });

  // Orphans first (a Node of this resource group whose VM no longer exists, e.g. deleted while the
  // simulator was down), then every running VM. Subscribing and listing happen in the same tick, so no
  // VM change falls between them.
  const unsubscribe = options.emulator.controls.onVmChange(onVmChange);
  const vms = options.emulator.controls.vms().filter(inScope);
  const vmNames = new Set(vms.map((vm) => vm.name.toLowerCase()));
  for (const node of informer.list().map(asJson)) {
    const identity = parseProviderId(node.spec?.providerID ?? '');
    if (
      identity &&
      identity.subscriptionId.toLowerCase() === subscription &&
      identity.resourceGroup.toLowerCase() === resourceGroup &&
      !vmNames.has(identity.vmName.toLowerCase())
    ) {
      const orphan = nodeView(node);
      background('delete orphan node', { node: orphan.name }, async () => {
        if (await cluster.deleteNode(orphan.name, orphan.uid))
          log.info('orphan node deleted', { node: orphan.name });
      });
    }
  }
  await Promise.all(
    vms
      .filter((vm) => vm.provisioningState === 'Succeeded')
      .map((vm) =>
        // A failed adoption is retried by its own timer; it does not fail the start.
        vmRunning(vm).catch((error: unknown) => log.error('adopt node failed', { vm: vm.name, error })),
      ),
  );
  log.info('kubelet simulator started', { vms: vms.length, kubeletVersion });

  return {
    async stop() {
      if (stopped) return;
      stopped = true;
      unsubscribe();
      for (const vm of tracked.values()) cancelTimers(vm);
      await heartbeats.stop();
      await leaseRenewer?.stop();
      await pods.stop();
      await informer.stop();
      await Promise.allSettled([...inFlight]);
      rest.close();
      connections.close();
    },
    nodes: () => [...byNodeName.values()].filter((vm) => vm.phase === 'running').map((vm) => vm.nodeName),
    stopKubelet(nodeName, faultOptions = {}) {
      const vm = trackedNode(nodeName);
      vm.kubeletFault = faultOptions;
      if (vm.phase !== 'running') return;
      cancelTimers(vm);
      stopBeating(vm);
      vm.phase = 'kubelet-stopped';
      log.info('kubelet stopped: no more heartbeats', { node: nodeName });
    },
    async raiseCondition(nodeName, condition, faultOptions = {}) {
      const vm = trackedNode(nodeName);
      vm.conditionFaults.set(condition.type, { condition, options: faultOptions });
      await postCondition(vm, condition, true);
    },
    async nodeIdentity(nodeName) {
      const kubelet = trackedNode(nodeName).kubelet;
      if (!kubelet) throw new Error(`${nodeName} has no credentials yet`);
      return kubelet.api.identity();
    },
    async clearCondition(nodeName, conditionType) {
      const vm = trackedNode(nodeName);
      const fault = vm.conditionFaults.get(conditionType);
      if (!fault) return;
      vm.conditionFaults.delete(conditionType);
      await postCondition(vm, clearedCondition(fault.condition, 'the problem went away'), true);
    },
    stats: () => ({
      nodes: heartbeats.size(),
      podsStarted: pods.started(),
      requests: sumCounts(counts, leaseRenewer?.counts() ?? {}),
    }),
  };
}

function sumCounts(...all: Record<string, number>[]): Record<string, number> {
  const sum: Record<string, number> = {};
  for (const counts of all)
    for (const [label, n] of Object.entries(counts)) sum[label] = (sum[label] ?? 0) + n;
  return sum;
}
