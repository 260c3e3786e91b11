// The explain endpoints take an Entra ID token for the function app's audience. Most users are already
// signed in with az login (or run with a managed identity), so the CLI asks DefaultAzureCredential for
// one; a token passed explicitly wins, for scripts and for clusters where the user gets it elsewhere.

/** Where the token comes from: given, or asked for from the user's Azure sign-in for this audience. */
export type TokenSource = { kind: 'given'; token: string } | { kind: 'azure'; audience: string };

/** The scope asked for: the audience's `.default` (an audience that already is a scope is kept). */
export function scopeFor(audience: string): string {
  const trimmed = audience.replace(/\/+$/, '');
  return trimmed.endsWith('/.default') ? trimmed : `${trimmed}/.default`;
}

/** A function that gets the token once, when the first request needs it. */
export function tokenProvider(source: TokenSource): () => Promise<string> {
  if (source.kind === 'given') return async () => source.token;
  let pending: Promise<string> | undefined;
  return () => (pending ??= azureToken(source.audience));
}

async function azureToken(audience: string): Promise<string> {
  // Loaded only when needed: the SDK takes a while to import, and a given token never needs it.
  const { DefaultAzureCredential } = await import('@azure/identity');
  const scope = scopeFor(audience);
  try {
    const token = await new DefaultAzureCredential().getToken(scope);
    if (!token) throw new Error('no token was returned');
    return token.token;
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new TokenError(
      `Could not get a token for ${scope} (${reason}): sign in: az login, or pass --token (NODECLAIM_EXPLAIN_TOKEN).`,
    );
  }
}

export class TokenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TokenError';
  }
}
