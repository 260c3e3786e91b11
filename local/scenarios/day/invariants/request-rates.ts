// ARM and Kubernetes request rates within their limits. ARM: for each request kind Compute throttles,
// the most requests in any 60 s window against Compute's per-minute figure (the emulator's buckets carry
// the same), and how many 429s the buckets (not the weather's injected throttling) answered. Kubernetes:
// from the API server's own metrics, the app's requests the priority-and-fairness filter rejected (429)
// and the peak of requests in flight against the server's concurrency limit. Pure.
//
// With priority and fairness (on by default since Kubernetes 1.20), --max-requests-inflight and
// --max-mutating-requests-inflight (400, 200) are no longer two limits: their sum (600) is the server's
// concurrency, shared among the priority levels, and a request is refused only when its level's queues
// are full. So the in-flight peak is judged in all against 600 (per kind for information), and the
// rejections that judge the app are those of its own flow (global-default: the functions' and the
// bridge's users; see ApiServerSample). A 429 is normal for a client that honours Retry-After, as the app
// does: the app may see at most 1% of its requests refused; more says it is not backing off. Rejections of
// other clients are reported, not judged (the control plane's and the kubelets' load is not the app's).
import { result, type ApiServerSample, type DayHistory, type InvariantResult } from './history.js';

export const COMPUTE_LIMITS_PER_MINUTE: Readonly<Record<string, number>> = {
  putVm: 500,
  deleteVm: 500,
  getVm: 8_000,
  getOperation: 5_000,
  listVms: 300,
};

export const API_SERVER_INFLIGHT = { readOnly: 400, mutating: 200 } as const;
/** The server's concurrency under priority and fairness: the two flags' sum. */
export const API_SERVER_CONCURRENCY = API_SERVER_INFLIGHT.readOnly + API_SERVER_INFLIGHT.mutating;
/** The share of the app's requests the API server may refuse (429) before the app counts as impolite. */
export const APP_REJECTED_SHARE_LIMIT = 0.01;

/** The most entries of `times` (sorted) inside any window of `windowMs`. */
export function peakInWindow(times: readonly number[], windowMs: number): number {
  let peak = 0;
  let start = 0;
  for (let end = 0; end < times.length; end++) {
    while ((times[end] as number) - (times[start] as number) >= windowMs) start++;
    peak = Math.max(peak, end - start + 1);
  }
  return peak;
}

/** The growth of a counter that restarts at 0 when its process restarts. */
export function counterGrowth(values: readonly number[]): number {
  let growth = 0;
  for (let i = 1; i < values.length; i++) {
    const [before, now] = [values[i - 1] as number, values[i] as number];
    growth += now >= before ? now - before : now;
  }
  return growth;
}

/**
 * A counter's mean rate per second over the samples' span, and its peak between two samples in a row
 * (a restarted counter counts from 0), each to one decimal.
 */
export function counterRates<S extends { at: number }>(
  samples: readonly S[],
  counter: (sample: S) => number,
): { mean: number; peak: number } {
  let peak = 0;
  for (let i = 1; i < samples.length; i++) {
    const [a, b] = [samples[i - 1], samples[i]];
    if (!a || !b || b.at <= a.at) continue;
    const growth = counter(b) >= counter(a) ? counter(b) - counter(a) : counter(b);
    peak = Math.max(peak, (growth * 1000) / (b.at - a.at));
  }
  const spanS = samples.length > 1 ? ((samples.at(-1)?.at ?? 0) - (samples[0]?.at ?? 0)) / 1000 : 0;
  const mean = spanS > 0 ? counterGrowth(samples.map(counter)) / spanS : 0;
  return { mean: Number(mean.toFixed(1)), peak: Number(peak.toFixed(1)) };
}

export function checkArmRates(history: DayHistory): InvariantResult {
  const violations: string[] = [];
  const figures: string[] = [];
  for (const [kind, limit] of Object.entries(COMPUTE_LIMITS_PER_MINUTE)) {
    const times = history.armRequests.filter((r) => r.kind === kind).map((r) => r.at);
    if (times.length === 0) continue;
    const peak = peakInWindow(times, 60_000);
    figures.push(`${kind} ${peak}/min (${((100 * peak) / limit).toFixed(1)}% of ${limit})`);
    if (peak > limit) violations.push(`${kind}: ${peak} requests in one minute, Compute allows ${limit}`);
  }
  const bucket429s = Math.max(
    0,
    history.armRequests.filter((r) => r.throttled).length - history.injectedThrottles,
  );
  if (bucket429s > 0) violations.push(`Compute's buckets throttled ${bucket429s} requests`);
  return result(
    "ARM request rates within Compute's limits",
    violations,
    `${figures.join(', ')}; ${bucket429s} throttled by the buckets`,
  );
}

