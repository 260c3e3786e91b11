// The ARM request pipeline, in ARM's order: authentication, api-version, routing, authorization
// (the action at its scope, then linked access), throttling, injected request errors, then the operation
// itself. Every answer carries ARM's request-id headers and, for throttled kinds,
// x-ms-ratelimit-remaining-resource.

import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import {
  authorize,
  linkedAccessOfVmDelete,
  linkedAccessOfVmPut,
  requestAccess,
  type Access,
  type AuthorizationSettings,
} from './authorization.js';
import { throttled } from './azure-messages.js';
import type { ComputeService, RequestContext, ServiceResponse } from './compute-service.js';
import {
  ArmError,
  invalidAuthenticationToken,
  invalidParameter,
  invalidRequestContent,
  methodNotAllowed,
  missingApiVersion,
  missingAuthorization,
  requestFailed,
  unknownResourceType,
} from './errors.js';
import type { FaultRegistry, HangFaultEffect } from './faults.js';
import { decodeToken, paginate } from './paging.js';
import type { RequestLog } from './request-log.js';
import { matchRoute, subscriptionOf, vmNameOf, type ArmRoute } from './routes.js';
import type { NodeImageGallery } from './gallery-images.js';
import { filterSkus, type ResourceSku } from './sku-catalog.js';
import type { Throttler } from './throttling.js';
import { isObject } from './vm-spec.js';
import type { VmPowerService } from './vm-power.js';
import type { VmStore } from './vm-store.js';
import type { CapacityReservationStore } from './capacity-reservations.js';
import type { PlacementScores } from './placement-scores.js';
import { locationNotAvailable, type QuotaState } from './quotas.js';

