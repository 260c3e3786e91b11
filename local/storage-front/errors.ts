// Storage's error answers, in each service's own format, so the SDKs parse them as they parse Azure's:
// XML `<Error><Code>…</Code><Message>…</Message></Error>` from the queue service, an OData JSON error from
// the table service, both with the `x-ms-error-code` header the SDKs read first. The codes and messages
// are the ones Azure Storage answers a Microsoft Entra request with.
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { StorageService } from './operations.js';

export interface StorageError {
  status: number;
  code: string;
  message: string;
  headers?: Record<string, string>;
}

/** Storage's 403 for a token whose roles lack the permission (the message is Azure's, word for word). */
export function permissionMismatch(): StorageError {
  return {
    status: 403,
    code: 'AuthorizationPermissionMismatch',
    message: 'This request is not authorized to perform this operation using this permission.',
  };
}

// What Storage sends with a 401 to a bearer client: where to get a token, and for which resource.
const challenge =
  'Bearer authorization_uri=https://login.microsoftonline.com/00000000-0000-0000-0000-000000000000/oauth2/authorize resource_id=https://storage.azure.com';

export function noAuthenticationInformation(): StorageError {
  return {
    status: 401,
    code: 'NoAuthenticationInformation',
    message:
      'Server failed to authenticate the request. Please refer to the information in the www-authenticate header.',
    headers: { 'www-authenticate': challenge },
  };
}

export function invalidAuthenticationInfo(): StorageError {
  return {
    status: 401,
    code: 'InvalidAuthenticationInfo',
    message:
      'Server failed to authenticate the request. Please refer to the information in the www-authenticate header.',
    headers: { 'www-authenticate': `${challenge} error="invalid_token"` },
  };
}

/** A request the front cannot map to a permission: refused rather than passed unchecked. */
export function unsupportedOperation(detail: string): StorageError {
  return { status: 400, code: 'UnsupportedOperation', message: detail };
}

export function badGateway(detail: string): StorageError {
  return { status: 502, code: 'ServerBusy', message: `Azurite did not answer: ${detail}` };
}

function escapeXml(text: string): string {
  return text.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function sendStorageError(
  response: ServerResponse,
  service: StorageService,
  error: StorageError,
): void {
  const requestId = randomUUID();
  const message = `${error.message}\nRequestId:${requestId}\nTime:${new Date().toISOString()}`;
  const body =
    service === 'table'
      ? JSON.stringify({ 'odata.error': { code: error.code, message: { lang: 'en-US', value: message } } })
      : `<?xml version="1.0" encoding="utf-8"?><Error><Code>${error.code}</Code><Message>${escapeXml(message)}</Message></Error>`;
  response.writeHead(error.status, {
    'content-type':
      service === 'table'
        ? 'application/json;odata=minimalmetadata;streaming=true;charset=utf-8'
        : 'application/xml',
    'x-ms-error-code': error.code,
    'x-ms-request-id': requestId,
    'x-ms-version': '2019-02-02',
    'content-length': Buffer.byteLength(body),
    ...error.headers,
  });
  response.end(body);
}
