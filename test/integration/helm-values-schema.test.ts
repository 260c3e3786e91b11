// values.schema.json makes Helm refuse a value the chart does not read: a Karpenter chart's values file
// carried over (settings.clusterEndpoint, settings.featureGates, …) or a misspelt key would otherwise
// install and silently do nothing. Run by the Helm the project builds (scripts/helm), as CI lints the
// chart; the keys another change adds to values.yaml (podDisruptionBudget, crds) are accepted already.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHART_DIRECTORY, ensureHelm, runHelm } from '../../scripts/helm/helm.js';

const ciValues = join(CHART_DIRECTORY, 'ci', 'test-values.yaml');
let directory: string;

/** `helm lint --strict` with the CI values and `extra` on top: its output, and whether it passed. */
async function lint(extra: string): Promise<{ passed: boolean; output: string }> {
  const file = join(directory, `values-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, extra);
  try {
    const output = await runHelm(['lint', '--strict', CHART_DIRECTORY, '-f', ciValues, '-f', file]);
    return { passed: true, output };
  } catch (error) {
    // helm prints the schema's findings on stdout and the verdict on stderr (runHelm's message).
    const stdout = ((error as Error).cause as { stdout?: string } | undefined)?.stdout ?? '';
    return { passed: false, output: `${stdout}\n${(error as Error).message}` };
  }
}

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), 'helm-values-schema-'));
  await ensureHelm();
}, 600_000);

afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('the chart refuses values it does not read', () => {
  it('lints with the CI values and every value the chart reads set', async () => {
    const result = await lint(
      [
        'settings:',
        '  podResyncSeconds: 20',
        "  source: '/clusters/ci/event-bridge'",
        '  bufferCapacity: 1000000',
        '  sendConcurrency: 16',
        'logLevel: debug',
        'controller:',
        '  healthProbe:',
        '    port: 9090',
      ].join('\n'),
    );
    expect(result.output).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
    expect(result.passed).toBe(true);
  });

  it.each([
    [
      "Karpenter's settings.clusterEndpoint",
      'settings:\n  clusterEndpoint: https://cluster.example:443\n',
      'clusterEndpoint',
    ],
    [
      "Karpenter's settings.featureGates",
      'settings:\n  featureGates:\n    spotToSpotConsolidation: true\n',
      'featureGates',
    ],
    ["Karpenter's settings.batchMaxDuration", 'settings:\n  batchMaxDuration: 10s\n', 'batchMaxDuration'],
    ['a misspelt top-level key', 'replica: 2\n', 'replica'],
    ['a misspelt nested key', 'controller:\n  image:\n    pullPolicies: Always\n', 'pullPolicies'],
    ['serviceAccount.annotation', 'serviceAccount:\n  annotation: {}\n', 'annotation'],
  ])('fails on %s, naming it', async (what, values, key) => {
    const result = await lint(values);
    expect(result.passed, what).toBe(false);
    expect(result.output).toMatch(new RegExp(`additional properties '${key}' not allowed`));
  });

  it('fails on a value of the wrong type', async () => {
    const result = await lint('settings:\n  resyncSeconds: five\n');
    expect(result.passed).toBe(false);
    expect(result.output).toMatch(/resyncSeconds/);
  });

  it('accepts podDisruptionBudget and crds as the chart will read them', async () => {
    const result = await lint(
      [
        'podDisruptionBudget:',
        '  enabled: true',
        '  maxUnavailable: 1',
        "  minAvailable: '50%'",
        'crds:',
        '  install: true',
        '  keep: true',
      ].join('\n'),
    );
    expect(result.passed, result.output).toBe(true);
    expect((await lint('podDisruptionBudget:\n  maxUnavailible: 1\n')).passed).toBe(false);
  });
});
