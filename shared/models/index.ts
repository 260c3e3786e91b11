export * from './kube.js';
export * from './karpenter.js';
export * from './aks-node-class.js';
