// The whole system on one machine, without Azure: the real control plane with the project's CRDs,
// Azurite, the ARM emulator, the Function App in the in-process host, the event bridge feeding the host's
// queue, and the kubelet simulator giving every running VM a Node. `npm start` starts all of it; the
// end-to-end tests reuse the control plane and Azurite of the test run and start the rest per test file.
import { randomBytes } from 'node:crypto';
import { QueueClient } from '@azure/storage-queue';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBridge, type BridgeHandle, type QueueTarget } from '../../bridge/index.js';
import { kubeClientsFromKubeconfig } from '../../shared/kube/client.js';
import { karpenterObjects, type KarpenterObjects } from '../../shared/kube/custom-objects.js';
import type { Logger } from '../../shared/observability/logger.js';
import { silentLogger } from '../../shared/observability/logger.js';
import { startArmEmulator, type ArmEmulator } from '../arm-emulator/index.js';
import { startEntraEmulator, type EntraEmulator } from '../entra-emulator/index.js';
import { startAzurite, type RunningAzurite } from '../azurite/launcher.js';
import { startControlPlane, type ControlPlane } from '../control-plane/launcher.js';
import { startKubeletSimulator, type KubeletSimulator } from '../kubelet-simulator/index.js';
import { azuriteFromConnectionString, startStorageFront, type StorageFront } from '../storage-front/index.js';
import { createEphemeralCa, issueServerCertificate, type PemKeyPair } from '../tls/dev-ca.js';
import { localAppSettings, LOCAL_SUBSCRIPTION_ID } from './app-settings.js';
import { appAuthorization } from './azure-role-assignments.js';
import {
  provisionShippedIdentities,
  provisionSweepLeaseNamespace,
  type ShippedIdentities,
} from './identities.js';
import type { ActivityListener, SweepScope } from './definitions.js';
import { startFunctionApp, type RunningFunctionApp } from './function-app.js';
import { scopedQueueSink } from './scoped-queue-sink.js';
import {
  localStorageAccountId,
  shippedStoragePrincipal,
  type StorageRoleMutation,
} from './storage-role-assignments.js';
import { stackTimings, type StackTimings } from './timings.js';

const crdDirectory = fileURLToPath(new URL('../../infra/k8s/crds/', import.meta.url));

/** The label that ties a scenario's objects to the stack that plays it (see LocalStackOptions.scope). */
export const RUN_LABEL = 'nodeclaim-azure.local/run';

/** The agent DaemonSet's startup taint (cilium's, as in the example NodePool); the simulator removes it. */
export const AGENT_STARTUP_TAINT = 'node.cilium.io/agent-not-ready';

