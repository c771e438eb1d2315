export * from './roles.js';
export * from './types.js';
