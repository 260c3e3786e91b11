// ARM list paging: `{ value, nextLink }`, where nextLink is an absolute URL carrying an opaque
// $skiptoken. Clients must follow nextLink rather than assume one page.

export interface Page<T> {
  value: T[];
  nextLink?: string;
}

function encodeToken(offset: number): string {
  return Buffer.from(JSON.stringify({ offset })).toString('base64url');
}

/** The offset a $skiptoken stands for; undefined when the token is not one of ours. */
export function decodeToken(token: string | null): number | undefined {
  if (token === null || token === '') return 0;
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { offset?: unknown };
    return typeof parsed.offset === 'number' && Number.isInteger(parsed.offset) && parsed.offset >= 0
      ? parsed.offset
      : undefined;
  } catch {
    return undefined;
  }
}

export function paginate<T>(items: readonly T[], offset: number, pageSize: number, requestUrl: URL): Page<T> {
  const value = items.slice(offset, offset + pageSize);
  const nextOffset = offset + pageSize;
  if (nextOffset >= items.length) return { value };
  const next = new URL(requestUrl.toString());
  next.searchParams.set('$skiptoken', encodeToken(nextOffset));
  return { value, nextLink: next.toString() };
}
