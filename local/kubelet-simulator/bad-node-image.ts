// What a node booted from a bad node image shows, so node image rollouts with health gates can be tested
// against the real control plane: the emulator's galleries give each image version a behaviour
// (gallery-images.ts), and the simulated kubelet, node problem detector and containers of a VM created
// from that version act it out. Pure: the Node and pod status writes, as functions of the image and time.
import type { V1OwnerReference } from '@kubernetes/client-node';
import { NODE_HEALTHY } from '../../shared/decisions/node-repair/policies.js';
import { parseCommunityGalleryImageId } from '../arm-emulator/index.js';
import type { SimulatedCondition } from './node-conditions.js';

/** From Ready=True to the node problem detector's NodeHealthy=False, at speed 1. */
export const UNHEALTHY_AFTER_READY_MS = 60_000;
/** Between two crashes of a crash-looping container, at speed 1 (kubelet's first back-off is 10 s). */
export const CRASH_RESTART_MS = 10_000;

/** How the image is named in messages: its version, or the whole ID when it is not a gallery version. */
export function imageName(communityGalleryImageId: string | undefined): string {
  return (
    parseCommunityGalleryImageId(communityGalleryImageId)?.version ?? communityGalleryImageId ?? 'unknown'
  );
}

const suffix = (image: string): string => `(simulated bad node image ${image})`;

/**
 * kubelet's Ready condition on a node whose CNI never comes up: False, as at registration, with the
 * image named; `transition` when it was not False before (a new lastTransitionTime).
 */
export function notReadyStatusPatch(
  image: string,
  now: Date,
  transition: boolean,
): { status: { conditions: Array<Record<string, string>> } } {
  const time = now.toISOString();
  return {
    status: {
      conditions: [
        {
          type: 'Ready',
          status: 'False',
          reason: 'KubeletNotReady',
          message:
            'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady ' +
            `message:cni plugin not initialized ${suffix(image)}`,
          lastHeartbeatTime: time,
          ...(transition ? { lastTransitionTime: time } : {}),
        },
      ],
    },
  };
}

/** What the node problem detector posts a minute after such a node went Ready. */
export function unhealthyImageCondition(image: string): SimulatedCondition {
  return {
    type: NODE_HEALTHY,
    status: 'False',
    reason: 'NodeProblemDetected',
    message: `the node problem detector found the node unhealthy ${suffix(image)}`,
  };
}

/** The fields of a pod its crash-loop status is made from. */
export interface CrashingPod {
  metadata: { name: string; namespace: string; uid: string; ownerReferences?: V1OwnerReference[] };
  spec: {
    containers: { name: string; image?: string }[];
    initContainers?: { name: string; image?: string; restartPolicy?: string }[];
  };
  status?: {
    containerStatuses?: { name: string; restartCount?: number; state?: { waiting?: { reason?: string } } }[];
  };
}

/** A bad image breaks the workloads; the DaemonSets (CNI, kube-proxy, the agents) still run. */
export function crashesOnBadImage(pod: Pick<CrashingPod, 'metadata'>): boolean {
  return !(pod.metadata.ownerReferences ?? []).some(
    (owner) => owner.kind === 'DaemonSet' && owner.controller,
  );
}

/** The restart count of a pod that is crash-looping already; undefined before its first crash. */
export function crashLoopRestarts(pod: Pick<CrashingPod, 'status'>): number | undefined {
  const statuses = pod.status?.containerStatuses ?? [];
  if (!statuses.some((s) => s.state?.waiting?.reason === 'CrashLoopBackOff')) return undefined;
  return Math.max(0, ...statuses.map((s) => s.restartCount ?? 0));
}

/**
 * The status kubelet posts for a pod whose containers exit at once, every time: `restartCount` restarts
 * so far, each container waiting in CrashLoopBackOff after an exit with code 1. The first crash (`first`,
 * with the pod's IP) also gives the pod its phase and conditions: Running, Ready and ContainersReady
 * False; later ones only replace the container statuses, so the conditions keep their transition times.
 */
export function crashLoopStatusPatch(
  pod: CrashingPod,
  restartCount: number,
  now: Date,
  first?: { podIp: string; hostIp: string },
): Record<string, unknown> {
  const time = now.toISOString();
  const names = pod.spec.containers.map((c) => c.name).join(' ');
  const unready = { reason: 'ContainersNotReady', message: `containers with unready status: [${names}]` };
  const containerStatuses = pod.spec.containers.map((container) => ({
    name: container.name,
    image: container.image ?? '',
    imageID: '',
    ready: false,
    started: false,
    restartCount,
    state: {
      waiting: {
        reason: 'CrashLoopBackOff',
        message: `back-off ${CRASH_RESTART_MS / 1000}s restarting failed container=${container.name} pod=${pod.metadata.name}_${pod.metadata.namespace}(${pod.metadata.uid})`,
      },
    },
    lastState: { terminated: { exitCode: 1, reason: 'Error', startedAt: time, finishedAt: time } },
  }));
  if (!first) return { metadata: { uid: pod.metadata.uid }, status: { containerStatuses } };
  return {
    metadata: { uid: pod.metadata.uid },
    status: {
      phase: 'Running',
      hostIP: first.hostIp,
      podIP: first.podIp,
      startTime: time,
      conditions: [
        { type: 'PodReadyToStartContainers', status: 'True', lastTransitionTime: time },
        { type: 'Initialized', status: 'True', lastTransitionTime: time },
        { type: 'ContainersReady', status: 'False', ...unready, lastTransitionTime: time },
        { type: 'Ready', status: 'False', ...unready, lastTransitionTime: time },
      ],
      ...(pod.spec.initContainers !== undefined && {
        initContainerStatuses: pod.spec.initContainers.map((container) => ({
          name: container.name,
          image: container.image ?? '',
          imageID: '',
          ready: container.restartPolicy === 'Always',
          restartCount: 0,
          state:
            container.restartPolicy === 'Always'
              ? { running: { startedAt: time } }
              : { terminated: { exitCode: 0, reason: 'Completed', startedAt: time, finishedAt: time } },
        })),
      }),
      containerStatuses,
    },
  };
}
