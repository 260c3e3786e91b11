// startArmEmulator: wires the emulator's parts together behind an HTTPS server on loopback.

import { createServer, type Server } from 'node:https';
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { silentLogger, type Logger } from '../../shared/observability/logger.js';
import { createEphemeralCa, issueServerCertificate, type PemKeyPair } from '../tls/dev-ca.js';
import { handleAdmin } from './admin-api.js';
import { handleArm, type ArmAnswer } from './arm-handler.js';
import type { AuthorizationSettings } from './authorization.js';
import { ComputeService, type ServiceResponse } from './compute-service.js';
import type { EmulatorControls } from './controls.js';
import { FaultRegistry } from './faults.js';
import { NodeImageGallery } from './gallery-images.js';
import { defaultLatencies, mergeLatencies, type Latencies } from './latencies.js';
import { OperationStore } from './operations.js';
import { ProvisioningHolds } from './provisioning-holds.js';
import { RequestLog } from './request-log.js';
import { handleRetailPrices } from './retail-prices.js';
import { skuCatalog, type ResourceSku } from './sku-catalog.js';
import { Throttler, type ThrottlingOptions } from './throttling.js';
import { VmPowerService } from './vm-power.js';
import { toEmulatedVm, VmStore } from './vm-store.js';
import { CapacityReservationStore } from './capacity-reservations.js';
import { PlacementScores } from './placement-scores.js';
import { QuotaState } from './quotas.js';
import { readRequestBody } from '../http/request-body.js';

export interface ArmEmulatorOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** CA that signs the server certificate; a throwaway one is made when omitted. */
  ca?: PemKeyPair;
  latencies?: Partial<Latencies>;
  throttling?: ThrottlingOptions;
  catalog?: readonly ResourceSku[];
  /** List page sizes; small values exercise nextLink paging. */
  pageSizes?: { vms?: number; skus?: number; prices?: number; usages?: number };
  log?: Logger;
  /**
   * The caller's role assignments: every request is authorized against them as ARM does
   * (authorization.ts). Without them every authenticated request is allowed (for tests of other
   * concerns); the local stack and the launch tests always pass the app identity's.
   */
  authorization?: AuthorizationSettings;
}

export interface ArmEmulator {
  /** https://127.0.0.1:PORT — the `endpoint` for ComputeManagementClient. */
  url: string;
  /** The CA certificate clients must trust (NODE_EXTRA_CA_CERTS or tlsOptions.ca). */
  caCertPem: string;
  controls: EmulatorControls;
  stop(): Promise<void>;
}

function send(response: ServerResponse, result: ServiceResponse): void {
  const headers: Record<string, string> = { ...result.headers };
  let payload: string | undefined;
  if (result.body !== undefined) {
    payload = JSON.stringify(result.body);
    headers['content-type'] = 'application/json; charset=utf-8';
  }
  headers['content-length'] = String(payload === undefined ? 0 : Buffer.byteLength(payload));
  response.writeHead(result.status, headers);
  response.end(payload);
}

function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

