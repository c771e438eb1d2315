export * from './roles.js';
export * from './types.js';
export * from './budgets.js';
