// The Helm chart has no RBAC rules and no CRDs of its own: charts/nodeclaim-azure/crds/* and files/* are
// symbolic links to infra/k8s/crds and to the RBAC manifests in infra/k8s/functions and infra/k8s/bridge,
// which Helm follows (and `helm package` stores by content). So the chart and the kustomize manifests
// cannot diverge; this test fails if a link is replaced by a copy, points elsewhere, or a template reads a
// file that is not such a link. test/e2e/helm-chart.test.ts renders and installs the chart.
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const chart = join(root, 'charts', 'nodeclaim-azure');

function linksIn(directory: string): Map<string, string> {
  const links = new Map<string, string>();
  for (const entry of readdirSync(join(chart, directory))) {
    const path = join(chart, directory, entry);
    expect(lstatSync(path).isSymbolicLink(), `${directory}/${entry} is a symbolic link`).toBe(true);
    links.set(entry, relative(root, resolve(join(chart, directory), readlinkSync(path))));
  }
  return links;
}

describe('Helm chart sources', () => {
  it('takes every CRD from infra/k8s/crds', () => {
    const crds = readdirSync(join(root, 'infra/k8s/crds'));
    expect([...linksIn('crds')]).toEqual(crds.map((file) => [file, `infra/k8s/crds/${file}`]));
  });

  it('takes its RBAC from the manifests in infra/k8s/functions and infra/k8s/bridge', () => {
    expect(Object.fromEntries(linksIn('files'))).toEqual({
      'bridge-clusterrole.yaml': 'infra/k8s/bridge/clusterrole.yaml',
      'functions-bootstrap-token-policy.yaml': 'infra/k8s/functions/bootstrap-token-policy.yaml',
      'functions-bootstrap-token-role.yaml': 'infra/k8s/functions/bootstrap-token-role.yaml',
      'functions-clusterrole.yaml': 'infra/k8s/functions/clusterrole.yaml',
      'functions-lease-role.yaml': 'infra/k8s/functions/lease-role.yaml',
      'node-bootstrap.yaml': 'infra/k8s/functions/node-bootstrap.yaml',
    });
  });

  it('reads only linked files, and writes no rules of its own', () => {
    const files = new Set([...linksIn('files').keys()].map((f) => `files/${f}`));
    let ruleBlocks = 0;
    for (const template of readdirSync(join(chart, 'templates'))) {
      const text = readFileSync(join(chart, 'templates', template), 'utf8');
      for (const [, file] of text.matchAll(/"(files\/[^"]+)"/g)) expect(files, template).toContain(file);
      // Rules only ever come from a linked manifest: `rules:` is followed by that object's rules.
      for (const match of text.matchAll(/^rules:\n(.*)$/gm)) {
        ruleBlocks += 1;
        expect(match[1], template).toMatch(/toYaml \$role\.rules/);
      }
    }
    expect(ruleBlocks).toBeGreaterThanOrEqual(2);
  });
});