export interface ArmRequest {
  method: string;
  url: URL;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface ArmHandlerDeps {
  service: ComputeService;
  power: VmPowerService;
  store: VmStore;
  reservations: CapacityReservationStore;
  throttler: Throttler;
  faults: FaultRegistry;
  log: RequestLog;
  catalog: () => readonly ResourceSku[];
  authorization: () => AuthorizationSettings | undefined;
  quotas: QuotaState;
  placementScores: PlacementScores;
  /** The community galleries' node image versions. */
  images: NodeImageGallery;
  pageSizes: { vms: number; skus: number; usages: number };
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Authentication is not emulated: any Bearer token is accepted; a missing one is rejected as ARM does. */
function checkAuthorization(headers: IncomingHttpHeaders): void {
  const authorization = header(headers, 'authorization');
  if (authorization === undefined || authorization.trim() === '') throw missingAuthorization();
  if (!/^Bearer\s+\S+/i.test(authorization)) throw invalidAuthenticationToken();
}

function parseJsonBody(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch (error) {
    throw invalidRequestContent(error instanceof Error ? error.message : String(error));
  }
}

function throttleRegion(route: ArmRoute, body: unknown, store: VmStore): string {
  switch (route.kind) {
    case 'putVm':
      return isObject(body) && typeof body.location === 'string' ? body.location.toLowerCase() : 'unknown';
    case 'getVm':
    case 'deleteVm':
    case 'restartVm': {
      const vm = store.get(route.address.subscriptionId, route.address.resourceGroup, route.address.name);
      return vm?.spec.location ?? 'unknown';
    }
    case 'getOperation':
    case 'listUsages':
      return route.location.toLowerCase();
    case 'spotPlacementScores':
    case 'regularPlacementScores':
    case 'listVms':
    case 'listSkus':
    case 'listGalleryImageVersions':
    case 'getCapacityReservationGroup':
    case 'listCapacityReservations':
      return 'global';
  }
}

/** What a create links (an existing VM's PUT changes nothing it references here), and what a DELETE removes. */
function linkedAccess(route: ArmRoute, body: unknown, store: VmStore): Access[] {
  if (route.kind !== 'putVm' && route.kind !== 'deleteVm') return [];
  const { subscriptionId, resourceGroup, name } = route.address;
  const stored = store.get(subscriptionId, resourceGroup, name);
  if (route.kind === 'putVm') return stored ? [] : linkedAccessOfVmPut(route.address, body);
  return stored
    ? linkedAccessOfVmDelete(route.address, {
        properties: stored.spec.properties,
        osDiskName: stored.osDiskName,
      })
    : [];
}

/** What to send back, and whether a hang fault withholds it (for `seconds`, or until the client gives up). */
export interface ArmAnswer extends ServiceResponse {
  withheld?: { seconds?: number };
}

export function handleArm(request: ArmRequest, deps: ArmHandlerDeps): ArmAnswer {
  const baseHeaders: Record<string, string> = {
    'x-ms-request-id': randomUUID(),
    'x-ms-correlation-request-id': header(request.headers, 'x-ms-correlation-request-id') ?? randomUUID(),
  };
  const clientRequestId = header(request.headers, 'x-ms-client-request-id');
  if (clientRequestId !== undefined) baseHeaders['x-ms-client-request-id'] = clientRequestId;

  let route: ArmRoute | undefined;
  let body: unknown;
  let throttledRequest = false;
  let hang: HangFaultEffect | undefined;
  let response: ServiceResponse;
  try {
    checkAuthorization(request.headers);
    const apiVersion = request.url.searchParams.get('api-version');
    if (apiVersion === null || apiVersion === '') throw missingApiVersion();
    const match = matchRoute(request.method, request.url.pathname);
    if ('notFound' in match) throw unknownResourceType(request.url.pathname, apiVersion);
    if ('methodNotAllowed' in match) throw methodNotAllowed(request.method);
    route = match.route;
    if (
      route.kind === 'putVm' ||
      route.kind === 'spotPlacementScores' ||
      route.kind === 'regularPlacementScores'
    )
      body = parseJsonBody(request.body);
    const authorization = deps.authorization();
    if (authorization) {
      authorize(authorization, requestAccess(request.method, route), linkedAccess(route, body, deps.store));
    }

    const subscriptionId = subscriptionOf(route);
    hang = deps.faults.takeHang(route.kind, vmNameOf(route));
    if (hang?.processed === false) throw notProcessed;
    const forcedRetryAfter = deps.faults.takeThrottle(route.kind, vmNameOf(route));
    if (forcedRetryAfter !== undefined) {
      throttledRequest = true;
      const policyName = deps.throttler.policyFor(route.kind)?.name ?? route.kind;
      throw throttled(`${policyName}3Min`, forcedRetryAfter, 0, 1);
    }
    const decision = deps.throttler.take(route.kind, subscriptionId, throttleRegion(route, body, deps.store));
    if (decision.remainingHeader !== undefined) {
      baseHeaders['x-ms-ratelimit-remaining-resource'] = decision.remainingHeader;
    }
    if (!decision.allowed) {
      throttledRequest = true;
      throw throttled(
        decision.policy,
        decision.retryAfterSeconds,
        decision.allowedCount,
        decision.measuredCount,
      );
    }

    const requestError = deps.faults.takeRequestError(route.kind, vmNameOf(route));
    if (requestError) throw requestFailed(requestError);

    const context: RequestContext = { baseUrl: request.url.origin, apiVersion };
    const ifNoneMatch = header(request.headers, 'if-none-match');
    response = dispatch(route, body, request.url, context, deps, ifNoneMatch);
  } catch (error) {
    response = error === notProcessed ? { status: 0, headers: {} } : errorResponse(error);
  }

  const headers = { ...baseHeaders, ...response.headers };
  const errorCode =
    isObject(response.body) && isObject(response.body.error) && typeof response.body.error.code === 'string'
      ? response.body.error.code
      : undefined;
  deps.log.record({
    method: request.method,
    url: request.url.pathname + request.url.search,
    kind: route?.kind,
    vmName: route ? vmNameOf(route) : undefined,
    status: response.status,
    errorCode,
    throttled: throttledRequest,
    hung: hang !== undefined,
    body,
  });
  return {
    ...response,
    headers,
    ...(hang ? { withheld: hang.seconds !== undefined ? { seconds: hang.seconds } : {} } : {}),
  };
}

/** A hang fault with `processed: false`: the request never reaches the resource provider. */
const notProcessed = new Error('not processed');

function dispatch(
  route: ArmRoute,
  body: unknown,
  url: URL,
  context: RequestContext,
  deps: ArmHandlerDeps,
  ifNoneMatch: string | undefined,
): ServiceResponse {
  switch (route.kind) {
    case 'putVm':
      return deps.service.putVm(route.address, body, context, { ifNoneMatch });
    case 'getVm':
      return deps.service.getVm(route.address, {
        instanceView: url.searchParams.get('$expand')?.toLowerCase() === 'instanceview',
      });
    case 'deleteVm':
      return deps.service.deleteVm(route.address, context);
    case 'restartVm':
      return deps.power.restartVm(route.address, context);
    case 'getOperation':
      return deps.service.getOperation(
        route.subscriptionId,
        route.operationId,
        url.searchParams.get('monitor') === 'true',
        context,
      );
    case 'listVms': {
      const offset = skipOffset(url);
      const items = deps.service.listVms(route.subscriptionId, route.resourceGroup);
      return { status: 200, body: paginate(items, offset, deps.pageSizes.vms, url), headers: {} };
    }
    case 'listSkus': {
      const offset = skipOffset(url);
      const items = filterSkus(deps.catalog(), url.searchParams.get('$filter') ?? undefined);
      if (!items) {
        throw invalidParameter('Only the filter "location eq \'<location>\'" is supported.', '$filter');
      }
      return { status: 200, body: paginate(items, offset, deps.pageSizes.skus, url), headers: {} };
    }
    case 'listUsages': {
      if (!deps.quotas.isKnownLocation(route.location))
        throw locationNotAvailable(route.location, deps.quotas.locations());
      const offset = skipOffset(url);
      const items = deps.quotas.usages(route.location, route.subscriptionId);
      return { status: 200, body: paginate(items, offset, deps.pageSizes.usages, url), headers: {} };
    }
    case 'spotPlacementScores':
    case 'regularPlacementScores': {
      const api = route.kind === 'spotPlacementScores' ? 'spot' : 'regular';
      return {
        status: 200,
        body: deps.placementScores.generate(api, route.subscriptionId, body),
        headers: {},
      };
    }
    case 'listGalleryImageVersions':
      return {
        status: 200,
        body: { value: deps.images.list(route.location, route.gallery, route.definition) },
        headers: {},
      };
    case 'getCapacityReservationGroup':
      return {
        status: 200,
        body: deps.reservations.renderGroup(
          route.group,
          deps.store.all(),
          url.searchParams.get('$expand')?.toLowerCase() === 'instanceview',
        ),
        headers: {},
      };
    case 'listCapacityReservations':
      return { status: 200, body: { value: deps.reservations.listReservations(route.group) }, headers: {} };
  }
}

function skipOffset(url: URL): number {
  const offset = decodeToken(url.searchParams.get('$skiptoken'));
  if (offset === undefined) throw invalidParameter('The $skiptoken is not valid.', '$skiptoken');
  return offset;
}

function errorResponse(error: unknown): ServiceResponse {
  if (error instanceof ArmError)
    return { status: error.status, body: error.body(), headers: { ...error.headers } };
  const message = error instanceof Error ? error.message : String(error);
  return {
    status: 500,
    body: { error: { code: 'InternalServerError', message: `The emulator failed: ${message}` } },
    headers: {},
  };
}
