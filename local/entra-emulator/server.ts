// The local stand-in for the Microsoft Entra ID endpoints the app and its users touch: the tenant's
// signing keys (JWKS, which the app fetches to verify tokens, as it does from login.microsoftonline.com)
// and a token endpoint for local users (what `az account get-access-token` gives in Azure), so the
// explain CLI and the tests present tokens the app verifies exactly as it verifies Entra's.
//
// Plain HTTP, on loopback only: the JWKS holds public keys, the app accepts an http:// JWKS only from a
// loopback address (shared/config/settings.ts), and no client here needs a CA to reach it. The token
// endpoint signs for any name it is asked for: it exists for a developer's own machine.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Jwk } from '../../shared/azure/entra-token.js';
import {
  createSigningKey,
  entraAccessTokenClaims,
  signJwt,
  type SigningKey,
  type TokenClaimsInput,
  type TokenSubject,
} from './tokens.js';

/** The local tenant; any GUID would do, this one is recognisable in logs. */
export const LOCAL_TENANT_ID = '00000000-0000-0000-0000-00000000e1d0';
/** The app registration users sign in to locally (the Application ID URI form of EXPLAIN_AUDIENCE). */
export const LOCAL_EXPLAIN_AUDIENCE = 'api://nodeclaim-azure-explain-local';

export interface EntraEmulatorOptions {
  tenantId?: string;
  /** The audience tokens are minted for unless told otherwise. */
  audience?: string;
  port?: number;
}

export type MintOptions = Omit<TokenClaimsInput, 'tenantId' | 'audience' | 'subject'> & {
  audience?: string;
  /** Signs with this key instead of the published one (a key the tenant does not publish). */
  key?: Pick<SigningKey, 'kid' | 'privateKey'>;
};

export interface EntraEmulator {
  tenantId: string;
  audience: string;
  /** http://127.0.0.1:PORT */
  url: string;
  /** What EXPLAIN_JWKS_URI is set to locally. */
  jwksUri: string;
  /**
   * GET `${tokenUrl}?user=<name>&groups=<id>,<id>` answers `{ access_token, token_type, expires_in }`:
   * a token for that user, as the local explain CLI asks for one.
   */
  tokenUrl: string;
  mintToken(subject: TokenSubject, options?: MintOptions): string;
  /** Publishes a new signing key and signs with it from now on (a key rollover); the old one stays listed. */
  rotateKey(): SigningKey;
  /** How many times the JWKS was fetched (the app caches it). */
  jwksFetches(): number;
  stop(): Promise<void>;
}

export async function startEntraEmulator(options: EntraEmulatorOptions = {}): Promise<EntraEmulator> {
  const tenantId = options.tenantId ?? LOCAL_TENANT_ID;
  const audience = options.audience ?? LOCAL_EXPLAIN_AUDIENCE;
  const keys: SigningKey[] = [createSigningKey()];
  let fetches = 0;
  const current = (): SigningKey => keys[keys.length - 1] as SigningKey;

  const mintToken = (subject: TokenSubject, mint: MintOptions = {}): string => {
    const { audience: mintAudience, key, ...claimOptions } = mint;
    return signJwt(
      entraAccessTokenClaims({ ...claimOptions, tenantId, audience: mintAudience ?? audience, subject }),
      key ?? current(),
    );
  };

  const send = (response: ServerResponse, status: number, body: unknown): void => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  };

  const handle = (request: IncomingMessage, response: ServerResponse): void => {
    const url = new URL(request.url ?? '/', 'http://entra.invalid');
    if (request.method === 'GET' && url.pathname === `/${tenantId}/discovery/v2.0/keys`) {
      fetches += 1;
      const published: Jwk[] = keys.map((key) => key.publicJwk);
      send(response, 200, { keys: published });
      return;
    }
    if (request.method === 'GET' && url.pathname === `/${tenantId}/local/token`) {
      const user = url.searchParams.get('user');
      if (!user) {
        send(response, 400, { error: 'invalid_request', error_description: 'user is required' });
        return;
      }
      const groups = (url.searchParams.get('groups') ?? '')
        .split(',')
        .map((group) => group.trim())
        .filter((group) => group !== '');
      const lifetimeSeconds = 3600;
      send(response, 200, {
        access_token: mintToken({ kind: 'user', name: user, groups }, { lifetimeSeconds }),
        token_type: 'Bearer',
        expires_in: lifetimeSeconds,
      });
      return;
    }
    send(response, 404, { error: 'not_found', error_description: `${request.method} ${url.pathname}` });
  };

  const server = createServer(handle);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    tenantId,
    audience,
    url,
    jwksUri: `${url}/${tenantId}/discovery/v2.0/keys`,
    tokenUrl: `${url}/${tenantId}/local/token`,
    mintToken,
    rotateKey: () => {
      const key = createSigningKey(randomUUID());
      keys.push(key);
      return key;
    },
    jwksFetches: () => fetches,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
