// Kubernetes Events on the objects this system manages, so `kubectl describe` shows what happened and why.
import type { KubeClients } from './client.js';
import type { Logger } from '../observability/logger.js';

export interface EventTarget {
  apiVersion: string;
  kind: string;
  name: string;
  uid?: string;
  /** Cluster-scoped objects have no namespace; their events live in `default`, as kubectl expects. */
  namespace?: string;
}

export interface EventRecorder {
  warning(target: EventTarget, reason: string, message: string): Promise<void>;
  normal(target: EventTarget, reason: string, message: string): Promise<void>;
}

export function kubeEventRecorder(
  clients: () => Promise<KubeClients>,
  component: string,
  log: Logger,
): EventRecorder {
  const record = async (type: 'Normal' | 'Warning', target: EventTarget, reason: string, message: string) => {
    const namespace = target.namespace ?? 'default';
    const now = new Date();
    try {
      const { core } = await clients();
      await core.createNamespacedEvent({
        namespace,
        body: {
          metadata: { generateName: `${target.name}.`, namespace },
          involvedObject: {
            apiVersion: target.apiVersion,
            kind: target.kind,
            name: target.name,
            // The API server rejects an event on a namespaced object whose involvedObject names no namespace.
            ...(target.namespace ? { namespace: target.namespace } : {}),
            ...(target.uid ? { uid: target.uid } : {}),
          },
          type,
          reason,
          message: message.slice(0, 1024),
          source: { component },
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
          reportingComponent: component,
        },
      });
    } catch (error) {
      // Events are best effort: losing one must never fail the reconcile that produced it.
      log.warn('could not record event', { reason, target: target.name, error });
    }
  };
  return {
    warning: (target, reason, message) => record('Warning', target, reason, message),
    normal: (target, reason, message) => record('Normal', target, reason, message),
  };
}
