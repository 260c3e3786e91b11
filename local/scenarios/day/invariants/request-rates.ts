// ARM and Kubernetes request rates within their limits. ARM: for each request kind Compute throttles,
// the most requests in any 60 s window against Compute's per-minute figure (the emulator's buckets carry
// the same), and how many 429s the buckets (not the weather's injected throttling) answered. Kubernetes:
// from the API server's own metrics, requests the priority-and-fairness filter rejected (429) and the
// peak of requests in flight against the server's --max-requests-inflight and
// --max-mutating-requests-inflight defaults (400, 200). Pure.
import { result, type ApiServerSample, type DayHistory, type InvariantResult } from './history.js';

export const COMPUTE_LIMITS_PER_MINUTE: Readonly<Record<string, number>> = {
  putVm: 500,
  deleteVm: 500,
  getVm: 8_000,
  getOperation: 5_000,
  listVms: 300,
};

export const API_SERVER_INFLIGHT = { readOnly: 400, mutating: 200 } as const;

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
  const peakReadOnly = Math.max(...samples.map((s) => s.inflightReadOnly));
  const peakMutating = Math.max(...samples.map((s) => s.inflightMutating));
  let peakPerMinute = 0;
  for (let i = 1; i < samples.length; i++) {
    const [a, b] = [samples[i - 1] as ApiServerSample, samples[i] as ApiServerSample];
    const growth = b.requestsTotal >= a.requestsTotal ? b.requestsTotal - a.requestsTotal : b.requestsTotal;
    if (b.at > a.at) peakPerMinute = Math.max(peakPerMinute, (growth * 60_000) / (b.at - a.at));
  }
  const violations = [
    ...(rejected > 0 ? [`the API server rejected ${rejected} requests (priority and fairness)`] : []),
    ...(peakReadOnly > API_SERVER_INFLIGHT.readOnly ? [`${peakReadOnly} read-only requests in flight`] : []),
    ...(peakMutating > API_SERVER_INFLIGHT.mutating ? [`${peakMutating} mutating requests in flight`] : []),
  ];
  return result(
    "Kubernetes request rates within the API server's limits",
    violations,
    `peak ${Math.round(peakPerMinute)} requests/min (every client), in flight at most ${peakReadOnly} read-only ` +
      `(limit ${API_SERVER_INFLIGHT.readOnly}) and ${peakMutating} mutating (limit ${API_SERVER_INFLIGHT.mutating}); ` +
      `${rejected} rejected`,
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
