// The HTTP admin API under /admin/ (see README.md): the same controls as `emulator.controls`, for
// tools and processes that are not the test itself. Not authenticated: the emulator listens on
// loopback only.

import type { ServiceResponse } from './compute-service.js';
import type { EmulatorControls } from './controls.js';
import { ArmError } from './errors.js';
import { describeInvalidRule, type FaultRuleInput } from './faults.js';
import { nodeImageBehaviors, type NodeImageBehavior, type NodeImageVersionInput } from './gallery-images.js';
import type { Latencies } from './latencies.js';
import type { PlacementScoreOptions } from './placement-scores.js';
import type { RequestFilter } from './request-log.js';
import { requestKinds, type RequestKind, type ThrottlingOptions } from './throttling.js';
import { isObject } from './vm-spec.js';
import { parseCapacityReservationGroupInput } from './capacity-reservations.js';

function json(status: number, body: unknown): ServiceResponse {
  return { status, body, headers: {} };
}

function badRequest(message: string): ServiceResponse {
  return json(400, { error: { code: 'InvalidRequest', message } });
}

function parseBody(body: Buffer): { ok: true; value: unknown } | { ok: false } {
  if (body.length === 0) return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(body.toString('utf8')) as unknown };
  } catch {
    return { ok: false };
  }
}

function requestFilter(query: URLSearchParams): RequestFilter | string {
  const filter: RequestFilter = {};
  const method = query.get('method');
  if (method) filter.method = method;
  const kind = query.get('kind');
  if (kind) {
    if (!requestKinds.includes(kind as RequestKind)) return `unknown kind '${kind}'`;
    filter.kind = kind as RequestKind;
  }
  const vmName = query.get('vmName');
  if (vmName) filter.vmName = vmName;
  const status = query.get('status');
  if (status) filter.status = Number(status);
  const afterSeq = query.get('afterSeq');
  if (afterSeq) filter.afterSeq = Number(afterSeq);
  return filter;
}

interface QuotaLimitBody {
  subscriptionId?: string;
  location?: string;
  name: string;
  limit: number;
}

function describeInvalidQuotaLimit(body: unknown): string | undefined {
  if (!isObject(body)) return 'the body must be a JSON object';
  if (typeof body.name !== 'string' || body.name === '') return 'name is required';
  if (typeof body.limit !== 'number') return 'limit must be a number';
  for (const field of ['location', 'subscriptionId'] as const) {
    if (body[field] !== undefined && typeof body[field] !== 'string') return `${field} must be a string`;
  }
  return undefined;
}

/** The body of PUT /admin/node-images/{version}: `{ publishedDate?: ISO string, behavior? }`. */
function nodeImageVersionInput(version: string, body: unknown): NodeImageVersionInput | string {
  if (body !== undefined && !isObject(body)) return 'the body must be a JSON object';
  const { publishedDate, behavior } = body ?? {};
  if (
    publishedDate !== undefined &&
    (typeof publishedDate !== 'string' || Number.isNaN(Date.parse(publishedDate)))
  )
    return 'publishedDate must be an ISO 8601 date';
  if (behavior !== undefined && !isNodeImageBehavior(behavior))
    return `behavior must be one of ${nodeImageBehaviors.join(', ')}`;
  return {
    version,
    ...(publishedDate !== undefined ? { publishedDate: new Date(publishedDate) } : {}),
    ...(behavior !== undefined ? { behavior } : {}),
  };
}

function isNodeImageBehavior(value: unknown): value is NodeImageBehavior {
  return (nodeImageBehaviors as readonly unknown[]).includes(value);
}

/**
 * Node image versions: list, publish (PUT), withdraw (DELETE; `?excludeFromLatest=true` only excludes it
 * from latest), and a version's behaviour (PUT .../behavior).
 */
function handleNodeImages(
  method: string,
  path: string,
  url: URL,
  body: unknown,
  controls: EmulatorControls,
): ServiceResponse | undefined {
  if (path === '/admin/node-images' && method === 'GET') {
    return json(200, { value: controls.nodeImageVersions() });
  }
  const match = /^\/admin\/node-images\/([^/]+)(\/behavior)?$/.exec(path);
  if (!match) return undefined;
  const version = decodeURIComponent(match[1] ?? '');
  const notFound = (): ServiceResponse | undefined =>
    controls.nodeImageVersions().some((v) => v.version.toLowerCase() === version.toLowerCase())
      ? undefined
      : json(404, { error: { code: 'NotFound', message: `no node image version '${version}'` } });
  try {
    if (match[2] !== undefined) {
      if (method !== 'PUT') return undefined;
      const behavior = isObject(body) ? body.behavior : undefined;
      if (!isNodeImageBehavior(behavior))
        return badRequest(`behavior must be one of ${nodeImageBehaviors.join(', ')}`);
      return notFound() ?? json(200, controls.setNodeImageBehavior(version, behavior));
    }
    if (method === 'PUT') {
      const input = nodeImageVersionInput(version, body);
      if (typeof input === 'string') return badRequest(input);
      return json(200, controls.publishNodeImageVersion(input));
    }
    if (method === 'DELETE') {
      const excludeFromLatest = url.searchParams.get('excludeFromLatest') === 'true';
      return notFound() ?? json(200, controls.unpublishNodeImageVersion(version, { excludeFromLatest }));
    }
  } catch (error) {
    return badRequest(error instanceof Error ? error.message : String(error));
  }
  return undefined;
}

