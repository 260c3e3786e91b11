// NodePool limits during a solve: what a NodeClaim takes from them is, as in Karpenter, the largest
// capacity among its instance-type options (the pessimistic case: launch may pick any of them), and an
// option that alone would exceed what is left is dropped. Shared by the first-fit simulation and the
// cost packer, so both charge limits the same way.
import type { CompiledInstanceType } from './instance-types.js';
import { formatAmount, type Resources } from './resources.js';

export function withinRemaining(instanceType: CompiledInstanceType, remaining: Resources): boolean {
  for (const [name, left] of remaining) if ((instanceType.capacity.get(name) ?? 0) > left) return false;
  return true;
}

const largestByOptions = new WeakMap<readonly CompiledInstanceType[], Resources>();

/** Per resource, the largest capacity among the options (cached per options list). */
export function largestCapacity(options: readonly CompiledInstanceType[]): Resources {
  let largest = largestByOptions.get(options);
  if (largest) return largest;
  largest = new Map();
  for (const it of options) {
    for (const [name, amount] of it.capacity)
      if (amount > (largest.get(name) ?? 0)) largest.set(name, amount);
  }
  largestByOptions.set(options, largest);
  return largest;
}

export function coversLargest(remaining: Resources, largest: Resources): boolean {
  for (const [name, left] of remaining) if ((largest.get(name) ?? 0) > left) return false;
  return true;
}

export function subtractLargest(remaining: Resources, largest: Resources): void {
  for (const name of [...remaining.keys()])
    remaining.set(name, (remaining.get(name) ?? 0) - (largest.get(name) ?? 0));
}

/** The options a NodeClaim may keep under what is left of the limits (all of them when unlimited). */
export function optionsWithinLimits(
  options: CompiledInstanceType[],
  remaining: Resources | undefined,
): CompiledInstanceType[] {
  if (!remaining || coversLargest(remaining, largestCapacity(options))) return options;
  return options.filter((it) => withinRemaining(it, remaining));
}

export function describeRemaining(remaining: Resources | undefined): string {
  if (!remaining) return 'none';
  return [...remaining]
    .map(([name, left]) => `${name} ${left <= 0 ? '0' : formatAmount(name, left)} left`)
    .join(', ');
}