export interface LocalStackOptions {
  /** Divides every latency (see stackTimings). Default 1. */
  speed?: number;
  /** Human-readable progress while starting and stopping. */
  progress?: (line: string) => void;
  /** Structured logs of the host, the bridge, the emulator and the simulator. */
  log?: Logger;
  /** Use this control plane, Azurite and CA instead of starting them (the end-to-end tests' global setup). */
  shared?: {
    /** Admin: only to set up the run's sweep Lease namespace. */
    kubeconfigPath: string;
    identities: ShippedIdentities;
    storageConnectionString: string;
    ca: PemKeyPair;
  };
  /** A CA for the emulator's certificate; a throwaway one is made when neither this nor `shared` is given. */
  ca?: PemKeyPair;
  /**
   * Confine this stack to the objects of one run: the bridge forwards only objects whose name contains
   * `runId`, the sweep takes only NodeClaims labelled RUN_LABEL=runId under a Lease of its own, and the
   * VMs go to a resource group of their own. Needed when stacks share a control plane.
   */
  scoped?: boolean;
  /** Names this run; random by default. */
  runId?: string;
  onActivity?: ActivityListener;
  /** Cancels the start: the part starting now finishes, then everything started is stopped. */
  signal?: AbortSignal;
  /**
   * Where the function host keeps its durable history (kept); a temporary directory, removed at stop,
   * by default.
   */
  stateDirectory?: string;
  /**
   * false: no in-process function host, for running the app in Functions Core Tools against this stack
   * (`func start` with the `appSettings` written to local.settings.json). Azurite then also serves blobs,
   * which the real host needs. Default true.
   */
  functionHost?: boolean;
  /**
   * NCRONTAB (with seconds) for the lifecycle sweep instead of the timings' period: a scenario that must
   * show what the bridge's events do on their own slows the sweep down, so it cannot be what answered.
   */
  sweepSchedule?: string;
  /**
   * How the function host and the bridge reach Storage. `identity` (the default): as their identities,
   * with bearer tokens, through the authorizing storage front (local/storage-front), which allows each
   * only what its roles in infra/azure-roles.json allow, as in Azure. `connectionString`: with Azurite's
   * account key, for users who run the app that way. Functions Core Tools (functionHost: false) always
   * gets the connection string: the real host cannot present the front's tokens.
   */
  storage?: 'identity' | 'connectionString';
  /** One permission taken out of one storage role (tests of a role that lacks it). */
  storageRoleMutation?: StorageRoleMutation;
  /**
   * Settings for a cluster of hundreds of nodes (the scale scenario), each with its reason:
   * - kube-controller-manager's and kube-scheduler's clients get 200 QPS / burst 400 instead of 20 / 30
   *   and 50 / 100, as a managed control plane sized for such a cluster has: otherwise the ReplicaSets
   *   create pods at 20 a second and the scheduler binds them at 50, and that, not the autoscaler, paces
   *   the run (10,000 pods would take more than eight minutes to create);
   * - the simulated kubelets renew their Leases every 20 s instead of 10 s, which halves the heaviest
   *   steady load on the API server (1,000 nodes: 50 Lease writes a second instead of 100) and still
   *   renews two times within the node-monitor grace period (50 s), so no Node goes Unknown for it.
   * - and from a process of their own (kubelet-simulator/lease-renewer.ts): at 1,000 nodes this process's
   *   event loop stalled past that grace period, and node repair rebooted healthy nodes for it.
   * Off by default: the other scenarios and tests see kubelet's and the controller-manager's defaults.
   */
  clusterScale?: boolean;
}

/** kube-scheduler's and kube-controller-manager's API clients in a stack started with `clusterScale`. */
export const CLUSTER_SCALE_COMPONENT_CLIENT_RATE = { qps: 200, burst: 400 } as const;
/** The simulated kubelets' Lease renewal in a stack started with `clusterScale`. */
export const CLUSTER_SCALE_HEARTBEAT_MS = 20_000;

export interface LocalStack {
  runId: string;
  timings: StackTimings;
  /** Admin (system:masters), for the operator's kubectl; no component of the stack uses it. */
  kubeconfigPath: string;
  /** Whom the function host and the bridge reach the API server as (the kubelet simulator: as nodes). */
  identities: ShippedIdentities;
  /** Admin access to the Karpenter objects, for scenarios' set-up (NodePools, AKSNodeClasses) and reads. */
  admin: { objects: KarpenterObjects };
  apiServer: string | undefined;
  /** The control plane this stack started; undefined when it shares one (the end-to-end tests' global setup). */
  controlPlane: ControlPlane | undefined;
  emulator: ArmEmulator;
  /** PEM of the CA that signed the emulator's certificate (for curl --cacert). */
  caCertPem: string;
  queueEndpoint: string | undefined;
  queueName: string;
  /** The authorizing storage front the identities reach Azurite through; undefined with connection strings. */
  storageFront: StorageFront | undefined;
  /**
   * The bearer token the front knows the Function App's identity by, for a Function App started outside
   * the stack with `appSettings` (a child-process host); undefined with connection strings.
   */
  functionsStorageToken: string | undefined;
  /** The in-process function host; undefined when started with functionHost: false. */
  app: RunningFunctionApp | undefined;
  /** Explain (docs/explain.md): where it answers, and the local Entra ID that signs its users' tokens. */
  explain: LocalExplain;
  /** Where a scoped stack's sweep looks (a host run outside the stack must sweep the same). */
  sweepScope: SweepScope | undefined;
  /** The app settings the functions run with here (what local.settings.json needs for Core Tools). */
  appSettings: Record<string, string>;
  bridge: BridgeHandle;
  simulator: KubeletSimulator;
  subscriptionId: string;
  resourceGroup: string;
  /** How long each part took to start, in milliseconds, in start order. */
  startTimes: { part: string; ms: number }[];
  /** Stops everything this stack started, in reverse order; safe to call twice. */
  stop(): Promise<void>;
}

