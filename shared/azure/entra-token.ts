// Verifies the Microsoft Entra ID access tokens that users present to the app's HTTP functions (explain).
// The Function App's HTTP triggers are anonymous to the Functions host (no function keys: a shared key
// would say nothing about who asks), so the app itself must prove who the caller is before the cluster's
// RBAC is asked what that caller may read. Verification is pure (a token, the signing keys, a policy, a
// clock) so that every refusal can be shown by a unit test; the keys come from a cache that fetches
// the tenant's JWKS, kept apart so nothing here needs the network.
import { createPublicKey, verify as verifySignature, type JsonWebKey, type KeyObject } from 'node:crypto';

/** One key of a JSON Web Key Set as Entra publishes it (RSA, `kid`, `n`, `e`; `x5c` ignored). */
export interface Jwk {
  kty: string;
  kid?: string;
  use?: string;
  alg?: string;
  n?: string;
  e?: string;
}

/** What a verified token says about its subject: only the claims the app maps onto Kubernetes. */
export interface EntraClaims {
  issuer: string;
  audience: string;
  tenantId: string | undefined;
  /** The principal's object ID (`oid`), present in every Entra access token. */
  objectId: string | undefined;
  /** `upn` (v1 user tokens). */
  upn: string | undefined;
  /** `preferred_username` (v2 user tokens). */
  preferredUsername: string | undefined;
  /** `idtyp`: "app" for an application's own token, when the app registration emits it. */
  identityType: string | undefined;
  /** `groups`: the object IDs of the user's groups, when the app registration emits them. */
  groups: readonly string[];
  /**
   * True when Entra left the groups out because there were too many for a token (`hasgroups`, or
   * `_claim_names.groups`, "group overage"): the token then names none of them.
   */
  groupsOverage: boolean;
  expiresAt: Date;
}

export interface EntraTokenPolicy {
  /** The directory whose tokens are accepted (its v1 and v2 issuers). */
  tenantId: string;
  /** Accepted `aud` values: the app registration's client ID and/or its Application ID URI. */
  audiences: readonly string[];
  now: Date;
  /** Tolerated clock difference for `exp` and `nbf`; default 120 s. */
  clockSkewSeconds?: number;
}

export type TokenVerification =
  | { ok: true; claims: EntraClaims }
  /** `unknownKey`: the token names a key the set lacks, which a fresh copy of the set may hold. */
  | { ok: false; reason: string; unknownKey?: true };

export const DEFAULT_CLOCK_SKEW_SECONDS = 120;

/** The issuers Entra writes for `tenantId`: v2.0 access tokens', then v1.0's. */
export function entraIssuers(tenantId: string): readonly [string, string] {
  return [`https://login.microsoftonline.com/${tenantId}/v2.0`, `https://sts.windows.net/${tenantId}/`];
}

/** The tenant's published signing keys (v2.0 endpoint; it lists the v1.0 keys too). */
export function entraJwksUri(tenantId: string): string {
  return `https://login.microsoftonline.com/${tenantId}/discovery/v2.0/keys`;
}

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerToken(authorization: string | undefined): string | undefined {
  const match = /^Bearer\s+([A-Za-z0-9\-_.]+)\s*$/i.exec(authorization?.trim() ?? '');
  return match?.[1];
}

type JsonObject = Record<string, unknown>;

function decodeSegment(segment: string): JsonObject | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as JsonObject)
      : undefined;
  } catch {
    return undefined;
  }
}

