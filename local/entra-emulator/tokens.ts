// Entra-shaped access tokens for the local stack and the tests: signed RS256 with a key this module made,
// carrying the claims Entra ID writes (iss, aud, tid, oid, upn / preferred_username, groups, idtyp) so
// that the app's verification (shared/azure/entra-token.ts) runs unchanged against them. Real Entra
// cannot be reached from here; what it does that this does not is listed in docs/explain.md.
import { generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import { entraIssuers, type Jwk } from '../../shared/azure/entra-token.js';

/** A signing key: the private half signs, the public half is published in the JWKS under `kid`. */
export interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  publicJwk: Jwk;
}

export function createSigningKey(kid: string = randomUUID()): SigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const exported = publicKey.export({ format: 'jwk' });
  if (typeof exported.n !== 'string' || typeof exported.e !== 'string')
    throw new Error('an RSA public key exported without n and e');
  return {
    kid,
    privateKey,
    publicJwk: { kty: 'RSA', use: 'sig', alg: 'RS256', kid, n: exported.n, e: exported.e },
  };
}

const segment = (value: object): string => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');

/** A compact JWS of `payload` signed RS256 by `key` (the header names `kid`, or `header` overrides it). */
export function signJwt(
  payload: Record<string, unknown>,
  key: Pick<SigningKey, 'kid' | 'privateKey'>,
  header: Record<string, unknown> = {},
): string {
  const signed = `${segment({ typ: 'JWT', alg: 'RS256', kid: key.kid, ...header })}.${segment(payload)}`;
  const signature = sign('RSA-SHA256', Buffer.from(signed, 'ascii'), key.privateKey);
  return `${signed}.${signature.toString('base64url')}`;
}

/** Who a token is for: a user (by sign-in name) or an application (service principal). */
export type TokenSubject =
  | { kind: 'user'; name: string; objectId?: string; groups?: readonly string[]; groupsOverage?: boolean }
  | { kind: 'app'; objectId: string; groups?: readonly string[] };

export interface TokenClaimsInput {
  tenantId: string;
  audience: string;
  subject: TokenSubject;
  /** v2.0 (the default): `preferred_username`, the v2.0 issuer; v1.0: `upn`, sts.windows.net. */
  version?: '1.0' | '2.0';
  issuedAt?: Date;
  lifetimeSeconds?: number;
  /** Replaces the issuer (a token from another tenant or authority). */
  issuer?: string;
}

/** The claims Entra writes into an access token for `input.subject`. */
export function entraAccessTokenClaims(input: TokenClaimsInput): Record<string, unknown> {
  const version = input.version ?? '2.0';
  const [v2Issuer, v1Issuer] = entraIssuers(input.tenantId);
  const issuedAt = Math.floor((input.issuedAt ?? new Date()).getTime() / 1000);
  const subject = input.subject;
  const objectId = subject.objectId ?? randomUUID();
  const claims: Record<string, unknown> = {
    aud: input.audience,
    iss: input.issuer ?? (version === '2.0' ? v2Issuer : v1Issuer),
    iat: issuedAt,
    nbf: issuedAt,
    exp: issuedAt + (input.lifetimeSeconds ?? 3600),
    tid: input.tenantId,
    oid: objectId,
    sub: objectId,
    ver: version,
  };
  if (subject.kind === 'user') {
    claims[version === '2.0' ? 'preferred_username' : 'upn'] = subject.name;
    claims['idtyp'] = 'user';
    if (subject.groupsOverage) {
      // What Entra writes instead of the list when a user is in too many groups for a token.
      claims['_claim_names'] = { groups: 'src1' };
      claims['_claim_sources'] = {
        src1: { endpoint: `https://graph.microsoft.com/v1.0/users/${objectId}/getMemberObjects` },
      };
    } else if (subject.groups) claims['groups'] = [...subject.groups];
  } else {
    claims['idtyp'] = 'app';
    if (subject.groups) claims['groups'] = [...subject.groups];
  }
  return claims;
}