export interface LocalExplain {
  /**
   * The app's explain base URL for the CLI's --url (`https://127.0.0.1:PORT`; routes under /api/explain/),
   * served by the in-process host over HTTPS with a certificate of `caCertPem`; undefined without the
   * in-process host (Functions Core Tools serves it at its own port then).
   */
  url: string | undefined;
  /** PEM of the CA that signed the explain listener's certificate (NODE_EXTRA_CA_CERTS for the CLI). */
  caCertPem: string;
  /**
   * The local Entra ID's token endpoint: GET `${tokenUrl}?user=<name>&groups=<id>,<id>` answers
   * `{ access_token }`, a token the app accepts for that user (whom the cluster's RBAC then judges).
   */
  tokenUrl: string;
  /** EXPLAIN_AUDIENCE here: the audience the local tokens carry. */
  audience: string;
  entra: EntraEmulator;
}

function adminObjects(kubeconfigPath: string): KarpenterObjects {
  const clients = kubeClientsFromKubeconfig(kubeconfigPath);
  return karpenterObjects(() => Promise.resolve(clients));
}

/** The in-process function host of a stack that has one (every scenario needs it). */
export function functionAppOf(stack: Pick<LocalStack, 'app'>): RunningFunctionApp {
  if (!stack.app) throw new Error('this stack runs without the in-process function host (--no-host)');
  return stack.app;
}

