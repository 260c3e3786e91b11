// Entra ID token verification (shared/azure/entra-token.ts), on tokens signed with keys made here by the
// local emulator's signing code: what is accepted, each way a token is refused, and the key cache's one
// fetch again for a key it has not seen.
import { describe, expect, it } from 'vitest';
import {
  bearerToken,
  entraIssuers,
  JwksCache,
  validateEntraToken,
  verifyEntraToken,
  type EntraTokenPolicy,
  type Jwk,
} from '../../shared/azure/entra-token.js';
import { createSigningKey, entraAccessTokenClaims, signJwt } from '../../local/entra-emulator/tokens.js';

const tenantId = '11111111-2222-3333-4444-555555555555';
const audience = 'api://explain-test';
const now = new Date('2026-12-06T12:00:00Z');
const policy: EntraTokenPolicy = {
  tenantId,
  audiences: [audience, 'b5a4c0de-0000-0000-0000-000000000001'],
  now,
};
const key = createSigningKey('key-1');
const keys: Jwk[] = [key.publicJwk];

const claims = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  ...entraAccessTokenClaims({
    tenantId,
    audience,
    issuedAt: new Date(now.getTime() - 60_000),
    subject: { kind: 'user', name: 'alice@contoso.example', objectId: 'oid-alice', groups: ['g-1', 'g-2'] },
  }),
  ...overrides,
});

const refusal = (token: string): string => {
  const result = verifyEntraToken(token, keys, policy);
  if (result.ok) throw new Error('expected a refusal');
  return result.reason;
};

describe('verifyEntraToken', () => {
  it('accepts a v2.0 token of the tenant for the app, and reads the user, the object ID and the groups', () => {
    const result = verifyEntraToken(signJwt(claims(), key), keys, policy);
    expect(result).toMatchObject({
      ok: true,
      claims: {
        issuer: entraIssuers(tenantId)[0],
        audience,
        preferredUsername: 'alice@contoso.example',
        objectId: 'oid-alice',
        groups: ['g-1', 'g-2'],
        groupsOverage: false,
      },
    });
  });

  it('accepts a v1.0 token (sts.windows.net issuer, upn) for the client-ID audience', () => {
    const v1 = entraAccessTokenClaims({
      tenantId,
      audience: 'b5a4c0de-0000-0000-0000-000000000001',
      version: '1.0',
      issuedAt: now,
      subject: { kind: 'user', name: 'bob@contoso.example' },
    });
    const result = verifyEntraToken(signJwt(v1, key), keys, policy);
    expect(result).toMatchObject({
      ok: true,
      claims: { issuer: `https://sts.windows.net/${tenantId}/`, upn: 'bob@contoso.example' },
    });
  });

  it('reads a group overage as such (no groups, the overage flagged)', () => {
    const overage = entraAccessTokenClaims({
      tenantId,
      audience,
      issuedAt: now,
      subject: { kind: 'user', name: 'carol@contoso.example', groupsOverage: true },
    });
    expect(verifyEntraToken(signJwt(overage, key), keys, policy)).toMatchObject({
      ok: true,
      claims: { groups: [], groupsOverage: true },
    });
  });

  it('refuses another audience', () => {
    expect(refusal(signJwt(claims({ aud: 'api://someone-else' }), key))).toMatch(/audience/);
  });

  it('refuses another issuer: another tenant, or another authority for the same tenant', () => {
    expect(
      refusal(signJwt(claims({ iss: entraIssuers('99999999-2222-3333-4444-555555555555')[0] }), key)),
    ).toMatch(/issuer/);
    expect(refusal(signJwt(claims({ iss: `https://evil.example/${tenantId}/v2.0` }), key))).toMatch(/issuer/);
  });

  it('refuses an expired token, and one not valid yet, beyond the clock skew only', () => {
    const nowSeconds = now.getTime() / 1000;
    expect(refusal(signJwt(claims({ exp: nowSeconds - 121 }), key))).toMatch(/expired/);
    expect(verifyEntraToken(signJwt(claims({ exp: nowSeconds - 60 }), key), keys, policy).ok).toBe(true);
    expect(refusal(signJwt(claims({ nbf: nowSeconds + 600 }), key))).toMatch(/not valid yet/);
    expect(refusal(signJwt(claims({ exp: undefined }), key))).toMatch(/no expiry/);
  });

  it('refuses a bad signature: a changed payload, or a key the tenant does not publish under that kid', () => {
    const token = signJwt(claims(), key);
    const [header, , signature] = token.split('.');
    const forged = Buffer.from(
      JSON.stringify(claims({ preferred_username: 'admin@contoso.example' })),
    ).toString('base64url');
    expect(refusal(`${header}.${forged}.${signature}`)).toMatch(/signature/);
    const impostor = createSigningKey('key-1');
    expect(refusal(signJwt(claims(), impostor))).toMatch(/signature/);
  });

  it('refuses alg none, and every alg but RS256, before looking for a key', () => {
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify(claims())).toString('base64url')}.`;
    expect(refusal(unsigned)).toMatch(/alg "none"/);
    expect(refusal(signJwt(claims(), key, { alg: 'HS256' }))).toMatch(/alg "HS256"/);
    expect(refusal('not-a-jwt')).toMatch(/three base64url parts/);
  });

  it('says when the key is unknown, so that the caller may fetch the keys again', () => {
    expect(verifyEntraToken(signJwt(claims(), createSigningKey('key-2')), keys, policy)).toMatchObject({
      ok: false,
      unknownKey: true,
    });
  });
});

describe('validateEntraToken with the key cache', () => {
  it('fetches the keys once, and again once for a kid it does not know; then the new key verifies', async () => {
    const rolled = createSigningKey('key-2');
    let published: Jwk[] = [key.publicJwk];
    let fetches = 0;
    const cache = new JwksCache(() => {
      fetches += 1;
      return Promise.resolve(published);
    });
    expect((await validateEntraToken(signJwt(claims(), key), cache, policy)).ok).toBe(true);
    expect((await validateEntraToken(signJwt(claims(), key), cache, policy)).ok).toBe(true);
    expect(fetches).toBe(1);

    published = [key.publicJwk, rolled.publicJwk];
    expect((await validateEntraToken(signJwt(claims(), rolled), cache, policy)).ok).toBe(true);
    expect(fetches).toBe(2);
  });

  it('refuses a kid still unknown after the one fetch, and does not fetch again within the interval', async () => {
    let fetches = 0;
    let clock = 0;
    const cache = new JwksCache(
      () => {
        fetches += 1;
        return Promise.resolve(keys);
      },
      { now: () => clock, minRefetchIntervalMs: 60_000 },
    );
    const stranger = signJwt(claims(), createSigningKey('key-x'));
    expect(await validateEntraToken(stranger, cache, policy)).toMatchObject({ ok: false, unknownKey: true });
    expect(fetches).toBe(2);
    clock = 59_000;
    expect(await validateEntraToken(stranger, cache, policy)).toMatchObject({ ok: false, unknownKey: true });
    expect(fetches).toBe(2);
    clock = 61_000;
    expect(await validateEntraToken(stranger, cache, policy)).toMatchObject({ ok: false, unknownKey: true });
    expect(fetches).toBe(3);
  });
});

describe('bearerToken', () => {
  it('takes the token of a Bearer header, and nothing else', () => {
    expect(bearerToken('Bearer abc.def.ghi')).toBe('abc.def.ghi');
    expect(bearerToken('bearer abc.def.ghi')).toBe('abc.def.ghi');
    expect(bearerToken('Basic dXNlcjpwYXNz')).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });
});
