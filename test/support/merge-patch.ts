// RFC 7386 JSON merge patch, as the API server applies one to a stored object: objects merge, null
// removes, anything else replaces. The in-memory stores of the fakes apply their merge patches with it.
const clone = <T>(value: T): T => structuredClone(value);

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return clone(patch);
  const base: Record<string, unknown> =
    typeof target === 'object' && target !== null && !Array.isArray(target)
      ? { ...(target as Record<string, unknown>) }
      : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete base[key];
    else base[key] = mergePatch(base[key], value);
  }
  return base;
}
