// The scheduling simulation's entry point and its plain-data types.
export { solve } from './solve.js';
export { MAX_INSTANCE_TYPES } from './simulation.js';
export type * from './types.js';
