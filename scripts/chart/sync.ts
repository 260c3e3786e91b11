// The chart carries real copies of the CRDs and RBAC manifests of infra/k8s, not symbolic links: a
// checkout with core.symlinks=false (Windows) turns a link into a file holding only its target path, which
// Helm then renders and `helm package` packs. infra/k8s stays the one place these are edited; this script
// writes the copies (`npm run chart:sync`) and `--check` fails on any drift, as
// test/unit/helm-chart-sources.test.ts does.
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPOSITORY_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CHART_ROOT = path.join(REPOSITORY_ROOT, 'charts', 'nodeclaim-azure');

/** One copied file: both paths relative to the repository root. */
export interface ChartSource {
  readonly source: string;
  readonly target: string;
}

/** The RBAC manifests the templates read rules, roleRefs and subjects from, by their name in files/. */
const RBAC_FILES: Readonly<Record<string, string>> = {
  'bridge-clusterrole.yaml': 'infra/k8s/bridge/clusterrole.yaml',
  'functions-bootstrap-token-policy.yaml': 'infra/k8s/functions/bootstrap-token-policy.yaml',
  'functions-bootstrap-token-role.yaml': 'infra/k8s/functions/bootstrap-token-role.yaml',
  'functions-clusterrole.yaml': 'infra/k8s/functions/clusterrole.yaml',
  'functions-lease-role.yaml': 'infra/k8s/functions/lease-role.yaml',
  'node-bootstrap.yaml': 'infra/k8s/functions/node-bootstrap.yaml',
};

/** The directories under the chart that hold only generated copies. */
export const GENERATED_DIRECTORIES = ['charts/nodeclaim-azure/files', 'charts/nodeclaim-azure/files/crds'];

/** Every copy the chart holds: every CRD of infra/k8s/crds, and the RBAC manifests. */
export function chartSources(root: string = REPOSITORY_ROOT): ChartSource[] {
  const crds = readdirSync(path.join(root, 'infra/k8s/crds'))
    .filter((file) => file.endsWith('.yaml'))
    .sort()
    .map((file) => ({
      source: `infra/k8s/crds/${file}`,
      target: `charts/nodeclaim-azure/files/crds/${file}`,
    }));
  const rbac = Object.entries(RBAC_FILES).map(([file, source]) => ({
    source,
    target: `charts/nodeclaim-azure/files/${file}`,
  }));
  return [...crds, ...rbac];
}

/** The first line of every copy, so an editor of the chart sees where to edit instead. */
export function generatedHeader(source: string): string {
  return `# Generated from ${source} by \`npm run chart:sync\`: edit that file, then run it.\n`;
}

/** What the copy of `source` must hold. */
export function expectedCopy(root: string, source: string): string {
  return generatedHeader(source) + readFileSync(path.join(root, source), 'utf8');
}

/** The differences between the chart's copies and their sources: missing, stale or stray files. */
export function chartDrift(root: string = REPOSITORY_ROOT): string[] {
  const sources = chartSources(root);
  const problems: string[] = [];
  for (const { source, target } of sources) {
    const file = path.join(root, target);
    if (!existsSync(file)) problems.push(`${target} is missing (from ${source})`);
    else if (lstatSync(file).isSymbolicLink()) problems.push(`${target} is a symbolic link, not a copy`);
    else if (readFileSync(file, 'utf8') !== expectedCopy(root, source))
      problems.push(`${target} differs from ${source}`);
  }
  const targets = new Set(sources.map((s) => s.target));
  for (const directory of GENERATED_DIRECTORIES) {
    if (!existsSync(path.join(root, directory))) continue;
    for (const entry of readdirSync(path.join(root, directory), { withFileTypes: true })) {
      const relative = `${directory}/${entry.name}`;
      if (entry.isDirectory() && GENERATED_DIRECTORIES.includes(relative)) continue;
      if (!targets.has(relative)) problems.push(`${relative} has no source in infra/k8s`);
    }
  }
  return problems;
}

/** Writes every copy and removes stray files; returns the files it changed. */
export function syncChart(root: string = REPOSITORY_ROOT): string[] {
  const changed: string[] = [];
  const sources = chartSources(root);
  const targets = new Set(sources.map((s) => s.target));
  for (const directory of GENERATED_DIRECTORIES) {
    mkdirSync(path.join(root, directory), { recursive: true });
    for (const entry of readdirSync(path.join(root, directory), { withFileTypes: true })) {
      const relative = `${directory}/${entry.name}`;
      if (entry.isDirectory() && GENERATED_DIRECTORIES.includes(relative)) continue;
      if (!targets.has(relative)) {
        rmSync(path.join(root, relative), { recursive: true, force: true });
        changed.push(relative);
      }
    }
  }
  for (const { source, target } of sources) {
    const file = path.join(root, target);
    const content = expectedCopy(root, source);
    // A symbolic link (an old checkout's) is replaced by a real file, never written through.
    const link = existsSync(file) && lstatSync(file).isSymbolicLink();
    if (!link && existsSync(file) && readFileSync(file, 'utf8') === content) continue;
    rmSync(file, { force: true });
    writeFileSync(file, content);
    changed.push(target);
  }
  return changed;
}
