// A cluster's Kubernetes version as the rules that change with it read it: its major and minor numbers.
// Pure.

/** [major, minor] of a Kubernetes version, or undefined when it is not one. */
export function minorVersion(kubernetesVersion: string): [number, number] | undefined {
  const match = /^v?(\d+)\.(\d+)(\.\d+)?([-+].*)?$/.exec(kubernetesVersion.trim());
  if (!match) return undefined;
  return [Number(match[1]), Number(match[2])];
}

/** Whether `version` is at least major.minor. */
export function atLeast(version: readonly [number, number], major: number, minor: number): boolean {
  return version[0] > major || (version[0] === major && version[1] >= minor);
}
