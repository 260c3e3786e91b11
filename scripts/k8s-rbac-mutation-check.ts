// The mutation check of the shipped Kubernetes roles: for each verb of each rule of infra/k8s/functions
// and infra/k8s/bridge, one at a time, tests run with that verb removed (local/stack/identities.ts
// applies the manifests through NODECLAIM_RBAC_MUTATION), and the table says which tests fail without it.
//
// Why one control plane for every run: a control plane per mutation costs a minute and a half, and the
// roles are objects the API server reads on every request, so re-applying them between runs is the whole
// difference a mutation makes. Why tiers: each permission names the cheapest tests that reach it first,
// and the broader ones run only if those all pass. Why a baseline: a test that already fails with every
// permission granted (a flake under load) proves nothing about a permission, so it is left out of the
// table's verdicts and named on its own. Each run stops at its first failing test. It runs by hand,
// never in CI (about 40 minutes):
//   npx tsx scripts/k8s-rbac-mutation-check.ts [--only <substring>]... [--out results/k8s-rbac-mutations.md]
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { startControlPlane } from '../local/control-plane/launcher.js';
import { functionsRbacObjects, RBAC_MUTATION_ENV } from '../local/stack/identities.js';
import { permissionKey, rbacPermissions, type RbacMutation } from '../local/stack/rbac-mutation.js';
import { SHARED_CONTROL_PLANE_ENV, type SharedControlPlane } from '../test/setup/control-plane.js';

const root = join(import.meta.dirname, '..');

/**
 * The tests that reach each permission, cheapest first: `resource` for every verb on it, or
 * `resource verb` where one verb has tests of its own. Each tier runs only when the ones before it all
 * passed.
 */
type Tier = string[] | { files: string[]; testNamePattern: string };
const tiers: Record<string, Tier[]> = {
  'nodeclaims get': [['test/integration/launch.test.ts']],
  'nodeclaims list': [['test/integration/cluster-reader.test.ts'], ['test/integration/sweep.test.ts']],
  'nodeclaims watch': [['test/integration/cluster-reader.test.ts']],
  'nodeclaims create': [['test/e2e/scale-up.test.ts'], ['test/e2e/drift-replacement.test.ts']],
  'nodeclaims patch': [['test/integration/launch.test.ts'], ['test/integration/registration.test.ts']],
  'nodeclaims delete': [
    ['test/integration/registration-timeout.test.ts'],
    ['test/e2e/drift-replacement.test.ts'],
  ],
  'nodeclaims/status': [['test/integration/launch.test.ts']],
  nodepools: [
    ['test/integration/nodepool-status.test.ts'],
    ['test/integration/cluster-reader.test.ts'],
    ['test/e2e/scale-up.test.ts'],
  ],
  'nodepools patch': [['test/integration/command-memory.test.ts']],
  'nodepools/status': [['test/integration/nodepool-status.test.ts']],
  nodeoverlays: [['test/integration/node-overlays.test.ts']],
  'nodeoverlays/status': [['test/integration/node-overlays.test.ts']],
  aksnodeclasses: [
    ['test/integration/nodepool-status.test.ts', 'test/integration/node-image.test.ts'],
    ['test/integration/cluster-reader.test.ts'],
  ],
  'aksnodeclasses/status': [
    ['test/integration/node-image.test.ts', 'test/integration/nodepool-status.test.ts'],
  ],
  nodes: [
    ['test/integration/registration.test.ts'],
    ['test/integration/cluster-reader.test.ts', 'test/integration/node-lookup.test.ts'],
  ],
  // Only where no kubelet simulator runs: its cloud node controller deletes a Node whose VM went away.
  'nodes delete': [['test/integration/termination.test.ts']],
  pods: [['test/integration/cluster-reader.test.ts'], ['test/e2e/drain-running-pods.test.ts']],
  'pods list': [['test/e2e/scale-up.test.ts'], ['test/integration/cluster-reader.test.ts']],
  'pods delete': [
    { files: ['test/e2e/disruption-budgets.test.ts'], testNamePattern: 'after terminationGracePeriod' },
  ],
  'pods/eviction': [['test/e2e/drain-running-pods.test.ts']],
  daemonsets: [['test/e2e/scale-up.test.ts']],
  // A pod whose claim is bound to a volume in another zone is excluded for VolumeZone only if both are read.
  persistentvolumeclaims: [['test/integration/exclusion-causes.test.ts']],
  persistentvolumes: [['test/integration/exclusion-causes.test.ts']],
  poddisruptionbudgets: [['test/integration/cluster-reader.test.ts'], ['test/e2e/consolidation.test.ts']],
  // CapacityBuffers (gate CapacityBuffer): the status test reads a buffer of each referent kind.
  capacitybuffers: [['test/integration/capacity-buffers.test.ts']],
  'capacitybuffers/status': [['test/integration/capacity-buffers.test.ts']],
  podtemplates: [['test/integration/capacity-buffers.test.ts']],
  deployments: [['test/integration/capacity-buffers.test.ts']],
  statefulsets: [['test/integration/capacity-buffers.test.ts']],
  replicasets: [['test/integration/capacity-buffers.test.ts']],
  events: [['test/integration/events.test.ts'], ['test/integration/launch.test.ts']],
  leases: [['test/integration/sweep.test.ts']],
  secrets: [['test/integration/bootstrap-token.test.ts']],
  // explain's authorization: without it no review can be asked, and an allowed user is refused too.
  subjectaccessreviews: [['test/integration/explain-auth.test.ts']],
};
const bridgeTiers: Tier[] = [['test/integration/bridge.test.ts']];
const filesOf = (tier: Tier): string[] => (Array.isArray(tier) ? tier : tier.files);
const namePatternOf = (tier: Tier): string[] => (Array.isArray(tier) ? [] : ['-t', tier.testNamePattern]);

