// The in-process host's public surface: what tests and `npm start` use.
export { createLocalHost, type LocalHost, type LocalHostOptions } from './local-host.js';
export { createScaledClock, systemClock, type Clock, type TimerPurpose } from './clock.js';
export type { HostEvent, HostEventListener, TriggerKind } from './events.js';
export { poisonQueueNameOf } from './queue-listener.js';
export { nextOccurrence, parseNcrontab, type CronSchedule } from './ncrontab.js';
export type { DurablePollingStats } from './orchestration-runtime.js';
export type { QueuePollerStats } from './durable-polling.js';
export type { ActivitySlotUse, ActivitySlotsSnapshot, SlotWait } from './activity-slots.js';
export {
  mergeDurableWork,
  type ActionsInSecond,
  type DurableActionCounts,
  type DurableActionKind,
  type DurableWorkCounts,
  type DurableWorkSnapshot,
  type HistoryBytes,
  type InstanceHistoryBytes,
} from './durable-work.js';
