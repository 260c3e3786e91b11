// The portal workbook and the alert rules chart the functions' metrics: OpenTelemetry counters in
// customMetrics (shared/observability/metric-catalog.ts), and for latency percentiles the per-observation
// `metric` log records in traces. A renamed metric would leave an empty chart and a silent alert, so every
// metric name in a query must be one the code emits, and the launch funnel must cover every funnel metric.
// No KQL engine runs here: the queries are checked as text (names, parameters), not executed.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { metricCatalog } from '../../shared/observability/metric-catalog.js';

const root = join(import.meta.dirname, '..', '..');
const read = (path: string): string => readFileSync(join(root, path), 'utf8');

/** The metrics the code can emit: the keys of the catalog. */
function emittedMetricNames(): Set<string> {
  return new Set(Object.keys(metricCatalog));
}

interface WorkbookQuery {
  name: string;
  query: string;
}

/** Every KQL text in the workbook: query items and query-driven parameters. */
function workbookQueries(workbook: unknown): WorkbookQuery[] {
  const found: WorkbookQuery[] = [];
  const visit = (node: unknown, name: string): void => {
    if (Array.isArray(node)) node.forEach((child) => visit(child, name));
    else if (typeof node === 'object' && node !== null) {
      const record = node as Record<string, unknown>;
      const here = typeof record.name === 'string' ? record.name : name;
      if (typeof record.query === 'string') found.push({ name: here, query: record.query });
      for (const value of Object.values(record)) visit(value, here);
    }
  };
  visit(workbook, 'workbook');
  return found;
}

