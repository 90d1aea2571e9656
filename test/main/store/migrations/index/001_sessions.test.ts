import { describe, expect, it } from 'vitest';
import { INDEX_MIGRATIONS } from '../../../../../main/store/schema.js';
import { migratedTo, queryPlan, schemaNames } from '../support.js';

const insert = `INSERT INTO sessions (id, project_folder, provider, model, created_at, updated_at, status)
  VALUES (?, '/p', 'openai', 'm', '2026-01-01T00:00:00.000Z', ?, ?)`;

describe('index migration 001 sessions', () => {
  it('creates the sessions table with its list indexes and sets user_version 1', () => {
    const db = migratedTo(INDEX_MIGRATIONS, 1);
    expect(db.pragma('user_version', { simple: true })).toBe(1);
    expect(schemaNames(db, 'table')).toContain('sessions');
    expect(schemaNames(db, 'index')).toEqual([
      'sessions_by_parent',
      'sessions_by_project',
      'sessions_by_updated',
    ]);
    const columns = db
      .prepare<[], { name: string }>('PRAGMA table_info(sessions)')
      .all()
      .map((c) => c.name);
    expect(columns).toEqual([
      'num',
      'id',
      'title',
      'project_folder',
      'provider',
      'model',
      'status',
      'parent_id',
      'created_at',
      'updated_at',
      'event_count',
      'last_seq',
      'archived',
    ]);
    db.close();
  });

  it('accepts only the known statuses and one row per id', () => {
    const db = migratedTo(INDEX_MIGRATIONS, 1);
    db.prepare(insert).run('a', '2026-01-01T00:00:00.000Z', 'awaiting_approval');
    expect(() => db.prepare(insert).run('b', '2026-01-01T00:00:00.000Z', 'sleeping')).toThrow(/CHECK/);
    expect(() => db.prepare(insert).run('a', '2026-01-01T00:00:00.000Z', 'idle')).toThrow(/UNIQUE/);
    db.close();
  });

  it('never reuses the number of a removed session', () => {
    const db = migratedTo(INDEX_MIGRATIONS, 1);
    db.prepare(insert).run('a', 't', 'idle');
    db.prepare(insert).run('b', 't', 'idle');
    db.prepare("DELETE FROM sessions WHERE id = 'b'").run();
    db.prepare(insert).run('c', 't', 'idle');
    expect(db.prepare("SELECT num FROM sessions WHERE id = 'c'").pluck().get()).toBe(3);
    db.close();
  });

  it('serves the newest-first page from an index, without sorting the table', () => {
    const db = migratedTo(INDEX_MIGRATIONS, 1);
    const plan = queryPlan(
      db,
      'SELECT id FROM sessions WHERE (? = 1 OR archived = 0) ORDER BY updated_at DESC, num DESC LIMIT 50',
      0,
    );
    expect(plan).toContain('sessions_by_updated');
    expect(plan).not.toContain('TEMP B-TREE');
    const projectPlan = queryPlan(
      db,
      'SELECT id FROM sessions WHERE project_folder = ? ORDER BY updated_at DESC, num DESC LIMIT 50',
      '/p',
    );
    expect(projectPlan).toContain('sessions_by_project');
    expect(projectPlan).not.toContain('TEMP B-TREE');
    db.close();
  });
});
