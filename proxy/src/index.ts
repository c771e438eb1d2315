export { startProxy, type Proxy } from './proxy.js';
export { UwsLoadError, loadUws } from './http/uws.js';