/** Metric names a query refers to: quoted karpenter_* literals, and `"metric":"<prefix>` text filters. */
function referencedMetrics(query: string): { exact: string[]; prefixes: string[] } {
  return {
    // Label values such as 'registration_timeout' are snake_case too; metric names start with karpenter_
    // or (operatorpkg's status metrics) operator_.
    exact: [...query.matchAll(/'((?:karpenter|operator)_[a-z0-9_]+)'/g)].map((m) => m[1] as string),
    prefixes: [...query.matchAll(/"metric":"([a-z0-9_]*)/g)].map((m) => m[1] as string),
  };
}

function unknownMetrics(query: string, known: ReadonlySet<string>): string[] {
  const { exact, prefixes } = referencedMetrics(query);
  return [
    ...exact.filter((name) => !known.has(name)),
    ...prefixes.filter((prefix) => ![...known].some((name) => name.startsWith(prefix))).map((p) => `${p}*`),
  ];
}

const alertFiles = readdirSync(join(root, 'infra/monitoring/alerts')).filter((f) => f.endsWith('.kql'));

describe('launch-funnel workbook', () => {
  const known = emittedMetricNames();
  const workbook: unknown = JSON.parse(read('infra/monitoring/workbook.json'));
  const queries = workbookQueries(workbook);

  it('reads the metric names from metrics.ts and would reject an unknown one', () => {
    expect(known).toContain('operator_nodeclaim_status_condition_transitions_total');
    expect(known).toContain('operator_nodeclaim_status_condition_transition_seconds');
    expect(unknownMetrics(`where name == 'karpenter_nodeclaims_lanched_total'`, known)).toEqual([
      'karpenter_nodeclaims_lanched_total',
    ]);
    expect(unknownMetrics(`where message contains '"metric":"karpenter_node_claims'`, known)).toEqual([
      'karpenter_node_claims*',
    ]);
  });

  it('is a workbook document with queries against Application Insights', () => {
    expect(workbook).toMatchObject({ version: 'Notebook/1.0' });
    expect(queries.length).toBeGreaterThanOrEqual(8);
    for (const { name, query } of queries) {
      expect(query, name).toMatch(/^(customMetrics|traces)\b/);
      // Counters come from the real metrics; only distributions are read from the log records.
      if (/^traces\b/.test(query) && query.includes('"metric":"'))
        expect(query, name).toMatch(/percentile\(/);
    }
  });

  it('reads from log records only the metrics whose observations are logged', () => {
    const logged = Object.entries(metricCatalog)
      .filter(([, definition]) => 'logObservations' in definition && definition.logObservations)
      .map(([name]) => name);
    const read = queries
      .filter(({ query }) => /^traces\b/.test(query))
      .flatMap(({ query }) => [...query.matchAll(/'((?:karpenter|operator)_[a-z0-9_]+)'/g)].map((m) => m[1]));
    expect(read.length).toBeGreaterThan(0);
    expect(read.filter((name) => !logged.includes(name ?? ''))).toEqual([]);
  });

  it('refers only to metrics the code emits', () => {
    for (const { name, query } of queries) expect(unknownMetrics(query, known), name).toEqual([]);
  });

  it('charts the whole funnel: launched, registered, initialized, failures by reason, timeouts, latencies', () => {
    const all = queries.map((q) => q.query).join('\n');
    const funnel = [
      'karpenter_nodeclaims_launch_started_total',
      'operator_nodeclaim_status_condition_transitions_total',
      'karpenter_cloudprovider_errors_total',
      'karpenter_nodeclaims_disrupted_total',
      'karpenter_nodeclaims_instance_creation_duration_seconds',
      'operator_nodeclaim_status_condition_transition_seconds',
    ];
    for (const metric of funnel) expect(known, metric).toContain(metric);
    expect(funnel.filter((metric) => !all.includes(`'${metric}'`))).toEqual([]);
    // Launched, Registered and Initialized are transitions of one metric, told apart by type.
    for (const type of ['Launched', 'Registered', 'Initialized']) expect(all).toContain(`type == '${type}'`);
    expect(all).toMatch(/by nodepool, error/);
    expect(all).toContain("reason == 'registration_timeout'");
    expect(all).toMatch(/percentile\(value, 99\)/);
  });

  it('every query uses the time range, and the NodePool filter where it charts metrics', () => {
    for (const { name, query } of queries) {
      expect(query, name).toContain('{TimeRange}');
      if (/customDimensions\.nodepool/.test(query) && !/distinct nodepool/.test(query))
        expect(query, name).toContain('{NodePool}');
    }
  });

  it('counts with sums (valueSum of metrics, itemCount of sampled traces), never count()', () => {
    for (const { name, query } of queries) {
      expect(query, name).not.toMatch(/\bcount\(\)/);
      if (/^customMetrics/.test(query) && /summarize/.test(query)) expect(query, name).toMatch(/valueSum/);
    }
  });
});

describe('alert rules', () => {
  const known = emittedMetricNames();

  it('has the three alerts, each deployed by both Bicep and Terraform', () => {
    expect(alertFiles.sort()).toEqual([
      'launch-failure-rate.kql',
      'poison-queue-messages.kql',
      'registration-timeouts.kql',
    ]);
    const bicep = read('infra/bicep/modules/monitoring.bicep');
    const terraform = read('infra/terraform/monitoring.tf');
    for (const file of alertFiles) {
      expect(bicep).toContain(`loadTextContent('../../monitoring/alerts/${file}')`);
      expect(terraform).toContain(`file("\${path.module}/../monitoring/alerts/${file}")`);
    }
    expect(bicep).toContain(`loadTextContent('../../monitoring/workbook.json')`);
    expect(terraform).toContain(`file("\${path.module}/../monitoring/workbook.json")`);
  });

  it('queries refer only to metrics the code emits and leave the window to the rule', () => {
    for (const file of alertFiles) {
      const query = read(`infra/monitoring/alerts/${file}`);
      expect(unknownMetrics(query, known), file).toEqual([]);
      expect(query, file).toMatch(/^(traces|customMetrics)\b/m);
      // A log alert applies its own window; a workbook parameter here would break the rule.
      expect(query, file).not.toMatch(/\{[A-Za-z]+\}/);
    }
  });

  it('split by the dimension each query returns', () => {
    const dimensions: Record<string, string> = {
      'launch-failure-rate.kql': 'nodepool',
      'registration-timeouts.kql': 'nodepool',
      'poison-queue-messages.kql': 'queue',
    };
    for (const [file, dimension] of Object.entries(dimensions)) {
      const query = read(`infra/monitoring/alerts/${file}`);
      const lastLine = query.trim().split('\n').slice(-3).join('\n');
      expect(lastLine, file).toContain(dimension);
    }
  });
});

describe('Grafana dashboard', () => {
  const dashboard = JSON.parse(read('infra/monitoring/grafana-dashboard.json')) as {
    panels: { title: string; targets: { expr: string }[] }[];
  };
  const exprs = dashboard.panels.flatMap((panel) =>
    panel.targets.map((t) => ({ title: panel.title, expr: t.expr })),
  );

  it("has Karpenter's standard panels", () => {
    const titles = dashboard.panels.map((p) => p.title).join('\n');
    for (const concept of [
      'Nodes by NodePool',
      'NodePool CPU usage',
      'Nodes created',
      'Nodes terminated',
      'disrupted',
      'Disruption decisions',
      'Spot',
    ])
      expect(titles).toContain(concept);
  });

  it('queries only metrics the code emits, with labels those metrics carry', () => {
    for (const { title, expr } of exprs) {
      const selectors = [
        ...expr.matchAll(/\b((?:karpenter|operator)_[a-z0-9_]+?)(?:_bucket)?(\{[^}]*\})?(?=[\s)[,]|$)/g),
      ];
      expect(selectors.length, title).toBeGreaterThan(0);
      for (const [, name, labels] of selectors) {
        const definition = metricCatalog[name as keyof typeof metricCatalog] as
          { labels: readonly string[] } | undefined;
        expect(definition, `${title}: ${name}`).toBeDefined();
        for (const [, label] of (labels ?? '').matchAll(/([a-z_]+)\s*(?:=~|!=|=)/g))
          expect(definition?.labels, `${title}: ${name}{${label}}`).toContain(label);
      }
    }
  });
});
