// An authorizing front for Azurite: one HTTPS listener per Storage service the app uses (queues, tables)
// that does what Azure Storage does with a Microsoft Entra request and Azurite does not. It authenticates
// `Authorization: Bearer <token>` against the tokens it issued (one per identity, see register), derives
// the permission the request needs (operations.ts) and checks it against that identity's role
// assignments (authorization.ts): refused as Storage refuses (403 AuthorizationPermissionMismatch, 401
// for a missing or unknown token), allowed requests go on to Azurite authorized by an account SAS made
// from Azurite's key, the token removed. HTTPS because the Azure SDKs send a bearer token over nothing
// else; the certificate comes from the development CA the ARM emulator uses.
//
// Requests are path-style (/<account>/…), as Azurite's are; each account the front serves has an ARM ID
// for scopes. An account the front serves but Azurite does not host (a second account, for narrowness
// tests) is authorized like any other, and Azurite answers what is allowed through.
import { randomBytes } from 'node:crypto';
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TokenCredential } from '@azure/identity';
import {
  AccountSASPermissions,
  generateAccountSASQueryParameters,
  StorageSharedKeyCredential,
} from '@azure/storage-queue';
import { silentLogger, type Logger } from '../../shared/observability/logger.js';
import { issueServerCertificate, type PemKeyPair } from '../tls/dev-ca.js';
import { decide, resourceScope, type StoragePrincipal } from './authorization.js';
import {
  badGateway,
  invalidAuthenticationInfo,
  noAuthenticationInformation,
  permissionMismatch,
  sendStorageError,
  unsupportedOperation,
} from './errors.js';
import {
  requiredPermission,
  UnknownStorageOperation,
  type RequiredPermission,
  type StorageService,
} from './operations.js';
import { readRequestBody } from '../http/request-body.js';

export interface AzuriteBehindFront {
  accountName: string;
  accountKey: string;
  /** http://127.0.0.1:PORT/<account>, as in Azurite's connection string. */
  queueEndpoint: string;
  tableEndpoint: string;
}

export interface StorageFrontOptions {
  azurite: AzuriteBehindFront;
  /** Signs the front's certificates (the development CA). */
  ca: PemKeyPair;
  /** The accounts served, by name, with the ARM ID role assignments name them by. */
  accounts: Readonly<Record<string, string>>;
  log?: Logger;
}

/** One request's outcome, for tests and the operator (what was refused, and why). */
export interface StorageDecisionRecord {
  principal: string | undefined;
  service: StorageService;
  method: string;
  path: string;
  operation?: string;
  permission?: string;
  scope?: string;
  status: 'allowed' | 'refused' | 'unauthenticated' | 'unsupported';
  roleName?: string;
}

export interface StorageFront {
  /** https://127.0.0.1:PORT/<account> for the queue service. */
  queueEndpoint(account?: string): string;
  tableEndpoint(account?: string): string;
  caCertPem: string;
  /**
   * Issues a token for `principal` and returns a credential that presents it, as a managed identity's
   * credential would present its Entra token. Registering the same name again replaces its assignments.
   */
  register(principal: StoragePrincipal): TokenCredential;
  /** The decisions so far, oldest first (bounded). */
  decisions(): readonly StorageDecisionRecord[];
  /** How many requests each identity made of each operation, by outcome, since the start (unbounded). */
  tally(): { principal: string; operation: string; status: StorageDecisionRecord['status']; count: number }[];
  stop(): Promise<void>;
}

