// What the host reports as it works, for logs, metrics and tests that wait for something to happen.

export type TriggerKind = 'queue' | 'timer' | 'activity' | 'http';

export type HostEvent =
  | {
      type: 'function.invoked';
      functionName: string;
      trigger: TriggerKind;
      invocationId: string;
      dequeueCount?: number;
    }
  | {
      type: 'function.succeeded';
      functionName: string;
      trigger: TriggerKind;
      invocationId: string;
      durationMs: number;
    }
  | {
      type: 'function.failed';
      functionName: string;
      trigger: TriggerKind;
      invocationId: string;
      durationMs: number;
      error: string;
      dequeueCount?: number;
    }
  | {
      type: 'message.poisoned';
      functionName: string;
      queueName: string;
      poisonQueueName: string;
      messageId: string;
      dequeueCount: number;
      reason: string;
    }
  | { type: 'timer.skipped'; functionName: string; reason: string }
  | { type: 'orchestration.started'; instanceId: string; name: string }
  | { type: 'orchestration.completed'; instanceId: string; name: string; output: unknown }
  | { type: 'orchestration.failed'; instanceId: string; name: string; error: string }
  | { type: 'orchestration.terminated'; instanceId: string; name: string; reason: string }
  | { type: 'orchestration.continuedAsNew'; instanceId: string; name: string };

export type HostEventListener = (event: HostEvent) => void;

export interface HostEventBus {
  emit(event: HostEvent): void;
  on(listener: HostEventListener): () => void;
}

export function createEventBus(): HostEventBus {
  const listeners = new Set<HostEventListener>();
  return {
    emit: (event) => {
      for (const listener of listeners) listener(event);
    },
    on: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
