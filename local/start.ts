// `npm start`: the whole system on this machine without Azure, then the reference scenarios with a live
// view (or, with --no-demo, the stack alone until Ctrl-C). Everything it starts stops on exit.
import { createWriteStream } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { SETTING_ALIASES } from '../shared/config/settings.js';
import { createLogger } from '../shared/observability/logger.js';
import {
  DEFAULT_DAY_MINUTES,
  DEFAULT_SCALE_NODES,
  createActivityRelay,
  namedOnlyScenarios,
  playScenario,
  scenarios,
  unavailableScenarios,
  type ScenarioReport,
} from './scenarios/index.js';
import { startLocalStack, type LocalStack } from './stack/local-stack.js';
import { defaultDevCaDir, ensureDevCa } from './tls/dev-ca.js';
import { startLocalMetrics } from './stack/metrics-file.js';
import { coreToolsSettings } from './stack/core-tools-settings.js';

const repositoryRoot = fileURLToPath(new URL('..', import.meta.url));

function usage(): string {
  return [
    'npm start [-- OPTIONS]',
    '',
    "Starts the whole system locally, without Azure: a real Kubernetes control plane with the project's CRDs,",
    'Azurite, the ARM emulator, every function in the in-process host, the event bridge and the kubelet',
    'simulator. Then plays the reference scenarios with a live view and writes a summary and a timeline',
    'picture per scenario to results/<timestamp>/.',
    '',
    'Options:',
    '  --no-demo          start the stack and keep it running until Ctrl-C (kubectl apply your own objects);',
    '                     writes local.settings.json for Functions Core Tools pointing at the stack',
    '  --no-host          with --no-demo: no in-process function host, for `func start` (Core Tools) instead',
    "  --storage-keys     the host and the bridge use Azurite's connection string (account key) instead of",
    '                     their identities through the authorizing storage front (the default, as in Azure)',
    `  --scenario NAME    play only this scenario (repeatable): ${[...scenarios, ...namedOnlyScenarios()].map((s) => s.name).join(', ')}`,
    '                     (day and scale play only when named; day alone)',
    '  --speed FACTOR     divide every latency by FACTOR (VM creation, polling, sweep, kubelet); default 1',
    '  --results DIR      where to write results (default results/<timestamp>)',
    '  --seed N           day: the seed of the workload and the weather (printed; random when omitted)',
    `  --day-minutes M    day: wall minutes for the simulated 24 h (default ${DEFAULT_DAY_MINUTES})`,
    `  --nodes N          scale: the size the cluster grows to, about ten pods a node (default ${DEFAULT_SCALE_NODES})`,
    "  --capacity-shortage  day: from noon the general pool's cheapest size fails in every zone (provokes",
    '                     consolidation into an offering launch remembers as failed)',
    '  --help             this text',
    '',
    "App settings (docs/settings.md) use upstream Karpenter's and the Azure provider's names; the names",
    'this app used before are still read as aliases:',
    ...Object.entries(SETTING_ALIASES).map(
      ([name, aliases]) => `  ${name.padEnd(26)} alias ${aliases.join(', ')}`,
    ),
    `  ${'FEATURE_GATES'.padEnd(26)} SpotToSpotConsolidation=true; alias SPOT_TO_SPOT_CONSOLIDATION=true`,
    '',
    'Scenarios:',
    ...[...scenarios, ...namedOnlyScenarios()].flatMap((s) => [
      `  ${s.name}`,
      ...wrap(s.description, 74).map((line) => `      ${line}`),
    ]),
    ...unavailableScenarios.map((s) => `  ${s.name} (not available: ${s.reason})`),
  ].join('\n');
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + word.length + 1 > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      'no-demo': { type: 'boolean', default: false },
      'no-host': { type: 'boolean', default: false },
      scenario: { type: 'string', multiple: true },
      speed: { type: 'string', default: '1' },
      results: { type: 'string' },
      seed: { type: 'string' },
      'day-minutes': { type: 'string', default: String(DEFAULT_DAY_MINUTES) },
      'capacity-shortage': { type: 'boolean', default: false },
      nodes: { type: 'string', default: String(DEFAULT_SCALE_NODES) },
      'storage-keys': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) {
    console.log(usage());
    return 0;
  }
  if (values['no-host'] && !values['no-demo'])
    throw new Error('--no-host needs --no-demo: the scenarios drive the in-process host');
  const speed = Number(values.speed);
  if (!(speed > 0) || !Number.isFinite(speed))
    throw new Error(`--speed must be a positive number, got ${values.speed}`);
  const seed = values.seed === undefined ? undefined : Number(values.seed);
  if (seed !== undefined && !Number.isInteger(seed))
    throw new Error(`--seed must be an integer, got ${values.seed}`);
  const dayMinutes = Number(values['day-minutes']);
  if (!(dayMinutes > 0))
    throw new Error(`--day-minutes must be a positive number, got ${values['day-minutes']}`);
  const nodes = Number(values.nodes);
  if (!Number.isInteger(nodes) || nodes < 3)
    throw new Error(`--nodes must be an integer of at least 3, got ${values.nodes}`);
  const named = namedOnlyScenarios(
    {
      ...(seed !== undefined ? { seed } : {}),
      dayMinutes,
      ...(values['capacity-shortage'] ? { capacityShortage: true } : {}),
    },
    { nodes },
  );
  const chosen = (values.scenario ?? scenarios.map((s) => s.name)).map((name) => {
    const scenario = [...scenarios, ...named].find((s) => s.name === name);
    if (scenario) return scenario;
    const missing = unavailableScenarios.find((s) => s.name === name);
    throw new Error(
      missing
        ? `scenario ${name} is not available: ${missing.reason}`
        : `unknown scenario ${name}; try --help`,
    );
  });

  // A scenario that runs the Function App itself needs a stack without the in-process host, which the
  // other scenarios drive: it plays alone.
  const ownHost = chosen.some((s) => s.ownFunctionHost);
  if (ownHost && chosen.length > 1)
    throw new Error(
      `${chosen
        .filter((s) => s.ownFunctionHost)
        .map((s) => s.name)
        .join(', ')} plays alone: name it by itself`,
    );

  const started = Date.now();
  const say = (line: string): void => {
    console.log(`[${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s] ${line}`);
  };
  const stamp = new Date().toISOString().replace(/[:.]/g, '-').replace('Z', '');
  const resultsDirectory = values.results ?? join(repositoryRoot, 'results', stamp);
  await mkdir(resultsDirectory, { recursive: true });
  const logPath = join(resultsDirectory, 'stack.log');
  const logFile = createWriteStream(logPath, { flags: 'a' });
  const log = createLogger({
    component: 'local-stack',
    minLevel: 'info',
    sink: (_level, line) => logFile.write(line + '\n'),
  });

  // The app's OpenTelemetry metrics, as Application Insights would receive them.
  const localMetrics = startLocalMetrics(join(resultsDirectory, 'metrics.jsonl'), 5_000);

  const cancel = new AbortController();
  const running: { stack?: LocalStack } = {};
  let stopping: Promise<void> | undefined;
  const shutdown = (): Promise<void> => {
    stopping ??= (async () => {
      say('stopping everything…');
      await running.stack?.stop();
      const totals = await localMetrics.finish();
      if (totals.length > 0) {
        console.log(
          [
            '',
            `OpenTelemetry metrics (${relative(process.cwd(), localMetrics.path)}):`,
            ...totals.map((t) => `  ${t}`),
          ].join('\n'),
        );
      }
      await new Promise<void>((resolve) => logFile.end(resolve));
      say('stopped: no process, port or temporary directory of this run is left');
    })();
    return stopping;
  };
  let interrupted = false;
  const onSignal = (): void => {
    if (interrupted) {
      say('second Ctrl-C: exiting without waiting');
      process.exit(130);
    }
    interrupted = true;
    cancel.abort();
    if (!running.stack) {
      say(
        'cancelling: the part starting now finishes, then everything started is stopped (Ctrl-C again to quit at once)',
      );
      return;
    }
    void shutdown().then(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  say(`starting the local stack (speed ×${speed}); component logs go to ${relative(process.cwd(), logPath)}`);
  const ca = await ensureDevCa(defaultDevCaDir());
  const relay = createActivityRelay();
  let stack: LocalStack;
  try {
    stack = await startLocalStack({
      speed,
      progress: say,
      log,
      ca,
      onActivity: relay.listener,
      signal: cancel.signal,
      functionHost: !values['no-host'] && !ownHost,
      storage: values['storage-keys'] ? 'connectionString' : 'identity',
      clusterScale: chosen.some((s) => s.clusterScale === true),
    });
  } catch (error) {
    await new Promise<void>((resolve) => logFile.end(resolve));
    if (cancel.signal.aborted) {
      say('cancelled: everything that had started is stopped');
      return 130;
    }
    throw error;
  }
  running.stack = stack;
  const ready = (Date.now() - started) / 1000;
  const admin = `${stack.emulator.url}/admin`;
  console.log(
    [
      '',
      `Local stack ready in ${ready.toFixed(1)} s:`,
      `  kubeconfig         ${stack.kubeconfigPath}   (admin, for you; the stack uses none of it)`,
      `  identities         functions as ${stack.identities.functions.user}, bridge as ${stack.identities.bridge.user}, kubelets as system:node:<name> (registration, heartbeats, node and pod status)`,
      `  API server         ${stack.apiServer ?? '(shared)'}`,
      `  ARM emulator       ${stack.emulator.url}   (CA certificate: ${ca.certPath})`,
      `  emulator admin API ${admin}/faults, /latencies, /vms, /requests`,
      stack.storageFront
        ? `  storage front      ${stack.storageFront.queueEndpoint()}/${stack.queueName} (queues), ${stack.storageFront.tableEndpoint()} (tables): Azurite behind Entra authorization, the host and the bridge as their identities with the roles of infra/azure-roles.json (CA certificate: ${ca.certPath})`
        : `  Azurite queue      ${stack.queueEndpoint ?? '(shared)'}/${stack.queueName} (--storage-keys: the host and the bridge use the account key)`,
      stack.app
        ? `  function host      in process: every function of functions/index.ts (sweep ${stack.timings.sweepSchedule})`
        : ownHost
          ? `  function host      in a child process the day starts (and kills): every function of functions/index.ts`
          : '  function host      none (--no-host): run the app with `func start` (Functions Core Tools)',
      `  kubelet simulator  Nodes for VMs in resource group ${stack.resourceGroup}`,
      stack.explain.url
        ? `  explain            ${stack.explain.url}/api/explain/… (CA certificate: ${ca.certPath}); a user's token from the local Entra ID: curl '${stack.explain.tokenUrl}?user=<name>&groups=<id>,…' (docs/explain.md)`
        : `  explain            served by the function host outside the stack (func start: its own port); a user's token from the local Entra ID: curl '${stack.explain.tokenUrl}?user=<name>' (docs/explain.md)`,
      `  metrics            OpenTelemetry, every 5 s to ${relative(process.cwd(), localMetrics.path)}`,
      '',
    ].join('\n'),
  );

  if (values['no-demo']) {
    const settings = JSON.stringify(coreToolsSettings(stack.appSettings), null, 2) + '\n';
    const runSettings = join(resultsDirectory, 'local.settings.json');
    await writeFile(runSettings, settings);
    const rootSettings = join(repositoryRoot, 'local.settings.json');
    let wroteRoot = false;
    if (values['no-host']) {
      // An existing local.settings.json is the user's; it is left alone and the stack's is printed beside it.
      wroteRoot = await writeFile(rootSettings, settings, { flag: 'wx' }).then(
        () => true,
        () => false,
      );
    }
    console.log(
      [
        `Functions Core Tools settings for this stack: ${relative(process.cwd(), runSettings)}` +
          (wroteRoot ? ` (also written to ${relative(process.cwd(), rootSettings)})` : ''),
        ...(values['no-host']
          ? [
              wroteRoot
                ? 'In another terminal: npm run build && func start'
                : `local.settings.json exists and was left alone; copy the stack's over it, then: npm run build && func start`,
              '',
            ]
          : [
              '(to run the app in `func start` instead of the in-process host: npm start -- --no-demo --no-host)',
              '',
            ]),
      ].join('\n'),
    );
    console.log(
      [
        'The stack runs until Ctrl-C. In another terminal:',
        '',
        `  export KUBECONFIG=${stack.kubeconfigPath}`,
        '  kubectl apply -f test/fixtures/general-purpose.yaml     # the example NodePool + AKSNodeClass',
        '  kubectl create -f local/examples/nodeclaim.yaml        # a NodeClaim of that NodePool (repeat for more)',
        '  kubectl get nodeclaims,nodes -w',
        '',
        'Make the next launch in zone 2 fail with a zonal allocation failure:',
        '',
        `  curl --cacert ${ca.certPath} -X POST ${admin}/faults -H 'content-type: application/json' \\`,
        `    -d '{"match":{"zone":"2"},"effect":{"type":"ZonalAllocationFailed"},"times":1}'`,
        '',
      ].join('\n'),
    );
    await new Promise<void>((resolve) => cancel.signal.addEventListener('abort', () => resolve()));
    await shutdown();
    return 130;
  }

  const reports: ScenarioReport[] = [];
  try {
    for (const scenario of chosen) {
      say(`playing ${scenario.name}`);
      const report = await playScenario(scenario, stack, {
        relay,
        live: true,
        resultsDirectory,
        signal: cancel.signal,
        print: say,
      });
      reports.push(report);
      console.log(`\n${report.summaryText}\n\ntimeline: ${relative(process.cwd(), report.files[0] ?? '')}\n`);
    }
  } catch (error) {
    if (cancel.signal.aborted) return 130;
    say(`scenario failed: ${error instanceof Error ? error.message : String(error)}`);
    await shutdown();
    return 1;
  }
  await shutdown();
  console.log(
    [
      '',
      ...reports.map((r) => `${r.passed ? '✔' : '✘'} ${r.scenario} (${(r.durationMs / 1000).toFixed(1)} s)`),
      ...unavailableScenarios.map((s) => `- ${s.name} not played: ${s.reason}`),
      `results: ${relative(process.cwd(), resultsDirectory)}/`,
    ].join('\n'),
  );
  return reports.every((r) => r.passed) ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exit(1);
  },
);
