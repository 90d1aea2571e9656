import { describe, expect, it } from 'vitest';
import { INDEX_MIGRATIONS } from '../../../../../main/store/schema.js';
import { migratedTo, schemaNames } from '../support.js';

describe('index migration 003 writer_leases', () => {
  it('creates one lease row per session, removed with its session', () => {
    const db = migratedTo(INDEX_MIGRATIONS, 3);
    db.pragma('foreign_keys = ON');
    expect(db.pragma('user_version', { simple: true })).toBe(3);
    expect(schemaNames(db, 'table')).toContain('writer_leases');

    db.prepare(
      "INSERT INTO sessions (id, project_folder, provider, model, created_at, updated_at) VALUES ('s', '/p', 'openai', 'm', 't', 't')",
    ).run();
    const lease = db.prepare(
      "INSERT INTO writer_leases (session_id, pid, hostname, acquired_at) VALUES (?, 1, 'h', 't')",
    );
    lease.run('s');
    expect(() => lease.run('s')).toThrow(/UNIQUE|PRIMARY KEY/);
    expect(() => lease.run('no-such-session')).toThrow(/FOREIGN KEY/);

    db.prepare("DELETE FROM sessions WHERE id = 's'").run();
    expect(db.prepare('SELECT count(*) FROM writer_leases').pluck().get()).toBe(0);
    db.close();
  });
});
