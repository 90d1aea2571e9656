/** Thrown when another live process holds the session's writer lease. */
export class SessionLockedError extends Error {
  constructor(
    readonly sessionId: string,
    readonly holderPid: number,
  ) {
    super(`session ${sessionId} is open for writing in another process (pid ${holderPid})`);
    this.name = 'SessionLockedError';
  }
}

/** Thrown when a session id is not in the home. */
export class SessionNotFoundError extends Error {
  constructor(readonly sessionId: string) {
    super(`no session ${sessionId}`);
    this.name = 'SessionNotFoundError';
  }
}

/** Thrown by create/importEvents when the home already has a session with that id. Nothing was written. */
export class SessionExistsError extends Error {
  constructor(readonly sessionId: string) {
    super(`a session ${sessionId} already exists (import without keeping the id to get a new one)`);
    this.name = 'SessionExistsError';
  }
}
