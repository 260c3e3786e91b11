// The event bridge's public surface, for bridge/main.ts, the local stack and tests.
export type { BridgeHandle, BridgeOptions, BridgeStats } from './bridge.js';
export { startBridge } from './bridge.js';
export type { BridgeConfig, KubernetesTarget, QueueTarget } from './config.js';
export { BridgeConfigError, BridgeEnv, bridgeDefaults, bridgeUsage, loadBridgeConfig } from './config.js';
export type { BackoffPolicy } from './backoff.js';