export function checkKubernetesRates(samples: readonly ApiServerSample[], final = true): InvariantResult {
  if (samples.length < 2) {
    return result(
      "Kubernetes request rates within the API server's limits",
      final ? ['no API server metrics were sampled'] : [],
      'no samples yet',
    );
  }
  const rejected = counterGrowth(samples.map((s) => s.rejectedTotal));
  const appRejected = counterGrowth(samples.map((s) => s.appRejectedTotal));
  const appDispatched = counterGrowth(samples.map((s) => s.appDispatchedTotal));
  const appShare = appRejected / Math.max(1, appDispatched + appRejected);
  const peakReadOnly = Math.max(...samples.map((s) => s.inflightReadOnly));
  const peakMutating = Math.max(...samples.map((s) => s.inflightMutating));
  const peakInFlight = Math.max(...samples.map((s) => s.inflightReadOnly + s.inflightMutating));
  let peakPerMinute = 0;
  for (let i = 1; i < samples.length; i++) {
    const [a, b] = [samples[i - 1] as ApiServerSample, samples[i] as ApiServerSample];
    const growth = b.requestsTotal >= a.requestsTotal ? b.requestsTotal - a.requestsTotal : b.requestsTotal;
    if (b.at > a.at) peakPerMinute = Math.max(peakPerMinute, (growth * 60_000) / (b.at - a.at));
  }
  const percent = (share: number): string => `${(share * 100).toFixed(2)}%`;
  const violations = [
    ...(appShare > APP_REJECTED_SHARE_LIMIT
      ? [
          `the API server rejected ${appRejected} of the app's ${appDispatched + appRejected} requests (${percent(appShare)}, limit ${percent(APP_REJECTED_SHARE_LIMIT)})`,
        ]
      : []),
    ...(peakInFlight > API_SERVER_CONCURRENCY ? [`${peakInFlight} requests in flight`] : []),
  ];
  return result(
    "Kubernetes request rates within the API server's limits",
    violations,
    `peak ${Math.round(peakPerMinute)} requests/min (every client), in flight at most ${peakInFlight} ` +
      `(limit ${API_SERVER_CONCURRENCY}; ${peakReadOnly} read-only, ${peakMutating} mutating); ` +
      `${appRejected} of the app's ${appDispatched + appRejected} requests rejected (${percent(appShare)}), ` +
      `${rejected} of every client's`,
  );
}

/** The figures of one /metrics answer the day samples (Prometheus text format). */
export function parseApiServerMetrics(text: string, at: number): ApiServerSample {
  const sum = (name: string, filter: (labels: string) => boolean = () => true): number => {
    let total = 0;
    for (const line of text.split('\n')) {
      if (!line.startsWith(name)) continue;
      const match = /^([a-zA-Z_:]+)(\{[^}]*\})?\s+([0-9.eE+-]+)/.exec(line);
      if (!match || match[1] !== name) continue;
      if (!filter(match[2] ?? '')) continue;
      total += Number(match[3]);
    }
    return total;
  };
  return {
    at,
    requestsTotal: sum('apiserver_request_total'),
    rejectedTotal: sum('apiserver_flowcontrol_rejected_requests_total'),
    appDispatchedTotal: sum('apiserver_flowcontrol_dispatched_requests_total', (l) =>
      l.includes('flow_schema="global-default"'),
    ),
    appRejectedTotal: sum('apiserver_flowcontrol_rejected_requests_total', (l) =>
      l.includes('flow_schema="global-default"'),
    ),
    inflightReadOnly: sum('apiserver_current_inflight_requests', (l) =>
      l.includes('request_kind="readOnly"'),
    ),
    inflightMutating: sum('apiserver_current_inflight_requests', (l) =>
      l.includes('request_kind="mutating"'),
    ),
  };
}
