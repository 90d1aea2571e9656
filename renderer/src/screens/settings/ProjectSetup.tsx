import { useCallback, useEffect, useState, type JSX } from 'react';
import type { ChannelOutput } from '../../../../main/ipc/contract.js';
import { call, describeError } from '../../api/call.js';
import { keel } from '../../api/keel.js';

type Report = ChannelOutput<'setup.trust'>['report'];
type Rules = ChannelOutput<'rules.list'>;
type Action = 'allow' | 'ask' | 'deny';

/**
 * A project's setup files (issue 30) as `keel trust` shows them: each `.claude/`, `.agents/`, `.keel/` or
 * `.codex/` file new, changed, approved or removed, with its diff since the last approval and an Approve
 * button for exactly what is shown; then the permission rules in effect with where each came from, the
 * project's rules still waiting for approval, and Keel's own rules (add, remove), as `keel rules` does.
 */
export function ProjectSetup(): JSX.Element {
  const [projects, setProjects] = useState<string[]>([]);
  const [folder, setFolder] = useState('');
  const [report, setReport] = useState<Report | undefined>();
  const [rules, setRules] = useState<Rules | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const [newRule, setNewRule] = useState('');
  const [newAction, setNewAction] = useState<Action>('deny');

  useEffect(() => {
    let live = true;
    call(keel().projects.recent({}))
      .then(({ projects: recent }) => {
        if (!live) return;
        const folders = recent.filter((p) => p.exists).map((p) => p.folder);
        setProjects(folders);
        setFolder((current) => current || (folders[0] ?? ''));
      })
      .catch((failure: unknown) => live && setError(describeError(failure)));
    return () => {
      live = false;
    };
  }, []);

  const load = useCallback(async (target: string) => {
    if (!target) return;
    const [trust, listed] = await Promise.all([
      call(keel().setup.trust({ folder: target })),
      call(keel().rules.list({ folder: target })),
    ]);
    setReport(trust.report);
    setRules(listed);
  }, []);

  useEffect(() => {
    setReport(undefined);
    setRules(undefined);
    load(folder).catch((failure: unknown) => setError(describeError(failure)));
  }, [folder, load]);

  const run = async (step: () => Promise<unknown>) => {
    setBusy(true);
    setError(undefined);
    try {
      await step();
      await load(folder);
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setBusy(false);
    }
  };

  const approve = () =>
    run(async () => {
      if (!report) return;
      const hashes = Object.fromEntries(
        report.entries.filter((entry) => entry.state !== 'removed').map((entry) => [entry.path, entry.hash]),
      );
      await call(keel().setup.approve({ folder, hashes }));
    });

  return (
    <section className="project-setup" aria-labelledby="setup-title">
      <h2 id="setup-title">Project setup and permission rules</h2>
      <p className="hint">
        Settings, commands, agents, skills and hooks from .claude/, .agents/, .keel/ and .codex/. Your home’s
        files count as they are; a project’s count once you approve them here (or with keel trust --approve);
        a changed file asks again.
      </p>
      {projects.length > 0 ? (
        <label>
          Project{' '}
          <select
            aria-label="Setup project folder"
            value={folder}
            onChange={(event) => setFolder(event.target.value)}
          >
            {projects.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </label>
      ) : (
        <p>No recent project.</p>
      )}
      {error ? (
        <p className="form-error" role="alert">
          {error}
        </p>
      ) : null}
      {report ? (
        <article aria-label="Project setup files">
          <h3>
            Files{' '}
            <span className={`tag ${report.status === 'untrusted' ? 'tag-warning' : 'tag-ok'}`}>
              {report.status === 'none' ? 'none' : report.status === 'trusted' ? 'approved' : 'not approved'}
            </span>
          </h3>
          <ul>
            {report.entries.map((entry) => (
              <li key={entry.path}>
                <code>{entry.path}</code> <span className="hint">{entry.kind}</span>{' '}
                <span>{entry.state}</span>
                {entry.state !== 'approved' && entry.diff ? (
                  <pre className="setup-diff">{entry.diff}</pre>
                ) : null}
              </li>
            ))}
            {report.problems.map((problem) => (
              <li key={`${problem.path}:${problem.line}`} className="form-error">
                ignored {problem.path}:{problem.line}: {problem.message}
              </li>
            ))}
          </ul>
          {report.status === 'untrusted' ? (
            <button type="button" onClick={() => void approve()} disabled={busy}>
              {busy ? 'Approving…' : 'Approve these files'}
            </button>
          ) : null}
          {report.status === 'trusted' ? (
            <button
              type="button"
              onClick={() => void run(() => call(keel().setup.revoke({ folder })))}
              disabled={busy}
            >
              Revoke approval
            </button>
          ) : null}
        </article>
      ) : null}
      {rules ? (
        <article aria-label="Permission rules">
          <h3>Permission rules</h3>
          {rules.rules.length === 0 ? <p>No permission rules in effect.</p> : null}
          <ul>
            {rules.rules.map((rule) => {
              const kept = rule.source.startsWith('keel');
              return (
                <li key={`${rule.action} ${rule.rule} ${rule.source}`}>
                  <strong>{rule.action}</strong> <code>{rule.rule}</code>{' '}
                  <span className="hint">{rule.source}</span>
                  {kept ? (
                    <>
                      {' '}
                      <button
                        type="button"
                        aria-label={`Remove ${rule.action} ${rule.rule}`}
                        disabled={busy}
                        onClick={() =>
                          void run(() =>
                            call(keel().rules.remove({ folder, rule: rule.rule, action: rule.action })),
                          )
                        }
                      >
                        Remove
                      </button>
                    </>
                  ) : null}
                </li>
              );
            })}
            {rules.untrusted.map((rule) => (
              <li key={`untrusted ${rule.action} ${rule.rule} ${rule.source}`} className="hint">
                {rule.action} <code>{rule.rule}</code> {rule.source} (not in effect until approved)
              </li>
            ))}
          </ul>
          <form
            onSubmit={(event) => {
              event.preventDefault();
              void run(async () => {
                await call(keel().rules.add({ folder, action: newAction, rule: newRule }));
                setNewRule('');
              });
            }}
          >
            <select
              aria-label="Rule action"
              value={newAction}
              onChange={(event) => setNewAction(event.target.value as Action)}
            >
              <option value="allow">allow</option>
              <option value="ask">ask</option>
              <option value="deny">deny</option>
            </select>{' '}
            <input
              aria-label="New rule"
              placeholder="Bash(git push:*)"
              value={newRule}
              onChange={(event) => setNewRule(event.target.value)}
            />{' '}
            <button type="submit" disabled={busy || newRule.trim() === ''}>
              Add rule
            </button>
          </form>
        </article>
      ) : null}
    </section>
  );
}
