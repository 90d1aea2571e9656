/** The projection: events of one session -> a provider-neutral payload. Pure: no I/O, no clock. */
export * from '../../common/payload.js';
export * from './projectPayload.js';
export * from './instructions.js';
export * from './validate.js';
export * from './payloadText.js';
export * from './plan.js';