function tiersFor(mutation: RbacMutation): Tier[] {
  if (mutation.name === 'nodeclaim-event-bridge') return bridgeTiers;
  return tiers[`${mutation.resource} ${mutation.verb}`] ?? tiers[mutation.resource] ?? [];
}

function bridgePermissions(): RbacMutation[] {
  const text = readFileSync(join(root, 'infra/k8s/bridge/clusterrole.yaml'), 'utf8');
  return rbacPermissions(
    parseAllDocuments(text).map((d) => d.toJS() as Parameters<typeof rbacPermissions>[0][number]),
  );
}

interface VitestJson {
  testResults: { name: string; assertionResults: { fullName: string; status: string }[] }[];
}

function failingTests(controlPlaneFile: string, mutation: RbacMutation | undefined, tier: Tier): string[] {
  const output = join(root, 'results', 'mutation-run.json');
  mkdirSync(dirname(output), { recursive: true });
  rmSync(output, { force: true });
  try {
    // A mutation needs one failing test, and a missing verb often fails by timing out: stop at the first.
    const bail = mutation ? ['--bail=1'] : [];
    const args = [
      ...filesOf(tier),
      ...namePatternOf(tier),
      ...bail,
      '--reporter=json',
      `--outputFile=${output}`,
    ];
    execFileSync('npx', ['vitest', 'run', ...args], {
      cwd: root,
      env: {
        ...process.env,
        [SHARED_CONTROL_PLANE_ENV]: controlPlaneFile,
        ...(mutation ? { [RBAC_MUTATION_ENV]: JSON.stringify(mutation) } : {}),
      },
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
if (args.includes('--help') || args.includes('-h')) {
  console.log(
    'Usage: npx tsx scripts/k8s-rbac-mutation-check.ts [--only <substring of "Kind/name: verb group/resource">] [--out FILE]',
  );
  process.exit(0);
}
// --only may be given more than once: the permissions matching any of them run, after one baseline.
const only = args.flatMap((arg, index) =>
  arg === '--only' && args[index + 1] ? [args[index + 1] as string] : [],
);
const out = args.includes('--out')
  ? (args[args.indexOf('--out') + 1] as string)
  : 'results/k8s-rbac-mutations.md';

const mutations = [
  ...rbacPermissions(await functionsRbacObjects('nodeclaim-functions')),
  ...bridgePermissions(),
].filter((mutation) => only.length === 0 || only.some((part) => permissionKey(mutation).includes(part)));

const workDir = mkdtempSync(join(tmpdir(), 'rbac-mutation-'));
const controlPlane = await startControlPlane({
  crdDirectories: [join(root, 'infra/k8s/crds')],
  workDir: join(workDir, 'control-plane'),
  log: (line) => console.log(`[control plane] ${line}`),
});
const controlPlaneFile = join(workDir, 'control-plane.json');
const shared: SharedControlPlane = {
  kubeconfigPath: controlPlane.kubeconfigPath,
  server: controlPlane.server,
  caCertPath: controlPlane.caCertPath,
  caKeyPath: controlPlane.caKeyPath,
  workDir: controlPlane.workDir,
};
writeFileSync(controlPlaneFile, JSON.stringify(shared));
const stopOnSignal = (): void => {
  void controlPlane.stop().finally(() => process.exit(130));
};
process.once('SIGINT', stopOnSignal);
process.once('SIGTERM', stopOnSignal);

try {
  // Every file any tier names, once with every permission granted.
  const files = [...new Set(mutations.flatMap((m) => tiersFor(m).flatMap(filesOf)))].sort();
  const baseline = new Set(files.length === 0 ? [] : failingTests(controlPlaneFile, undefined, files));
  console.log(`baseline: ${files.length} files, ${baseline.size} failing with every permission granted`);

  const rows = ['| Permission | Tests run | Failing without it |', '| --- | --- | --- |'];
  for (const mutation of mutations) {
    const key = permissionKey(mutation);
    process.stdout.write(`${key} … `);
    const ran: string[] = [];
    let failed: string[] = [];
    for (const tier of tiersFor(mutation)) {
      ran.push(...filesOf(tier));
      failed = failingTests(controlPlaneFile, mutation, tier).filter((test) => !baseline.has(test));
      if (failed.length > 0) break;
    }
    process.stdout.write(`${failed.length} failing\n`);
    const tests = ran.map((t) => t.replace(/^test\//, '')).join(', ') || 'none mapped';
    const verdict =
      failed.length === 0
        ? '**none**'
        : failed.slice(0, 2).join('<br>') + (failed.length > 2 ? ` (+${failed.length - 2})` : '');
    rows.push(`| ${key} | ${tests} | ${verdict} |`);
    writeFileSync(join(root, out), rows.join('\n') + '\n');
  }
  if (baseline.size > 0)
    rows.push(
      '',
      'Failing with every permission granted (left out of the verdicts):',
      ...[...baseline].map((t) => `- ${t}`),
    );
  writeFileSync(join(root, out), rows.join('\n') + '\n');
  console.log(rows.join('\n'));
} finally {
  await controlPlane.stop();
  rmSync(workDir, { recursive: true, force: true });
}
