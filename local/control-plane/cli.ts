import { parseArgs } from 'node:util';

import { ensureControlPlaneBinaries, ETCD_VERSION, formatDuration, KUBERNETES_VERSION } from './build.js';
import { startControlPlane } from './launcher.js';

const usage = `Usage: npx tsx local/control-plane/cli.ts <command> [options]

Commands:
  build    Build (or find in the cache) etcd ${ETCD_VERSION}, kube-apiserver, kube-scheduler and
           kube-controller-manager ${KUBERNETES_VERSION}, and print their paths.
  start    Start a local control plane on loopback, print its kubeconfig path, and run until Ctrl-C.

Options for start:
  --crds DIR                 Apply the CRDs in DIR (repeatable); waits until they are Established.
  --work-dir DIR             Keep logs, certificates and kubeconfigs in DIR (default: a temp dir removed on exit).
  --no-scheduler             Do not run kube-scheduler.
  --no-controller-manager    Do not run kube-controller-manager.

Environment:
  KUBEBUILDER_ASSETS         Use etcd and kube-apiserver from this directory instead of building them.
  XDG_CACHE_HOME             Cache root (default ~/.cache); binaries go to nodeclaim-azure/kubernetes-${KUBERNETES_VERSION}/bin.

  -h, --help                 Show this help.`;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      crds: { type: 'string', multiple: true },
      'work-dir': { type: 'string' },
      'no-scheduler': { type: 'boolean' },
      'no-controller-manager': { type: 'boolean' },
    },
  });
  const command = positionals[0];
  if (values.help || command === undefined) {
    console.log(usage);
    return values.help ? 0 : 2;
  }
  const log = (line: string): void => console.log(line);

  if (command === 'build') {
    const started = Date.now();
    const binaries = await ensureControlPlaneBinaries({ log });
    for (const [name, file] of Object.entries(binaries)) console.log(`${name}: ${file ?? '(not available)'}`);
    console.log(`done in ${formatDuration(Date.now() - started)}`);
    return 0;
  }

  if (command === 'start') {
    const controlPlane = await startControlPlane({
      log,
      crdDirectories: values.crds ?? [],
      scheduler: !values['no-scheduler'],
      controllerManager: !values['no-controller-manager'],
      ...(values['work-dir'] === undefined ? {} : { workDir: values['work-dir'] }),
    });
    console.log(`\nkubeconfig: ${controlPlane.kubeconfigPath}`);
    console.log(`  export KUBECONFIG=${controlPlane.kubeconfigPath}`);
    console.log(`logs: ${controlPlane.workDir}/*.log`);
    console.log('Press Ctrl-C to stop.');
    await new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    });
    console.log('stopping the control plane ...');
    await controlPlane.stop();
    console.log('stopped');
    return 0;
  }

  console.error(`unknown command: ${command}\n\n${usage}`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  },
);
