// FEATURE_GATES as Karpenter spells it ("NodeOverlay=true,CapacityBuffer=true"): the gates upstream
// defines, with upstream's defaults (alpha off, beta on), so one value configures both. A gate this app
// does not act on is still accepted, so a value copied from a Karpenter deployment never fails to load;
// an unknown gate or a value other than true/false is reported naming it.

/** Upstream's gates (pkg/operator/options/options.go) and their defaults. */
export const FEATURE_GATE_DEFAULTS = {
  NodeRepair: false,
  ReservedCapacity: true,
  SpotToSpotConsolidation: false,
  NodeOverlay: false,
  StaticCapacity: false,
  CapacityBuffer: false,
} as const;

export type FeatureGateName = keyof typeof FEATURE_GATE_DEFAULTS;
export type FeatureGates = Record<FeatureGateName, boolean>;

const isGateName = (name: string): name is FeatureGateName => Object.hasOwn(FEATURE_GATE_DEFAULTS, name);

/** The gates a FEATURE_GATES value sets, defaults for the rest, and what was wrong with the value. */
export function parseFeatureGates(value: string | undefined): { gates: FeatureGates; problems: string[] } {
  const gates: FeatureGates = { ...FEATURE_GATE_DEFAULTS };
  const problems: string[] = [];
  for (const entry of (value ?? '').split(',')) {
    const trimmed = entry.trim();
    if (trimmed === '') continue;
    const [name = '', setting, ...rest] = trimmed.split('=').map((part) => part.trim());
    if (!isGateName(name)) {
      problems.push(
        `FEATURE_GATES: unknown gate ${JSON.stringify(name)} (known: ${Object.keys(FEATURE_GATE_DEFAULTS).join(', ')})`,
      );
      continue;
    }
    if (rest.length > 0 || (setting !== 'true' && setting !== 'false')) {
      problems.push(`FEATURE_GATES: ${name} must be =true or =false, got ${JSON.stringify(trimmed)}`);
      continue;
    }
    gates[name] = setting === 'true';
  }
  return { gates, problems };
}
