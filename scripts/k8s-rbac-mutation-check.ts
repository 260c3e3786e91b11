// The mutation check of the shipped Kubernetes roles: for each verb of each rule of infra/k8s/functions
// and infra/k8s/bridge, one at a time, the integration tests that exercise that resource run with the
// verb removed (local/stack/identities.ts applies the manifests through NODECLAIM_RBAC_MUTATION), and the
// table says which tests fail without it. Each mutation starts its own control plane (about a minute
// and a half each), so it runs by hand, never in CI:
//   npx tsx scripts/k8s-rbac-mutation-check.ts [--only <substring>] [--out results/k8s-rbac-mutations.md]
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { functionsRbacObjects, RBAC_MUTATION_ENV } from '../local/stack/identities.js';
import { permissionKey, rbacPermissions, type RbacMutation } from '../local/stack/rbac-mutation.js';
import { parseAllDocuments } from 'yaml';

const root = join(import.meta.dirname, '..');

/** The tests that exercise each resource as the identity that holds it. */
const testsFor: Record<string, string[]> = {
  nodeclaims: [
    'test/integration/cluster-reader.test.ts',
    'test/integration/launch.test.ts',
    'test/integration/sweep.test.ts',
  ],
  'nodeclaims/status': ['test/integration/launch.test.ts'],
  nodepools: ['test/integration/cluster-reader.test.ts', 'test/integration/nodepool-status.test.ts'],
  'nodepools/status': ['test/integration/nodepool-status.test.ts'],
  aksnodeclasses: ['test/integration/cluster-reader.test.ts', 'test/integration/nodepool-status.test.ts'],
  'aksnodeclasses/status': ['test/integration/nodepool-status.test.ts'],
  nodes: [
    'test/integration/cluster-reader.test.ts',
    'test/integration/registration.test.ts',
    'test/integration/sweep.test.ts',
  ],
  pods: ['test/integration/cluster-reader.test.ts', 'test/e2e/drain-running-pods.test.ts'],
  'pods/eviction': ['test/e2e/drain-running-pods.test.ts'],
  daemonsets: ['test/e2e/scale-up.test.ts'],
  poddisruptionbudgets: ['test/integration/cluster-reader.test.ts', 'test/e2e/consolidation.test.ts'],
  events: ['test/integration/launch.test.ts'],
  leases: ['test/integration/sweep.test.ts'],
  secrets: ['test/integration/bootstrap-token.test.ts'],
};
const bridgeTests = ['test/integration/bridge.test.ts'];

function bridgePermissions(): RbacMutation[] {
  const text = readFileSync(join(root, 'infra/k8s/bridge/clusterrole.yaml'), 'utf8');
  return rbacPermissions(
    parseAllDocuments(text).map((d) => d.toJS() as Parameters<typeof rbacPermissions>[0][number]),
  );
}

interface VitestJson {
  testResults: { name: string; assertionResults: { fullName: string; status: string }[] }[];
}

function failingTests(mutation: RbacMutation, files: readonly string[]): string[] {
  const output = join(root, 'results', 'mutation-run.json');
  mkdirSync(dirname(output), { recursive: true });
  rmSync(output, { force: true });
  try {
    execFileSync('npx', ['vitest', 'run', ...files, '--reporter=json', `--outputFile=${output}`], {
      cwd: root,
      env: { ...process.env, [RBAC_MUTATION_ENV]: JSON.stringify(mutation) },
      stdio: 'ignore',
    });
  } catch {
    // A failing run is the point; the report says which tests failed.
  }
  const report = JSON.parse(readFileSync(output, 'utf8')) as VitestJson;
  return report.testResults.flatMap((file) =>
    file.assertionResults
      .filter((test) => test.status === 'failed')
      .map((test) => `${file.name.replace(`${root}/`, '')}: ${test.fullName}`),
  );
}

const args = process.argv.slice(2);
const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;
const out = args.includes('--out')
  ? (args[args.indexOf('--out') + 1] as string)
  : 'results/k8s-rbac-mutations.md';

const mutations = [
  ...rbacPermissions(await functionsRbacObjects('nodeclaim-functions')).map((m) => ({
    mutation: m,
    tests: testsFor[m.resource] ?? [],
  })),
  ...bridgePermissions().map((m) => ({ mutation: m, tests: bridgeTests })),
].filter(({ mutation }) => only === undefined || permissionKey(mutation).includes(only));

const rows = ['| Permission | Tests run | Failing without it |', '| --- | --- | --- |'];
for (const { mutation, tests } of mutations) {
  const key = permissionKey(mutation);
  process.stdout.write(`${key} … `);
  const failed = tests.length === 0 ? [] : failingTests(mutation, tests);
  process.stdout.write(`${failed.length} failing\n`);
  rows.push(
    `| ${key} | ${tests.map((t) => t.replace(/^test\//, '')).join(', ') || 'none mapped'} | ${failed.length === 0 ? '**none**' : failed.slice(0, 3).join('<br>') + (failed.length > 3 ? ` (+${failed.length - 3})` : '')} |`,
  );
  writeFileSync(join(root, out), rows.join('\n') + '\n');
}
console.log(rows.join('\n'));
