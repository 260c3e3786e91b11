// FEATURE_GATES parsed as Karpenter spells it: upstream's gates and defaults, unknown gates and values
// that are not true/false reported by name (loadSettings then refuses to start, listing them).
import { describe, expect, it } from 'vitest';
import { FEATURE_GATE_DEFAULTS, parseFeatureGates } from '../../shared/config/feature-gates.js';

describe('parseFeatureGates', () => {
  it('gives upstream defaults when unset: alpha gates off, ReservedCapacity (beta) on', () => {
    expect(parseFeatureGates(undefined)).toEqual({ gates: FEATURE_GATE_DEFAULTS, problems: [] });
    expect(FEATURE_GATE_DEFAULTS).toMatchObject({
      NodeOverlay: false,
      CapacityBuffer: false,
      ReservedCapacity: true,
    });
  });

  it('sets the gates named, tolerating spaces and empty entries', () => {
    const { gates, problems } = parseFeatureGates(
      ' NodeOverlay=true, ,CapacityBuffer=true,ReservedCapacity=false',
    );
    expect(problems).toEqual([]);
    expect(gates).toMatchObject({
      NodeOverlay: true,
      CapacityBuffer: true,
      ReservedCapacity: false,
      NodeRepair: false,
    });
  });

  it('reports an unknown gate and a value that is not true or false, naming each', () => {
    const { gates, problems } = parseFeatureGates('NodeOverlays=true,NodeOverlay=yes,CapacityBuffer');
    expect(problems).toEqual([
      expect.stringContaining('unknown gate "NodeOverlays"'),
      expect.stringContaining('NodeOverlay must be =true or =false'),
      expect.stringContaining('CapacityBuffer must be =true or =false'),
    ]);
    expect(gates).toEqual(FEATURE_GATE_DEFAULTS);
  });
});
