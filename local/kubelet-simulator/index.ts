// Public entry point of the kubelet simulator (see README.md).
export {
  startKubeletSimulator,
  type KubeletSimulator,
  type KubeletSimulatorOptions,
  type KubeletSimulatorStats,
  type StartupTaintRemoval,
} from './simulator.js';
export { nodeResources, vmHardware, type NodeResources, type VmHardware } from './node-resources.js';
