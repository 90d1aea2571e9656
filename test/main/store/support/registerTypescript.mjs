// `node --import <this file> script.ts` runs a TypeScript script of this repo (see typescriptHooks.mjs).
import { register } from 'node:module';

register('./typescriptHooks.mjs', import.meta.url);