const DECISIONS_KEPT = 2_000;
export async function startStorageFront(options: StorageFrontOptions): Promise<StorageFront> {
  const log = options.log ?? silentLogger;
  const certificate = await issueServerCertificate(options.ca, ['127.0.0.1', 'localhost']);
  const byToken = new Map<string, StoragePrincipal>();
  const tokenOf = new Map<string, string>();
  const decisions: StorageDecisionRecord[] = [];
  const counts = new Map<
    string,
    { principal: string; operation: string; status: StorageDecisionRecord['status']; count: number }
  >();
  const sas = accountSas(options.azurite);
  const upstream: Record<StorageService, URL> = {
    queue: new URL(options.azurite.queueEndpoint),
    table: new URL(options.azurite.tableEndpoint),
  };

  const record = (decision: StorageDecisionRecord): void => {
    decisions.push(decision);
    if (decisions.length > DECISIONS_KEPT) decisions.shift();
    const principal = decision.principal ?? '(no token)';
    const operation = decision.operation ?? `${decision.method} ${decision.path}`;
    const key = `${principal}\n${operation}\n${decision.status}`;
    const entry = counts.get(key) ?? { principal, operation, status: decision.status, count: 0 };
    entry.count += 1;
    counts.set(key, entry);
    if (decision.status === 'refused') log.warn('storage front refused a request', { ...decision });
    else log.debug('storage front decision', { ...decision });
  };

  const handler =
    (service: StorageService) =>
    (request: IncomingMessage, response: ServerResponse): void => {
      handle(service, request, response).catch((error: unknown) => {
        log.error('storage front failed a request', { error });
        if (!response.headersSent) sendStorageError(response, service, badGateway(String(error)));
        else response.destroy();
      });
    };

  async function handle(
    service: StorageService,
    request: IncomingMessage,
    response: ServerResponse,
  ): Promise<void> {
    const url = new URL(request.url ?? '/', 'https://front.invalid');
    const method = request.method ?? 'GET';
    const [, account = '', ...rest] = url.pathname.split('/');
    const path = `/${rest.join('/')}`;
    const decodedPath = safeDecode(path);
    const base = { service, method, path: `/${account}${decodedPath}` };
    const body = await readRequestBody(request);

    const principal = authenticate(request.headers.authorization);
    if (principal === 'missing' || principal === 'unknown') {
      record({ ...base, principal: undefined, status: 'unauthenticated' });
      sendStorageError(
        response,
        service,
        principal === 'missing' ? noAuthenticationInformation() : invalidAuthenticationInfo(),
      );
      return;
    }
    const accountId = options.accounts[account];
    let permission: RequiredPermission;
    try {
      if (accountId === undefined)
        throw new UnknownStorageOperation(`the storage front serves no account ${JSON.stringify(account)}`);
      permission = requiredPermission(service, {
        method,
        path: decodedPath,
        query: url.searchParams,
        headers: lowerCased(request.headers),
        body: body.toString('utf8'),
      });
    } catch (error) {
      if (!(error instanceof UnknownStorageOperation)) throw error;
      record({ ...base, principal: principal.name, status: 'unsupported' });
      sendStorageError(response, service, unsupportedOperation(error.message));
      return;
    }
    const scope = resourceScope(accountId, permission);
    const decision = decide(principal, permission, accountId);
    const described = {
      ...base,
      principal: principal.name,
      operation: permission.operation,
      permission: permission.needs.map((alternatives) => alternatives.join(' or ')).join(' and '),
      scope,
    };
    if (!decision.allowed) {
      record({ ...described, status: 'refused' });
      sendStorageError(response, service, permissionMismatch());
      return;
    }
    record({ ...described, status: 'allowed', roleName: decision.assignment.roleName });
    await forward(service, request, url, path, body, response);
  }

  function authenticate(header: string | undefined): StoragePrincipal | 'missing' | 'unknown' {
    if (header === undefined || header.trim() === '') return 'missing';
    const match = /^Bearer\s+(\S+)$/i.exec(header.trim());
    if (!match?.[1]) return 'unknown';
    return byToken.get(match[1]) ?? 'unknown';
  }

  function forward(
    service: StorageService,
    request: IncomingMessage,
    url: URL,
    path: string,
    body: Buffer,
    response: ServerResponse,
  ): Promise<void> {
    const target = upstream[service];
    const query = new URLSearchParams(url.searchParams);
    for (const [name, value] of new URLSearchParams(sas)) query.set(name, value);
    const headers = { ...request.headers };
    delete headers.authorization;
    delete headers.host;
    headers['content-length'] = String(body.length);
    return new Promise((resolve, reject) => {
      const outgoing = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          method: request.method,
          path: `${target.pathname.replace(/\/+$/, '')}${path}?${query.toString()}`,
          headers,
        },
        (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
          answer.once('end', resolve);
          answer.once('error', reject);
        },
      );
      outgoing.once('error', (error) => {
        if (!response.headersSent) sendStorageError(response, service, badGateway(error.message));
        resolve();
      });
      outgoing.end(body);
    });
  }

  const servers = await Promise.all([
    listen(createServer({ cert: certificate.certPem, key: certificate.keyPem }, handler('queue'))),
    listen(createServer({ cert: certificate.certPem, key: certificate.keyPem }, handler('table'))),
  ]);
  const [queueServer, tableServer] = servers;
  const endpoint = (server: Server, account: string): string =>
    `https://127.0.0.1:${(server.address() as AddressInfo).port}/${account}`;
  log.info('storage front started', {
    queue: endpoint(queueServer, options.azurite.accountName),
    table: endpoint(tableServer, options.azurite.accountName),
  });

  return {
    queueEndpoint: (account = options.azurite.accountName) => endpoint(queueServer, account),
    tableEndpoint: (account = options.azurite.accountName) => endpoint(tableServer, account),
    caCertPem: options.ca.certPem,
    register(principal) {
      const previous = tokenOf.get(principal.name);
      const token = previous ?? `storage-front.${principal.name}.${randomBytes(16).toString('hex')}`;
      tokenOf.set(principal.name, token);
      byToken.set(token, principal);
      return fixedTokenCredential(token);
    },
    decisions: () => [...decisions],
    tally: () => [...counts.values()].map((entry) => ({ ...entry })),
    stop: async () => {
      await Promise.all(servers.map(close));
    },
  };
}

/** A credential that always presents `token`: what a managed identity's credential does, minus Entra. */
export function fixedTokenCredential(token: string): TokenCredential {
  return {
    getToken: () => Promise.resolve({ token, expiresOnTimestamp: Date.now() + 3_600_000 }),
  };
}

/** An account SAS for every queue and table operation, valid for a week: the front's key to Azurite. */
function accountSas(azurite: AzuriteBehindFront): string {
  return generateAccountSASQueryParameters(
    {
      expiresOn: new Date(Date.now() + 7 * 24 * 3600 * 1000),
      permissions: AccountSASPermissions.parse('rwdlacup'),
      services: 'qt',
      resourceTypes: 'sco',
    },
    new StorageSharedKeyCredential(azurite.accountName, azurite.accountKey),
  ).toString();
}

function lowerCased(headers: IncomingMessage['headers']): Record<string, string | undefined> {
  const result: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(headers))
    result[name.toLowerCase()] = Array.isArray(value) ? value.join(',') : value;
  return result;
}

function safeDecode(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

function listen(server: Server): Promise<Server> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
