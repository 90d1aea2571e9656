// The refusals of the setup a project brings, light to load: every keel command's error mapping imports them
// (through core/harness/errors.ts) without loading the rules or the trust code.

/** A refused trust step; the message says what to do. */
export class SetupTrustError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SetupTrustError';
  }
}

/** A refused rules step (`keel rules`, the settings screen); the message says what to do. */
export class RulesError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RulesError';
  }
}
