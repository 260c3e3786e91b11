// Structural equality for JSON-shaped data (what the Kubernetes API returns and accepts). A property whose
// value is undefined counts as absent, because it disappears when the object is serialized for a write;
// treating it as a difference would make "did anything change?" checks report phantom changes.

export function plainEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => plainEqual(item, b[i]));
  }
  const left = definedEntries(a as Record<string, unknown>);
  const right = definedEntries(b as Record<string, unknown>);
  if (left.length !== right.length) return false;
  const rightByKey = new Map(right);
  return left.every(([key, value]) => rightByKey.has(key) && plainEqual(value, rightByKey.get(key)));
}

function definedEntries(value: Record<string, unknown>): [string, unknown][] {
  return Object.entries(value).filter(([, v]) => v !== undefined);
}
