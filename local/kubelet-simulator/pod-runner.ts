// The part of the simulated kubelet that runs pods. A pod bound to one of the simulator's running Nodes
// starts after a short delay (its containers "pull and start") and reports Running and Ready, as kubelet
// does through the pod status subresource. A pod being deleted gets SIGTERM: its containers exit after
// their shutdown time, never later than the pod's grace period, and kubelet then removes the pod with
// grace period 0 (the final delete a real kubelet makes once the containers are gone).
//
// Only pods bound to a Node this simulator keeps alive are touched: the watch asks the API server for
// bound pods only (`spec.nodeName!=`), and each pod's node is checked against `isRunningNode`. Each
// write (the status, the final delete) is made as the pod's node (`kubeletOf`), so NodeRestriction lets
// it touch only pods bound to that node, as a kubelet's. The one watch, with the admin's rights, stands
// for every kubelet's own watch of its pods (`spec.nodeName=<node>`): one watch instead of hundreds.
//
// On a node booted from a bad image whose containers crash (bad-node-image.ts), a pod that is not a
// DaemonSet's never becomes Ready: each status write of its crash loop comes back through the watch, which
// schedules the next crash, so the loop needs no timer of its own and ends with the pod or the node.
//
// A start, stop or crash whose write fails (a connection reset, the API server overloaded) is tried again
// from the pod as the watch has it then, after a backoff per pod, as kubelet's pod workers sync a pod
// again after a failed sync. Without that, one reset left a pod bound and never Running: it stopped a
// 1,000-node scale-up at 9,999 of 10,000 pods.
import { ListWatch, Watch, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { isConflict, isNotFound } from '../../shared/kube/errors.js';
import type { Logger } from '../../shared/observability/logger.js';
import type { KubeRequest, KubeRest } from './kube-rest.js';
import {
  crashesOnBadImage,
  crashLoopRestarts,
  crashLoopStatusPatch,
  type CrashingPod,
} from './bad-node-image.js';

/**
 * A pod whose containers ignore SIGTERM: it takes its whole grace period to stop, as a process that only
 * SIGKILL ends would. Used to exercise drains that wait on terminationGracePeriodSeconds.
 */
export const IGNORES_SIGTERM_ANNOTATION = 'kubelet-simulator.nodeclaim-azure.io/ignores-sigterm';

export interface PodRunnerOptions {
  kubeConfig: KubeConfig;
  rest: KubeRest;
  /** Whether `nodeName` is a Node this simulator runs (registered and heartbeating). */
  isRunningNode: (nodeName: string) => boolean;
  /** Requests as the node's kubelet (system:node:<name>); undefined before it has credentials. */
  kubeletOf: (nodeName: string) => KubeRequest | undefined;
  /** From binding to Running and Ready, already divided by speed. */
  startDelayMs: number;
  /** From SIGTERM to the containers' exit, already divided by speed; capped by the grace period. */
  shutdownDelayMs: number;
  /** Whether the containers of pods on `nodeName` crash (its image's behaviour is podsCrash). */
  crashesPods: (nodeName: string) => boolean;
  /** Between two crashes of a crash-looping container, already divided by speed. */
  crashRestartMs: number;
  log: Logger;
}

export interface PodRunner {
  /** Starts the pods already bound to a Node that just became one of ours (registered or adopted). */
  nodeRunning(nodeName: string): void;
  /** Pods this runner started so far. */
  started(): number;
  stop(): Promise<void>;
}

// The API server's JSON as parsed (timestamps are strings), not client-node's model.
interface PodJson extends CrashingPod {
  metadata: CrashingPod['metadata'] & {
    deletionTimestamp?: string;
    deletionGracePeriodSeconds?: number;
    annotations?: Record<string, string>;
  };
  spec: CrashingPod['spec'] & { nodeName?: string };
  status?: CrashingPod['status'] & {
    phase?: string;
    conditions?: { type: string; status: string }[];
  };
}

const restartDelayMs = 1_000;
/** A failed action's first retry, doubling per failure of the same pod up to the cap. */
const retryFirstDelayMs = 1_000;
const retryMaxDelayMs = 30_000;

type Action = 'start' | 'stop' | 'crash';

export async function startPodRunner(options: PodRunnerOptions): Promise<PodRunner> {
  const { rest, log } = options;
  /** One pending action per pod UID: a start, a stop or a crash timer. */
  const pending = new Map<string, { action: Action; timer: NodeJS.Timeout }>();
  const inFlight = new Set<Promise<unknown>>();
  /** Failures in a row per pod UID, and the retry timers waiting. */
  const failures = new Map<string, number>();
  const retries = new Set<NodeJS.Timeout>();
  let stopped = false;
  let startedCount = 0;
  let nextPodIp = 1;

  const informer = new ListWatch<KubernetesObject>(
    '/api/v1/pods',
    new Watch(options.kubeConfig),
    async () => {
      const list = await rest.request<{ metadata?: { resourceVersion?: string }; items: PodJson[] }>(
        'list bound pods',
        'GET',
        '/api/v1/pods?fieldSelector=spec.nodeName%21%3D',
      );
      return { ...list, items: list.items as unknown as KubernetesObject[] };
    },
    false,
    undefined,
    'spec.nodeName!=',
  );

  const background = (what: string, pod: PodJson, work: () => Promise<unknown>): void => {
    if (stopped) return;
    const uid = pod.metadata.uid;
    const promise = work()
      .then(() => failures.delete(uid))
      .catch((error: unknown) => {
        const failed = (failures.get(uid) ?? 0) + 1;
        failures.set(uid, failed);
        const retryInMs = Math.min(retryMaxDelayMs, retryFirstDelayMs * 2 ** (failed - 1));
        log.warn(`${what} failed; trying again`, {
          pod: `${pod.metadata.namespace}/${pod.metadata.name}`,
          error,
          retryInMs,
        });
        retryLater(pod, retryInMs);
      })
      .finally(() => inFlight.delete(promise));
    inFlight.add(promise);
  };

  /** Syncs the pod again, as the watch has it by then: a pod deleted or changed meanwhile gets what it needs now. */
  const retryLater = (pod: PodJson, delayMs: number): void => {
    const timer = setTimeout(() => {
      retries.delete(timer);
      if (stopped) return;
      const current = informer.get(pod.metadata.name, pod.metadata.namespace);
      if (current) onPod(current);
    }, delayMs);
    retries.add(timer);
  };

  const schedule = (pod: PodJson, action: Action, delayMs: number, work: () => Promise<void>) => {
    const uid = pod.metadata.uid;
    const existing = pending.get(uid);
    if (existing?.action === action) return;
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(
      () => {
        pending.delete(uid);
        background(`${action} pod`, pod, work);
      },
      Math.max(0, delayMs),
    );
    pending.set(uid, { action, timer });
  };

  const onPod = (object: KubernetesObject): void => {
    if (stopped) return;
    const pod = object as unknown as PodJson;
    const nodeName = pod.spec.nodeName;
    if (nodeName === undefined || !options.isRunningNode(nodeName)) return;
    if (pod.metadata.deletionTimestamp !== undefined) {
      schedule(pod, 'stop', stopDelayMs(pod, options.shutdownDelayMs), () => removePod(pod));
      return;
    }
    if (isTerminal(pod)) return;
    if (options.crashesPods(nodeName) && crashesOnBadImage(pod)) {
      const delayMs = crashLoopRestarts(pod) === undefined ? options.startDelayMs : options.crashRestartMs;
      schedule(pod, 'crash', delayMs, () => crashPod(pod, nodeName));
      return;
    }
    if (isRunningAndReady(pod)) return;
    schedule(pod, 'start', options.startDelayMs, () => startPod(pod, nodeName));
  };

  /** The containers exit (again): the first crash, or one more restart of the loop. */
  const crashPod = async (pod: PodJson, nodeName: string): Promise<void> => {
    const kubelet = options.kubeletOf(nodeName);
    if (!kubelet || !options.isRunningNode(nodeName)) return;
    const restarts = crashLoopRestarts(pod);
    const patch =
      restarts === undefined
        ? crashLoopStatusPatch(pod, 0, new Date(), { podIp: podIp(nextPodIp++), hostIp: '10.224.0.4' })
        : crashLoopStatusPatch(pod, restarts + 1, new Date());
    try {
      await kubelet(
        'crash pod',
        'PATCH',
        `${podPath(pod)}/status`,
        patch,
        'application/strategic-merge-patch+json',
      );
    } catch (error) {
      if (isNotFound(error) || isConflict(error)) return;
      throw error;
    }
  };

  const startPod = async (pod: PodJson, nodeName: string): Promise<void> => {
    const kubelet = options.kubeletOf(nodeName);
    if (!kubelet) return;
    const now = new Date().toISOString();
    const running = { running: { startedAt: now } };
    const patch = {
      metadata: { uid: pod.metadata.uid },
      status: {
        phase: 'Running',
        hostIP: '10.224.0.4',
        podIP: podIp(nextPodIp++),
        startTime: now,
        conditions: ['PodReadyToStartContainers', 'Initialized', 'ContainersReady', 'Ready'].map((type) => ({
          type,
          status: 'True',
          lastTransitionTime: now,
        })),
        ...(pod.spec.initContainers !== undefined && {
          initContainerStatuses: pod.spec.initContainers.map((container) => ({
            name: container.name,
            image: container.image ?? '',
            imageID: '',
            ready: container.restartPolicy === 'Always',
            restartCount: 0,
            state:
              container.restartPolicy === 'Always'
                ? running
                : { terminated: { exitCode: 0, reason: 'Completed', startedAt: now, finishedAt: now } },
          })),
        }),
        containerStatuses: pod.spec.containers.map((container) => ({
          name: container.name,
          image: container.image ?? '',
          imageID: '',
          ready: true,
          started: true,
          restartCount: 0,
          state: running,
        })),
      },
    };
    try {
      await kubelet(
        'start pod',
        'PATCH',
        `${podPath(pod)}/status`,
        patch,
        'application/strategic-merge-patch+json',
      );
      startedCount += 1;
      log.debug('pod running', { pod: `${pod.metadata.namespace}/${pod.metadata.name}`, node: nodeName });
    } catch (error) {
      // Gone, or replaced by a new pod of the same name (the uid precondition): nothing to run.
      if (isNotFound(error) || isConflict(error)) return;
      throw error;
    }
  };

  const removePod = async (pod: PodJson): Promise<void> => {
    const kubelet = options.kubeletOf(pod.spec.nodeName ?? '');
    if (!kubelet) return;
    try {
      await kubelet('remove terminated pod', 'DELETE', podPath(pod), {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        gracePeriodSeconds: 0,
        preconditions: { uid: pod.metadata.uid },
      });
      log.debug('pod terminated', { pod: `${pod.metadata.namespace}/${pod.metadata.name}` });
    } catch (error) {
      if (isNotFound(error) || isConflict(error)) return;
      throw error;
    }
  };

  informer.on('add', onPod);
  informer.on('update', onPod);
  informer.on('delete', (object) => {
    const uid = (object as unknown as PodJson).metadata.uid;
    const entry = pending.get(uid);
    if (entry) clearTimeout(entry.timer);
    pending.delete(uid);
    failures.delete(uid);
  });
  informer.on('error', (error: unknown) => {
    if (stopped) return;
    log.warn('pod watch failed; restarting', { error });
    setTimeout(() => {
      if (stopped) return;
      informer
        .start()
        .catch((restartError: unknown) => log.warn('pod watch restart failed', { restartError }));
    }, restartDelayMs);
  });
  await informer.start();

  return {
    nodeRunning(nodeName) {
      for (const pod of informer.list()) {
        if ((pod as unknown as PodJson).spec.nodeName === nodeName) onPod(pod);
      }
    },
    started: () => startedCount,
    async stop() {
      if (stopped) return;
      stopped = true;
      for (const entry of pending.values()) clearTimeout(entry.timer);
      pending.clear();
      for (const timer of retries) clearTimeout(timer);
      retries.clear();
      await informer.stop();
      await Promise.allSettled([...inFlight]);
    },
  };
}

function podPath(pod: PodJson): string {
  return `/api/v1/namespaces/${encodeURIComponent(pod.metadata.namespace)}/pods/${encodeURIComponent(pod.metadata.name)}`;
}

/** When the containers exit after SIGTERM: their shutdown time, never past the pod's grace period. */
function stopDelayMs(
  pod: Pick<PodJson, 'metadata'>,
  shutdownDelayMs: number,
  now: number = Date.now(),
): number {
  const deletionAt = Date.parse(pod.metadata.deletionTimestamp ?? '');
  const graceMs = (pod.metadata.deletionGracePeriodSeconds ?? 30) * 1000;
  // deletionTimestamp is the deadline: the API server sets it to the delete time plus the grace period.
  const requestedAt = Number.isNaN(deletionAt) ? now : deletionAt - graceMs;
  const ignoresSigterm = pod.metadata.annotations?.[IGNORES_SIGTERM_ANNOTATION] === 'true';
  const exitAfterMs = ignoresSigterm ? graceMs : Math.min(shutdownDelayMs, graceMs);
  return requestedAt + exitAfterMs - now;
}

function isTerminal(pod: PodJson): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

function isRunningAndReady(pod: PodJson): boolean {
  return (
    pod.status?.phase === 'Running' &&
    (pod.status.conditions ?? []).some(
      (condition) => condition.type === 'Ready' && condition.status === 'True',
    )
  );
}

function podIp(index: number): string {
  return `10.244.${Math.floor(index / 250) % 250}.${(index % 250) + 2}`;
}