const stringClaim = (claims: JsonObject, name: string): string | undefined => {
  const value = claims[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
};

const numericClaim = (claims: JsonObject, name: string): number | undefined => {
  const value = claims[name];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
};

function publicKeyOf(jwk: Jwk): KeyObject | undefined {
  if (jwk.kty !== 'RSA' || !jwk.n || !jwk.e) return undefined;
  try {
    const key: JsonWebKey = { kty: 'RSA', n: jwk.n, e: jwk.e };
    return createPublicKey({ key, format: 'jwk' });
  } catch {
    return undefined;
  }
}

/**
 * Verifies `token` against `keys` and `policy`: a compact JWS signed RS256 (any other `alg`, `none`
 * included, is refused before a key is looked at) by the key its `kid` names, from one of the tenant's
 * issuers, for one of the accepted audiences, within its validity (`exp`, `nbf`) give or take the skew.
 */
export function verifyEntraToken(
  token: string,
  keys: readonly Jwk[],
  policy: EntraTokenPolicy,
): TokenVerification {
  const parts = token.split('.');
  if (parts.length !== 3 || parts.some((part) => !/^[A-Za-z0-9\-_]*$/.test(part)))
    return { ok: false, reason: 'not a signed JWT (three base64url parts)' };
  const [headerPart = '', payloadPart = '', signaturePart = ''] = parts;
  const header = decodeSegment(headerPart);
  const claims = decodeSegment(payloadPart);
  if (!header || !claims) return { ok: false, reason: 'the token header or payload is not a JSON object' };

  const alg = stringClaim(header, 'alg');
  if (alg !== 'RS256')
    return { ok: false, reason: `alg ${JSON.stringify(alg ?? null)} is not accepted (RS256 only)` };
  const kid = stringClaim(header, 'kid');
  if (!kid) return { ok: false, reason: 'the token names no signing key (kid)' };
  const jwk = keys.find((candidate) => candidate.kid === kid);
  if (!jwk)
    return { ok: false, reason: `signing key ${kid} is not among the tenant's keys`, unknownKey: true };
  if (jwk.use !== undefined && jwk.use !== 'sig')
    return { ok: false, reason: `key ${kid} is not a signing key` };
  const publicKey = publicKeyOf(jwk);
  if (!publicKey) return { ok: false, reason: `key ${kid} is not a usable RSA key` };
  const signature = Buffer.from(signaturePart, 'base64url');
  const signed = Buffer.from(`${headerPart}.${payloadPart}`, 'ascii');
  if (signature.length === 0 || !verifySignature('RSA-SHA256', signed, publicKey, signature))
    return { ok: false, reason: 'the signature does not verify' };

  const issuer = stringClaim(claims, 'iss');
  if (!issuer || !entraIssuers(policy.tenantId).includes(issuer))
    return { ok: false, reason: `issuer ${JSON.stringify(issuer ?? null)} is not this tenant's` };
  const audience = stringClaim(claims, 'aud');
  if (!audience || !policy.audiences.includes(audience))
    return { ok: false, reason: `audience ${JSON.stringify(audience ?? null)} is not this app's` };

  const skew = policy.clockSkewSeconds ?? DEFAULT_CLOCK_SKEW_SECONDS;
  const nowSeconds = policy.now.getTime() / 1000;
  const exp = numericClaim(claims, 'exp');
  if (exp === undefined) return { ok: false, reason: 'the token has no expiry (exp)' };
  if (nowSeconds > exp + skew) return { ok: false, reason: 'the token has expired' };
  const nbf = numericClaim(claims, 'nbf');
  if (nbf !== undefined && nowSeconds < nbf - skew)
    return { ok: false, reason: 'the token is not valid yet (nbf)' };

  const groups = claims['groups'];
  const claimNames = claims['_claim_names'];
  const groupsOverage =
    claims['hasgroups'] === true ||
    (typeof claimNames === 'object' && claimNames !== null && 'groups' in claimNames);
  return {
    ok: true,
    claims: {
      issuer,
      audience,
      tenantId: stringClaim(claims, 'tid'),
      objectId: stringClaim(claims, 'oid'),
      upn: stringClaim(claims, 'upn'),
      preferredUsername: stringClaim(claims, 'preferred_username'),
      identityType: stringClaim(claims, 'idtyp'),
      groups: Array.isArray(groups) ? groups.filter((g): g is string => typeof g === 'string') : [],
      groupsOverage,
      expiresAt: new Date(exp * 1000),
    },
  };
}

/** Where the signing keys come from: the tenant's JWKS, fetched. */
export type JwksSource = () => Promise<readonly Jwk[]>;

export interface JwksCacheOptions {
  /** Keys older than this are fetched again before use; default 24 h, as Microsoft recommends. */
  maxAgeMs?: number;
  /**
   * Unknown `kid`s fetch the set again at most this often (the first one at once); default 60 s. Entra
   * publishes a key before signing with it, so a new key is rare, and a stream of forged `kid`s must not
   * become a stream of requests to Entra.
   */
  minRefetchIntervalMs?: number;
  now?: () => number;
}

/** The signing keys, fetched on first use and kept; one fetch at a time. */
export class JwksCache {
  #keys: readonly Jwk[] | undefined;
  #fetchedAt = 0;
  #unknownKeyFetchAt: number | undefined;
  #inFlight: Promise<readonly Jwk[]> | undefined;
  readonly #maxAgeMs: number;
  readonly #minRefetchIntervalMs: number;
  readonly #now: () => number;

  constructor(
    private readonly source: JwksSource,
    options: JwksCacheOptions = {},
  ) {
    this.#maxAgeMs = options.maxAgeMs ?? 24 * 3_600_000;
    this.#minRefetchIntervalMs = options.minRefetchIntervalMs ?? 60_000;
    this.#now = options.now ?? Date.now;
  }

  async keys(): Promise<readonly Jwk[]> {
    if (this.#keys && this.#now() - this.#fetchedAt < this.#maxAgeMs) return this.#keys;
    return this.#fetch();
  }

  /** Fetches again, unless an unknown key made it fetch too recently; true when a fresh set was fetched. */
  async refreshForUnknownKey(): Promise<boolean> {
    const last = this.#unknownKeyFetchAt;
    if (last !== undefined && this.#now() - last < this.#minRefetchIntervalMs) return false;
    this.#unknownKeyFetchAt = this.#now();
    await this.#fetch();
    return true;
  }

  #fetch(): Promise<readonly Jwk[]> {
    this.#inFlight ??= this.source()
      .then((keys) => {
        this.#keys = keys;
        this.#fetchedAt = this.#now();
        return keys;
      })
      .finally(() => {
        this.#inFlight = undefined;
      });
    return this.#inFlight;
  }
}

/**
 * Verifies `token` with the cached keys; a token signed by a key the cache lacks makes it fetch the set
 * once more (a key Entra has just started using) before the token is refused.
 */
export async function validateEntraToken(
  token: string,
  cache: JwksCache,
  policy: EntraTokenPolicy,
): Promise<TokenVerification> {
  const first = verifyEntraToken(token, await cache.keys(), policy);
  if (first.ok || !first.unknownKey) return first;
  if (!(await cache.refreshForUnknownKey())) return first;
  return verifyEntraToken(token, await cache.keys(), policy);
}

/** The JWKS at `uri`, over HTTPS (or loopback HTTP: the local Entra emulator), with a timeout. */
export function httpJwksSource(uri: string, timeoutMs = 10_000): JwksSource {
  return async () => {
    const response = await fetch(uri, { signal: AbortSignal.timeout(timeoutMs) });
    if (!response.ok) throw new Error(`JWKS ${uri} answered ${response.status}`);
    const body: unknown = await response.json();
    const keys = typeof body === 'object' && body !== null ? (body as { keys?: unknown }).keys : undefined;
    if (!Array.isArray(keys)) throw new Error(`JWKS ${uri} has no "keys" list`);
    return keys.filter(
      (key): key is Jwk =>
        typeof key === 'object' && key !== null && typeof (key as { kty?: unknown }).kty === 'string',
    );
  };
}
