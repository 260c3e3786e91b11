// The Helm chart has no RBAC rules and no CRDs of its own: charts/nodeclaim-azure/files/ holds copies of
// infra/k8s/crds and of the RBAC manifests in infra/k8s/functions and infra/k8s/bridge, written by
// `npm run chart:sync`. Copies, not symbolic links, because a checkout with core.symlinks=false turns a
// link into a file holding its target's path, which Helm would render and `helm package` would pack. This
// test fails when a copy differs from its source, a link comes back anywhere in the chart, a template reads
// a file that is not such a copy, or writes RBAC rules of its own. test/e2e/helm-chart.test.ts renders and
// installs the chart; test/integration/helm-upgrade.test.ts upgrades a release of the previous version.
import {
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  cpSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { chartDrift, chartSources, expectedCopy, syncChart } from '../../scripts/chart/sync.js';

const root = join(import.meta.dirname, '..', '..');
const chart = join(root, 'charts', 'nodeclaim-azure');

function walk(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    return entry.isDirectory() ? walk(path) : [path];
  });
}

const scratch: string[] = [];
afterEach(() => {
  for (const directory of scratch.splice(0)) rmSync(directory, { recursive: true, force: true });
});

/** A copy of infra/k8s and the chart in a temporary directory, for the generator's own tests. */
function scratchRepository(): string {
  const directory = mkdtempSync(join(tmpdir(), 'chart-sources-'));
  scratch.push(directory);
  cpSync(join(root, 'infra', 'k8s'), join(directory, 'infra', 'k8s'), { recursive: true });
  cpSync(chart, join(directory, 'charts', 'nodeclaim-azure'), { recursive: true });
  return directory;
}

describe('Helm chart sources', () => {
  it('holds no symbolic link anywhere', () => {
    const links = walk(join(root, 'charts')).filter((path) => lstatSync(path).isSymbolicLink());
    expect(links).toEqual([]);
  });

  it('holds an up-to-date copy of every CRD and RBAC manifest, and nothing else under files/', () => {
    expect(chartDrift(), 'run `npm run chart:sync`').toEqual([]);
    const crds = readdirSync(join(root, 'infra/k8s/crds')).filter((file) => file.endsWith('.yaml'));
    expect(crds.length).toBeGreaterThanOrEqual(5);
    for (const file of crds) {
      expect(readFileSync(join(chart, 'files', 'crds', file), 'utf8')).toBe(
        expectedCopy(root, `infra/k8s/crds/${file}`),
      );
    }
    expect(
      Object.fromEntries(
        chartSources()
          .filter((s) => !s.source.startsWith('infra/k8s/crds/'))
          .map((s) => [s.target.replace('charts/nodeclaim-azure/', ''), s.source]),
      ),
    ).toEqual({
      'files/bridge-clusterrole.yaml': 'infra/k8s/bridge/clusterrole.yaml',
      'files/functions-bootstrap-token-policy.yaml': 'infra/k8s/functions/bootstrap-token-policy.yaml',
      'files/functions-bootstrap-token-role.yaml': 'infra/k8s/functions/bootstrap-token-role.yaml',
      'files/functions-clusterrole.yaml': 'infra/k8s/functions/clusterrole.yaml',
      'files/functions-lease-role.yaml': 'infra/k8s/functions/lease-role.yaml',
      'files/node-bootstrap.yaml': 'infra/k8s/functions/node-bootstrap.yaml',
    });
    // No crds/ directory: Helm would install it once and never upgrade it (templates/crds.yaml does).
    expect(readdirSync(chart)).not.toContain('crds');
  });

  it('reports an edited source, a stray file and a link, and the generator repairs all three', () => {
    const repository = scratchRepository();
    const crd = 'infra/k8s/crds/karpenter.sh_nodeclaims.yaml';
    writeFileSync(join(repository, crd), `${readFileSync(join(repository, crd), 'utf8')}# edited\n`);
    writeFileSync(join(repository, 'charts/nodeclaim-azure/files/crds/stray.yaml'), 'kind: Stray\n');
    const role = join(repository, 'charts/nodeclaim-azure/files/bridge-clusterrole.yaml');
    rmSync(role);
    symlinkSync('../../../infra/k8s/bridge/clusterrole.yaml', role);
    expect(chartDrift(repository)).toEqual([
      'charts/nodeclaim-azure/files/crds/karpenter.sh_nodeclaims.yaml differs from infra/k8s/crds/karpenter.sh_nodeclaims.yaml',
      'charts/nodeclaim-azure/files/bridge-clusterrole.yaml is a symbolic link, not a copy',
      'charts/nodeclaim-azure/files/crds/stray.yaml has no source in infra/k8s',
    ]);
    expect(syncChart(repository).sort()).toEqual(
      [
        'charts/nodeclaim-azure/files/bridge-clusterrole.yaml',
        'charts/nodeclaim-azure/files/crds/karpenter.sh_nodeclaims.yaml',
        'charts/nodeclaim-azure/files/crds/stray.yaml',
      ].sort(),
    );
    expect(chartDrift(repository)).toEqual([]);
    expect(lstatSync(role).isSymbolicLink()).toBe(false);
    // The source itself was not written through the link.
    expect(readFileSync(join(repository, 'infra/k8s/bridge/clusterrole.yaml'), 'utf8')).toBe(
      readFileSync(join(root, 'infra/k8s/bridge/clusterrole.yaml'), 'utf8'),
    );
  });

  it('reads only those copies, and writes no rules of its own', () => {
    const files = new Set(chartSources().map((s) => s.target.replace('charts/nodeclaim-azure/', '')));
    let ruleBlocks = 0;
    for (const template of readdirSync(join(chart, 'templates'))) {
      const text = readFileSync(join(chart, 'templates', template), 'utf8');
      for (const [, file] of text.matchAll(/"(files\/[^"*]+)"/g)) expect(files, template).toContain(file);
      // Rules only ever come from a copied manifest: `rules:` is followed by that object's rules.
      for (const match of text.matchAll(/^rules:\n(.*)$/gm)) {
        ruleBlocks += 1;
        expect(match[1], template).toMatch(/toYaml \$role\.rules/);
      }
    }
    expect(ruleBlocks).toBeGreaterThanOrEqual(2);
  });
});
