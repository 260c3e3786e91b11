// karpenter.sh/do-not-disrupt on a pod, as upstream's IsDoNotDisruptActive reads it (pkg/utils/pod/
// scheduling.go, designs/do-not-disrupt-grace-period.md). Consolidation and drift do not pick a node with
// such a pod, and a drain does not evict the pod while it is protected (it waits, as upstream's eviction
// queue does, until the protection ends, the pod ends, or terminationGracePeriod forces it).
import { WellKnown } from '../models/karpenter.js';
import { parseGoDuration } from './go-values.js';

export interface DoNotDisruptPod {
  annotations: Readonly<Record<string, string>>;
  phase?: string;
  deletionTimestamp?: string;
  /** status.startTime, from which a do-not-disrupt duration counts. */
  startTime?: string;
}

/**
 * What a pod's karpenter.sh/do-not-disrupt says now, as upstream's IsDoNotDisruptActive reads it: "true"
 * protects for good; a Go duration (time.ParseDuration, positive) protects until that long after the
 * pod's status.startTime, and for as long as the pod has not started (upstream fails safe); any other
 * value protects nothing and is reported as invalid. A terminal or terminating pod protects nothing.
 */
export type DoNotDisrupt =
  | { kind: 'none' }
  | { kind: 'always' }
  | { kind: 'until'; value: string; until?: Date }
  | { kind: 'elapsed'; value: string; since: Date }
  | { kind: 'invalid'; value: string; message: string };

export function doNotDisruptOf(pod: DoNotDisruptPod, now: Date): DoNotDisrupt {
  const finished = pod.phase === 'Succeeded' || pod.phase === 'Failed';
  if (finished || pod.deletionTimestamp !== undefined) return { kind: 'none' };
  const value = pod.annotations[WellKnown.doNotDisruptAnnotation];
  if (value === undefined) return { kind: 'none' };
  if (value === 'true') return { kind: 'always' };
  const parsed = parseGoDuration(value);
  if ('error' in parsed) {
    return {
      kind: 'invalid',
      value,
      message: `failed to parse ${JSON.stringify(value)} as a duration: ${parsed.error}`,
    };
  }
  if (parsed.ns <= 0n) {
    return { kind: 'invalid', value, message: `duration ${JSON.stringify(value)} must be positive` };
  }
  const started = Date.parse(pod.startTime ?? '');
  if (!Number.isFinite(started)) return { kind: 'until', value };
  const until = started + Number(parsed.ns) / 1e6;
  return now.getTime() < until
    ? { kind: 'until', value, until: new Date(until) }
    : { kind: 'elapsed', value, since: new Date(until) };
}

export function isDoNotDisruptActive(pod: DoNotDisruptPod, now: Date): boolean {
  const state = doNotDisruptOf(pod, now);
  return state.kind === 'always' || state.kind === 'until';
}
