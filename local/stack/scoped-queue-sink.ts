// A queue sink for the event bridge that forwards only the changes of objects whose name contains a
// token. When several local stacks share one control plane (the end-to-end tests), each bridge then feeds
// its own host only its own objects, as if each stack had a cluster to itself.
import type { QueueTarget } from '../../bridge/index.js';
import { createQueueSink, type QueueSink, type QueueSinkOptions } from '../../bridge/queue-sink.js';
import { parseObjectChangeEvent } from '../../shared/events/cloud-event.js';

export function scopedQueueSink(
  target: QueueTarget,
  nameToken: string,
  options: QueueSinkOptions = {},
): QueueSink {
  const sink = createQueueSink(target, options);
  return {
    probe: () => sink.probe(),
    send: async (messageText) => {
      if (parseObjectChangeEvent(messageText).data.name.includes(nameToken)) await sink.send(messageText);
    },
  };
}