export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const progress = options.progress ?? (() => undefined);
  const log = options.log ?? silentLogger;
  const timings = stackTimings(options.speed ?? 1);
  const sweepSchedule = options.sweepSchedule ?? timings.sweepSchedule;
  const runId = options.runId ?? randomBytes(3).toString('hex');
  const scoped = options.scoped ?? false;
  const resourceGroup = scoped ? `MC_local_${runId}` : 'MC_local_nodes';
  const queueName = scoped ? `events-${runId}` : 'nodeclaim-events';

  const stops: { part: string; stop: () => Promise<void> }[] = [];
  const startTimes: LocalStack['startTimes'] = [];
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      for (const { part, stop: stopPart } of stops.reverse()) {
        const started = Date.now();
        try {
          await stopPart();
          progress(`stopped ${part} (${Date.now() - started} ms)`);
        } catch (error) {
          progress(
            `could not stop ${part} cleanly: ${error instanceof Error ? error.message : String(error)}`,
          );
        }
      }
    })();
    return stopping;
  };
  const timed = async <T>(
    part: string,
    start: () => Promise<T>,
    stopOf: (value: T) => () => Promise<void>,
  ) => {
    const started = Date.now();
    const value = await start();
    stops.push({ part, stop: stopOf(value) });
    if (options.signal?.aborted) throw new Error(`start cancelled after ${part}`);
    const ms = Date.now() - started;
    startTimes.push({ part, ms });
    progress(`${part} ready (${(ms / 1000).toFixed(1)} s)`);
    return value;
  };

  try {
    let kubeconfigPath: string;
    let identities: ShippedIdentities;
    let apiServer: string | undefined;
    let storageConnectionString: string;
    let queueEndpoint: string | undefined;
    let ownControlPlane: ControlPlane | undefined;
    if (options.shared) {
      kubeconfigPath = options.shared.kubeconfigPath;
      identities = options.shared.identities;
      storageConnectionString = options.shared.storageConnectionString;
    } else {
      progress('starting the control plane (etcd, kube-apiserver, kube-scheduler, kube-controller-manager)');
      progress('  the first run builds them from their Go modules: several minutes, once');
      const [controlPlane, azurite] = await Promise.all([
        timed<ControlPlane>(
          'control plane',
          () =>
            startControlPlane({
              crdDirectories: [crdDirectory],
              log: (line) => progress(`  ${line}`),
              ...(options.clusterScale ? { componentClientRate: CLUSTER_SCALE_COMPONENT_CLIENT_RATE } : {}),
            }),
          (value) => value.stop,
        ),
        timed<RunningAzurite>(
          options.functionHost === false ? 'Azurite (queues, tables, blobs)' : 'Azurite (queues, tables)',
          // The machine may be loaded by other test runs: Azurite's three services took 30 s to listen there.
          () => startAzurite({ log, blob: options.functionHost === false, startTimeoutMs: 90_000 }),
          (value) => value.stop,
        ),
      ]);
      kubeconfigPath = controlPlane.kubeconfigPath;
      apiServer = controlPlane.server;
      ownControlPlane = controlPlane;
      identities = await timed<ShippedIdentities>(
        'identities (infra/k8s/functions, infra/k8s/bridge)',
        () => provisionShippedIdentities(controlPlane, join(controlPlane.workDir, 'identities')),
        () => () => Promise.resolve(),
      );
      storageConnectionString = azurite.connectionString;
      queueEndpoint = azurite.queueEndpoint;
    }
    const storageMode = options.storage ?? 'identity';
    const azuriteAccess = azuriteFromConnectionString(storageConnectionString);
    const storageWhere = {
      accountId: localStorageAccountId(azuriteAccess.accountName),
      eventsQueue: queueName,
    };
    const storageFront =
      storageMode === 'identity'
        ? await timed<StorageFront>(
            'storage front (Entra authorization for Azurite)',
            async () =>
              startStorageFront({
                azurite: azuriteAccess,
                ca: options.shared?.ca ?? options.ca ?? (await createEphemeralCa()),
                accounts: { [azuriteAccess.accountName]: storageWhere.accountId },
                log: log.with({ component: 'storage-front' }),
              }),
            (value) => value.stop,
          )
        : undefined;
    const functionsStorage = storageFront?.register(
      shippedStoragePrincipal('functionApp', storageWhere, options.storageRoleMutation),
    );
    const bridgeStorage = storageFront?.register(
      shippedStoragePrincipal('bridge', storageWhere, options.storageRoleMutation),
    );
    // The events queue and its poison queue exist before anything uses them, as Bicep and Terraform
    // create them: the bridge's identity may only send. Set-up, so with the account key.
    await timed(
      `events queues ${queueName}, ${queueName}-poison (as infrastructure creates them)`,
      async () => {
        for (const name of [queueName, `${queueName}-poison`])
          await new QueueClient(storageConnectionString, name).createIfNotExists();
      },
      () => () => Promise.resolve(),
    );
    if (storageFront) queueEndpoint = storageFront.queueEndpoint();

    const emulator = await timed<ArmEmulator>(
      'ARM emulator',
      () =>
        startArmEmulator({
          ...((options.shared?.ca ?? options.ca) ? { ca: options.shared?.ca ?? options.ca } : {}),
          latencies: {
            createMs: timings.vmCreateMs,
            deleteMs: timings.vmDeleteMs,
            restartMs: timings.repair.restartMs,
            retryAfterSeconds: timings.retryAfterSeconds,
          },
          log: log.with({ component: 'arm-emulator' }),
        }),
      (value) => value.stop,
    );

    const appSettings = localAppSettings({
      clusterName: 'local',
      resourceGroup,
      kubeconfigPath: identities.functions.kubeconfigPath,
      armEndpoint: emulator.url,
      armCaCertPem: emulator.caCertPem,
      bootstrapCaCertPem: emulator.caCertPem,
      ...(storageFront && options.functionHost !== false
        ? {
            storageIdentity: {
              accountName: azuriteAccess.accountName,
              queueServiceUri: storageFront.queueEndpoint(),
              tableServiceUri: storageFront.tableEndpoint(),
              caCertPem: storageFront.caCertPem,
            },
          }
        : { storageConnectionString }),
      queueName,
      unavailableOfferingsTable: scoped ? `offerings${runId}` : 'unavailableofferings',
      pollIntervalSeconds: timings.pollIntervalSeconds,
      maxPollIntervalSeconds: timings.maxPollIntervalSeconds,
      sweepSchedule,
      disruptionPollSeconds: timings.disruptionPollSeconds,
      replacementFallbackSeconds: timings.replacementFallbackSeconds,
      replacementBackoffMinutes: timings.replacementBackoffMinutes,
      consolidationValidationSeconds: timings.consolidationValidationSeconds,
      batchIdleMs: 1_000 / timings.speed,
      batchMaxMs: 10_000 / timings.speed,
      ...(scoped ? { provisioningSelector: `${RUN_LABEL}=${runId}` } : {}),
      // Node repair is on locally, Ready's toleration shortened with the other timings (timings.ts says
      // why that touches no healthy node).
      nodeRepair: {
        readyTolerationSeconds: timings.repair.readyTolerationSeconds,
        rebootRecoverySeconds: timings.repair.rebootRecoverySeconds,
        preemptionDrainSeconds: timings.repair.preemptionDrainSeconds,
      },
      rollout: timings.rollout,
    });
    // CapacityBuffers are upstream's alpha gate, off by default; the local stack turns it on for the
    // headroom scenario (with no buffer it reads one empty list per sweep and window).
    appSettings['FEATURE_GATES'] = [appSettings['FEATURE_GATES'], 'CapacityBuffer=true']
      .filter((gate) => gate !== undefined && gate !== '')
      .join(',');
    // The app keeps a gallery's published versions for NODE_IMAGE_CACHE_SECONDS (an hour by default, AKS
    // publishes weekly); the emulator publishes versions at runtime, and a class must see one at its next
    // sweep.
    appSettings['NODE_IMAGE_CACHE_SECONDS'] = String(timings.sweepPeriodSeconds);
    // Explain authenticates its callers with Entra ID tokens: here the local Entra emulator's tenant,
    // audience and keys, so the CLI's requests are verified as in Azure.
    const entra = await timed<EntraEmulator>(
      'Entra ID emulator (keys and user tokens for explain)',
      () => startEntraEmulator(),
      (value) => value.stop,
    );
    appSettings['AKS_TENANT_ID'] = entra.tenantId;
    appSettings['EXPLAIN_AUDIENCE'] = entra.audience;
    appSettings['EXPLAIN_JWKS_URI'] = entra.jwksUri;
    const explainCa = options.shared?.ca ?? options.ca ?? (await createEphemeralCa());
    const explainTls = await issueServerCertificate(explainCa, ['127.0.0.1', 'localhost']);
    const sweepLeaseNamespace = `nodeclaim-run-${runId}`;
    // A stack sharing its control plane keeps its Leases (the sweep's, the disruption marks') in a
    // namespace of its own, so runs side by side never wait for each other's.
    if (scoped) appSettings['SYSTEM_NAMESPACE'] = sweepLeaseNamespace;
    const sweepScope: SweepScope | undefined = scoped
      ? { nodeClaimSelector: `${RUN_LABEL}=${runId}`, leaseNamespace: sweepLeaseNamespace }
      : undefined;
    if (scoped) {
      await timed(
        `sweep Lease namespace ${sweepLeaseNamespace}`,
        () => provisionSweepLeaseNamespace(kubeconfigPath, sweepLeaseNamespace, identities.functions.user),
        (deleteNamespace) => deleteNamespace,
      );
    }
    // From here on the emulator authorizes every request against the app identity's role assignments.
    emulator.controls.setAuthorization(appAuthorization(appSettings));
    // Orchestration history on disk, as Azure keeps it in the task hub: a host that stops mid-orchestration
    // resumes from it when it starts again with the same directory.
    const stateDirectory = options.stateDirectory ?? (await mkdtemp(join(tmpdir(), 'nodeclaim-durable-')));
    if (!options.stateDirectory) {
      stops.push({
        part: 'durable history directory',
        stop: () => rm(stateDirectory, { recursive: true, force: true }),
      });
    }
    const app =
      options.functionHost === false
        ? undefined
        : await timed<RunningFunctionApp>(
            'function host',
            () =>
              startFunctionApp({
                appSettings,
                log,
                sweepSchedule,
                ...(functionsStorage ? { credential: functionsStorage } : {}),
                ...(sweepScope ? { sweepScope } : {}),
                ...(options.onActivity ? { onActivity: options.onActivity } : {}),
                host: {
                  visibilityTimeoutMs: 1_000,
                  pollIntervalMs: 50,
                  stateDirectory,
                  http: { tls: explainTls },
                },
              }),
            (value) => value.stop,
          );

    const queueTarget: QueueTarget = storageFront
      ? { mode: 'serviceUrl', serviceUrl: storageFront.queueEndpoint(), queueName }
      : { mode: 'connectionString', connectionString: storageConnectionString, queueName };
    const queueIdentity =
      storageFront && bridgeStorage
        ? { credential: bridgeStorage, caCertPem: storageFront.caCertPem }
        : undefined;
    const bridge = await timed<BridgeHandle>(
      'event bridge',
      () =>
        startBridge({
          queue: queueTarget,
          kubernetes: { mode: 'kubeconfig', kubeconfigPath: identities.bridge.kubeconfigPath },
          source: '/clusters/local/event-bridge',
          ...(scoped
            ? {
                queueSink: scopedQueueSink(queueTarget, runId, {
                  ...queueIdentity,
                  source: '/clusters/local/event-bridge',
                }),
              }
            : {}),
          ...(queueIdentity
            ? { queueCredential: queueIdentity.credential, queueCaCertPem: queueIdentity.caCertPem }
            : {}),
          shutdownFlushSeconds: 2,
          logger: log.with({ component: 'event-bridge' }),
        }),
      (value) => value.stop,
    );

    const simulator = await timed<KubeletSimulator>(
      'kubelet simulator',
      () =>
        startKubeletSimulator({
          kubeconfigPath,
          emulator,
          subscriptionId: LOCAL_SUBSCRIPTION_ID,
          resourceGroup,
          bootDelayMs: timings.kubelet.bootDelayMs,
          readyDelayMs: timings.kubelet.readyDelayMs,
          startupTaintRemoval: { keys: [AGENT_STARTUP_TAINT], delayMs: timings.kubelet.startupTaintDelayMs },
          speed: timings.speed,
          ...(options.clusterScale
            ? { heartbeatIntervalMs: CLUSTER_SCALE_HEARTBEAT_MS, leaseProcess: true }
            : {}),
          log: log.with({ component: 'kubelet-simulator' }),
        }),
      (value) => value.stop,
    );

    return {
      runId,
      timings,
      kubeconfigPath,
      identities,
      admin: { objects: adminObjects(kubeconfigPath) },
      apiServer,
      controlPlane: ownControlPlane,
      emulator,
      caCertPem: emulator.caCertPem,
      queueEndpoint,
      queueName,
      storageFront,
      functionsStorageToken: (await functionsStorage?.getToken([]))?.token,
      app,
      explain: {
        url: app?.host.httpBaseUrl()?.replace(/\/api$/, ''),
        caCertPem: explainCa.certPem,
        tokenUrl: entra.tokenUrl,
        audience: entra.audience,
        entra,
      },
      sweepScope,
      appSettings,
      bridge,
      simulator,
      subscriptionId: LOCAL_SUBSCRIPTION_ID,
      resourceGroup,
      startTimes,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
