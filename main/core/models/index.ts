export * from './choose.js';
export * from './served.js';
export * from './view.js';
export * from './effort.js';
