import { useEffect, type JSX } from 'react';
import { call } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import { useQuery } from '../../api/useQuery.js';

/**
 * Issue 34: the model of a session on a local model, chosen among the GGUF files in Keel's home (the catalogue's
 * downloaded models by id, other .gguf files there by name); the session is pinned to the file and its hash by
 * main. With none downloaded it says where to get one. Picks the first when nothing is chosen yet.
 */
export function LocalModelField({
  idPrefix,
  model,
  onModel,
}: {
  idPrefix: string;
  model: string;
  onModel: (model: string) => void;
}): JSX.Element {
  const listed = useQuery(() => call(keel().models.localList({})), []);
  const choices = [
    ...(listed.data?.models ?? [])
      .filter((entry) => entry.downloaded)
      .map((entry) => ({ value: entry.id, label: `${entry.name} (${entry.fileName})` })),
    ...(listed.data?.otherFiles ?? []).map((file) => ({ value: file, label: file })),
  ];
  const first = choices[0]?.value;
  const known = choices.some((choice) => choice.value === model);

  useEffect(() => {
    if (first !== undefined && !known) onModel(first);
  }, [first, known, onModel]);

  return (
    <div className="field">
      <label htmlFor={`${idPrefix}-model`}>Model</label>
      {listed.error ? (
        <p className="form-error" role="alert">
          {listed.error}
        </p>
      ) : choices.length === 0 ? (
        <p className="hint" role="status">
          {listed.loading
            ? 'Looking for downloaded models…'
            : 'No local model is downloaded yet: download one from the first-run screen or with keel models local pull.'}
        </p>
      ) : (
        <select id={`${idPrefix}-model`} value={model} onChange={(event) => onModel(event.target.value)}>
          {choices.map((choice) => (
            <option key={choice.value} value={choice.value}>
              {choice.label}
            </option>
          ))}
        </select>
      )}
    </div>
  );
}
