// The status writes a bad node image makes the simulated kubelet and node problem detector post: what the
// integration test cannot pin down cheaply (the exact fields of a crash loop's first and later writes,
// which pods a bad image spares).
import { describe, expect, it } from 'vitest';
import { NODE_HEALTHY } from '../../../shared/decisions/node-repair/policies.js';
import {
  crashesOnBadImage,
  crashLoopRestarts,
  crashLoopStatusPatch,
  imageName,
  notReadyStatusPatch,
  unhealthyImageCondition,
  type CrashingPod,
} from '../../../local/kubelet-simulator/bad-node-image.js';

const now = new Date('2026-12-06T10:00:00Z');

const pod: CrashingPod = {
  metadata: { name: 'web-1', namespace: 'apps', uid: 'u-1' },
  spec: {
    containers: [{ name: 'app', image: 'nginx' }, { name: 'log' }],
    initContainers: [{ name: 'setup' }, { name: 'proxy', restartPolicy: 'Always' }],
  },
};

describe('bad node image', () => {
  it('names the image by its gallery version', () => {
    expect(imageName('/CommunityGalleries/g/images/d/versions/202612.06.0')).toBe('202612.06.0');
    expect(imageName(undefined)).toBe('unknown');
  });

  it('kubelet’s not-ready condition keeps its transition time unless it changes', () => {
    const patch = notReadyStatusPatch('202612.06.0', now, false);
    expect(patch.status.conditions[0]).toEqual({
      type: 'Ready',
      status: 'False',
      reason: 'KubeletNotReady',
      message: expect.stringMatching(
        /^container runtime network not ready: .*\(simulated bad node image 202612\.06\.0\)$/,
      ),
      lastHeartbeatTime: now.toISOString(),
    });
    expect(notReadyStatusPatch('x', now, true).status.conditions[0]?.lastTransitionTime).toBe(
      now.toISOString(),
    );
  });

  it('the node problem detector’s condition is NodeHealthy=False naming the image', () => {
    expect(unhealthyImageCondition('202612.20.0')).toEqual({
      type: NODE_HEALTHY,
      status: 'False',
      reason: 'NodeProblemDetected',
      message: expect.stringContaining('simulated bad node image 202612.20.0'),
    });
  });

  it('spares the pods a DaemonSet controls, and only those', () => {
    const owned = (kind: string, controller: boolean): CrashingPod => ({
      ...pod,
      metadata: {
        ...pod.metadata,
        ownerReferences: [{ apiVersion: 'apps/v1', kind, name: 'o', uid: 'o', controller }],
      },
    });
    expect(crashesOnBadImage(pod)).toBe(true);
    expect(crashesOnBadImage(owned('ReplicaSet', true))).toBe(true);
    expect(crashesOnBadImage(owned('DaemonSet', true))).toBe(false);
  });

  it('the first crash gives the pod Running with Ready/ContainersReady False and its IP', () => {
    const patch = crashLoopStatusPatch(pod, 0, now, { podIp: '10.244.0.9', hostIp: '10.224.0.4' });
    expect(patch).toMatchObject({
      metadata: { uid: 'u-1' },
      status: {
        phase: 'Running',
        podIP: '10.244.0.9',
        conditions: expect.arrayContaining([
          expect.objectContaining({ type: 'Ready', status: 'False', reason: 'ContainersNotReady' }),
          expect.objectContaining({ type: 'ContainersReady', status: 'False' }),
          expect.objectContaining({ type: 'Initialized', status: 'True' }),
        ]),
        initContainerStatuses: [
          expect.objectContaining({
            name: 'setup',
            state: expect.objectContaining({ terminated: expect.anything() }),
          }),
          expect.objectContaining({ name: 'proxy', ready: true }),
        ],
        containerStatuses: [
          expect.objectContaining({ name: 'app', ready: false, restartCount: 0 }),
          expect.objectContaining({ name: 'log', ready: false, restartCount: 0 }),
        ],
      },
    });
    expect(crashLoopRestarts(pod)).toBeUndefined();
    expect(crashLoopRestarts(patch as Pick<CrashingPod, 'status'>)).toBe(0);
  });

  it('a later crash only replaces the container statuses, one restart more', () => {
    const patch = crashLoopStatusPatch(pod, 4, now);
    expect(Object.keys((patch as { status: object }).status)).toEqual(['containerStatuses']);
    expect(crashLoopRestarts(patch as Pick<CrashingPod, 'status'>)).toBe(4);
    expect(patch).toMatchObject({
      status: {
        containerStatuses: [
          {
            restartCount: 4,
            state: { waiting: { reason: 'CrashLoopBackOff' } },
            lastState: { terminated: { exitCode: 1, reason: 'Error' } },
          },
          { restartCount: 4 },
        ],
      },
    });
  });
});
