// Holds keep matching VMs Creating (or Updating) past their latency until released, so a test can act
// while a creation is known to be still running, however slow the machine is, and then let it end.

import { globToRegExp } from './faults.js';

interface Parked {
  vmName: string;
  finish: () => void;
}

export class ProvisioningHolds {
  private readonly globs = new Set<string>();
  private parked: Parked[] = [];

  hold(vmNameGlob: string): void {
    this.globs.add(vmNameGlob);
  }

  /** Ends a hold; the creations it kept past their latency end now. */
  release(vmNameGlob: string): void {
    this.globs.delete(vmNameGlob);
    const parked = this.parked;
    this.parked = [];
    for (const p of parked) this.finishWhenReleased(p.vmName, p.finish);
  }

  /** Runs `finish` now, or later when the VM is no longer held. */
  finishWhenReleased(vmName: string, finish: () => void): void {
    if (this.isHeld(vmName)) this.parked.push({ vmName, finish });
    else finish();
  }

  clear(): void {
    this.globs.clear();
    this.parked = [];
  }

  private isHeld(vmName: string): boolean {
    return [...this.globs].some((glob) => globToRegExp(glob).test(vmName));
  }
}
