// Ordering two resourceVersions of the same resource type. Kubernetes 1.35 made this part of the API
// (KEP-5504, "Comparable Resource Version"): a resourceVersion is a decimal integer without leading zeros,
// so the longer one is the greater and, at equal length, the lexicographic order is the numeric one.
// Before 1.35 the API server already produced them so (etcd revisions); a version in any other form is
// not compared (undefined), and the caller falls back to a read that needs no comparison.

const DECIMAL = /^[1-9][0-9]*$/;

/** Negative, zero or positive as `a` is older than, the same as or newer than `b`; undefined if not comparable. */
export function compareResourceVersions(a: string, b: string): number | undefined {
  if (!DECIMAL.test(a) || !DECIMAL.test(b)) return undefined;
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}