export async function startArmEmulator(options: ArmEmulatorOptions = {}): Promise<ArmEmulator> {
  const host = options.host ?? '127.0.0.1';
  const log = options.log ?? silentLogger;
  const ca = options.ca ?? (await createEphemeralCa());
  const certHosts = [
    ...new Set(['127.0.0.1', 'localhost', ...(host === '0.0.0.0' || host === '::' ? [] : [host])]),
  ];
  const serverCert = await issueServerCertificate(ca, certHosts);

  const initialLatencies = mergeLatencies(defaultLatencies, options.latencies ?? {});
  let latencies = initialLatencies;
  const catalog = options.catalog ?? skuCatalog;
  const store = new VmStore();
  const reservations = new CapacityReservationStore();
  const operations = new OperationStore();
  const faults = new FaultRegistry();
  const holds = new ProvisioningHolds();
  const requestLog = new RequestLog();
  const initialThrottling: ThrottlingOptions = {
    scale: options.throttling?.scale ?? 1,
    policies: options.throttling?.policies ?? {},
    enabled: options.throttling?.enabled ?? true,
  };
  const throttler = new Throttler(initialThrottling);
  let authorization = options.authorization;
  const quotas = new QuotaState({ store, catalog: () => catalog, faults });
  const placementScores = new PlacementScores({ catalog: () => catalog, faults, quotas });
  const images = new NodeImageGallery();
  const service = new ComputeService({
    store,
    operations,
    faults,
    catalog: () => catalog,
    latencies: () => latencies,
    holds,
    reservations,
    quotas,
    images,
  });

  const power = new VmPowerService({ store, operations, compute: service, latencies: () => latencies });

  const controls: EmulatorControls = {
    injectFault: (rule) => faults.add(rule),
    removeFault: (id) => faults.remove(id),
    clearFaults: () => faults.clear(),
    faults: () => faults.list(),
    setLatencies: (change) => {
      latencies = mergeLatencies(latencies, change);
      return latencies;
    },
    latencies: () => latencies,
    holdProvisioning: (vmName) => holds.hold(vmName),
    releaseProvisioning: (vmName) => holds.release(vmName),
    setThrottling: (throttling) => throttler.configure(throttling),
    setAuthorization: (settings) => {
      authorization = settings;
    },
    authorization: () => authorization,
    requests: (filter) => requestLog.query(filter),
    vms: () => store.all().map(toEmulatedVm),
    preemptVm: (vmName, preemption) => power.preempt(vmName, preemption?.noticeMs),
    onVmChange: (listener) => store.onChange(listener),
    defineCapacityReservationGroup: (group) => reservations.define(group),
    setQuotaLimit: (input) => quotas.setLimit(input),
    quotaUsages: (location, subscriptionId) => quotas.usages(location, subscriptionId),
    setPlacementScoreOptions: (change) => placementScores.configure(change),
    placementScoreOptions: () => placementScores.options(),
    setRegularPlacementScoresEnabled: (enabled) => placementScores.setRegularEnabled(enabled),
    regularPlacementScoresEnabled: () => placementScores.isRegularEnabled(),
    publishNodeImageVersion: (input) => images.publish(input),
    unpublishNodeImageVersion: (version, unpublish) => images.unpublish(version, unpublish),
    setNodeImageBehavior: (version, behavior) => images.setBehavior(version, behavior),
    nodeImageVersions: () => images.versions(),
    nodeImageBehavior: (communityGalleryImageId) => images.behaviorOf(communityGalleryImageId),
    reset: () => {
      reservations.clear();
      service.cancelTimers();
      power.cancelTimers();
      holds.clear();
      store.clear();
      operations.clear();
      faults.forget();
      quotas.clear();
      placementScores.reset();
      images.reset();
      requestLog.clear();
      throttler.configure(initialThrottling);
      latencies = initialLatencies;
    },
  };

  const armDeps = {
    service,
    power,
    store,
    reservations,
    throttler,
    faults,
    log: requestLog,
    catalog: () => catalog,
    authorization: () => authorization,
    quotas,
    placementScores,
    images,
    pageSizes: {
      vms: options.pageSizes?.vms ?? 100,
      skus: options.pageSizes?.skus ?? 50,
      usages: options.pageSizes?.usages ?? 50,
    },
  };

  const hangingTimers = new Set<NodeJS.Timeout>();
  const server: Server = createServer(
    { key: serverCert.keyPem, cert: serverCert.certPem },
    (request, response) => {
      void (async () => {
        const method = (request.method ?? 'GET').toUpperCase();
        const url = new URL(request.url ?? '/', `https://${request.headers.host ?? `${urlHost(host)}`}`);
        let result: ArmAnswer;
        try {
          const body = await readRequestBody(request);
          result = url.pathname.startsWith('/admin/')
            ? handleAdmin(method, url, body, controls)
            : url.pathname.toLowerCase() === '/api/retail/prices'
              ? handleRetailPrices(method, url, catalog, options.pageSizes?.prices ?? 100)
              : handleArm({ method, url, headers: request.headers, body }, armDeps);
        } catch (error) {
          result = {
            status: 400,
            body: {
              error: {
                code: 'InvalidRequest',
                message: error instanceof Error ? error.message : String(error),
              },
            },
            headers: {},
          };
        }
        log.debug('arm request', { method, path: url.pathname, status: result.status });
        if (result.withheld) {
          // A hang fault: answer late, or never (the connection stays open until the client gives up,
          // or is reset after `seconds` when there is nothing to answer).
          const { seconds } = result.withheld;
          if (seconds === undefined) return;
          const timer = setTimeout(() => {
            hangingTimers.delete(timer);
            if (response.destroyed) return;
            if (result.status === 0) response.destroy();
            else send(response, result);
          }, seconds * 1000);
          hangingTimers.add(timer);
          return;
        }
        if (!response.destroyed) send(response, result);
      })();
    },
  );

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const url = `https://${urlHost(host)}:${port}`;
  log.info('ARM emulator listening', { url });

  return {
    url,
    caCertPem: ca.certPem,
    controls,
    stop: async () => {
      service.cancelTimers();
      power.cancelTimers();
      for (const timer of hangingTimers) clearTimeout(timer);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
