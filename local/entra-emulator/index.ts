// Public entry point of the local Entra ID emulator: signing keys, the JWKS the app verifies against, and
// tokens for named users and applications (see server.ts for why it exists and what it does not do).
export {
  LOCAL_EXPLAIN_AUDIENCE,
  LOCAL_TENANT_ID,
  startEntraEmulator,
  type EntraEmulator,
  type EntraEmulatorOptions,
  type MintOptions,
} from './server.js';
export {
  createSigningKey,
  entraAccessTokenClaims,
  signJwt,
  type SigningKey,
  type TokenClaimsInput,
  type TokenSubject,
} from './tokens.js';