export function handleAdmin(
  method: string,
  url: URL,
  rawBody: Buffer,
  controls: EmulatorControls,
): ServiceResponse {
  const path = url.pathname.replace(/\/+$/, '');
  const parsed = parseBody(rawBody);
  if (!parsed.ok) return badRequest('the body is not valid JSON');
  const body = parsed.value;

  if (path === '/admin/requests' && method === 'GET') {
    const filter = requestFilter(url.searchParams);
    if (typeof filter === 'string') return badRequest(filter);
    return json(200, { value: controls.requests(filter) });
  }
  if (path === '/admin/faults') {
    if (method === 'GET') return json(200, { value: controls.faults() });
    if (method === 'POST') {
      const problem = describeInvalidRule(body);
      if (problem) return badRequest(problem);
      return json(201, controls.injectFault(body as FaultRuleInput));
    }
    if (method === 'DELETE') {
      controls.clearFaults();
      return { status: 204, headers: {} };
    }
  }
  const faultMatch = /^\/admin\/faults\/([^/]+)$/.exec(path);
  if (faultMatch && method === 'DELETE') {
    return controls.removeFault(decodeURIComponent(faultMatch[1] ?? ''))
      ? { status: 204, headers: {} }
      : json(404, { error: { code: 'NotFound', message: 'no such fault rule' } });
  }
  if (path === '/admin/latencies') {
    if (method === 'GET') return json(200, controls.latencies());
    if (method === 'PUT') {
      if (!isObject(body)) return badRequest('the body must be a JSON object');
      try {
        return json(200, controls.setLatencies(body as Partial<Latencies>));
      } catch (error) {
        return badRequest(error instanceof Error ? error.message : String(error));
      }
    }
  }
  const holdMatch = /^\/admin\/holds\/([^/]+)$/.exec(path);
  if (holdMatch && (method === 'PUT' || method === 'DELETE')) {
    const vmName = decodeURIComponent(holdMatch[1] ?? '');
    if (method === 'PUT') controls.holdProvisioning(vmName);
    else controls.releaseProvisioning(vmName);
    return { status: 204, headers: {} };
  }
  if (path === '/admin/throttling' && method === 'PUT') {
    if (!isObject(body)) return badRequest('the body must be a JSON object');
    controls.setThrottling(body as ThrottlingOptions);
    return { status: 204, headers: {} };
  }
  if (path === '/admin/vms' && method === 'GET') return json(200, { value: controls.vms() });
  if (path === '/admin/capacity-reservation-groups' && method === 'PUT') {
    const group = parseCapacityReservationGroupInput(body);
    if (typeof group === 'string') return badRequest(group);
    controls.defineCapacityReservationGroup(group);
    return { status: 204, headers: {} };
  }
  if (path === '/admin/quotas' && method === 'PUT') {
    const problem = describeInvalidQuotaLimit(body);
    if (problem) return badRequest(problem);
    try {
      controls.setQuotaLimit(body as QuotaLimitBody);
    } catch (error) {
      return badRequest(error instanceof Error ? error.message : String(error));
    }
    return { status: 204, headers: {} };
  }
  const quotaMatch = /^\/admin\/quotas\/([^/]+)$/.exec(path);
  if (quotaMatch && method === 'GET') {
    const subscriptionId = url.searchParams.get('subscriptionId') ?? undefined;
    return json(200, {
      value: controls.quotaUsages(decodeURIComponent(quotaMatch[1] ?? ''), subscriptionId),
    });
  }
  if (path === '/admin/placement-scores') {
    if (method === 'GET') return json(200, controls.placementScoreOptions());
    if (method === 'PUT') {
      if (!isObject(body)) return badRequest('the body must be a JSON object');
      try {
        return json(200, controls.setPlacementScoreOptions(body as Partial<PlacementScoreOptions>));
      } catch (error) {
        return badRequest(error instanceof Error ? error.message : String(error));
      }
    }
  }
  if (path === '/admin/placement-scores/regular') {
    if (method === 'GET') return json(200, { enabled: controls.regularPlacementScoresEnabled() });
    if (method === 'PUT') {
      if (!isObject(body) || typeof body.enabled !== 'boolean')
        return badRequest('enabled (true or false) is required');
      controls.setRegularPlacementScoresEnabled(body.enabled);
      return { status: 204, headers: {} };
    }
  }
  const preemptMatch = /^\/admin\/vms\/([^/]+)\/preempt$/.exec(path);
  if (preemptMatch && method === 'POST') {
    const noticeSeconds = isObject(body) ? body.noticeSeconds : undefined;
    if (noticeSeconds !== undefined && (typeof noticeSeconds !== 'number' || !(noticeSeconds >= 0))) {
      return badRequest('noticeSeconds must be a non-negative number');
    }
    try {
      const notice = controls.preemptVm(decodeURIComponent(preemptMatch[1] ?? ''), {
        ...(noticeSeconds !== undefined ? { noticeMs: noticeSeconds * 1000 } : {}),
      });
      return json(202, notice);
    } catch (error) {
      return error instanceof ArmError
        ? { status: error.status, body: error.body(), headers: {} }
        : badRequest(String(error));
    }
  }
  const nodeImages = handleNodeImages(method, path, url, body, controls);
  if (nodeImages) return nodeImages;
  if (path === '/admin/reset' && method === 'POST') {
    controls.reset();
    return { status: 204, headers: {} };
  }
  return json(404, { error: { code: 'NotFound', message: `no admin endpoint ${method} ${path}` } });
}
