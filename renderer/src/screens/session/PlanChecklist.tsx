import type { JSX } from 'react';
import type { PlanStep, PlanStepStatus } from './plan.js';
import './plan.css';

const MARKS: Record<PlanStepStatus, string> = { completed: '✓', in_progress: '▸', pending: '○' };
const LABELS: Record<PlanStepStatus, string> = {
  completed: 'completed',
  in_progress: 'in progress',
  pending: 'pending',
};

/** The steps of a plan as a compact checklist; the step in progress shows its active form ("Adding…"). */
export function PlanSteps({ steps, label }: { steps: readonly PlanStep[]; label: string }): JSX.Element {
  return (
    <ol className="plan-steps" aria-label={label}>
      {steps.map((step, index) => (
        <li key={index} className={`plan-step plan-${step.status}`} data-status={step.status}>
          <span className="plan-mark" aria-hidden="true">
            {MARKS[step.status]}
          </span>
          <span className="plan-text">
            {step.status === 'in_progress' ? (step.activeForm ?? step.content) : step.content}
          </span>
          <span className="visually-hidden"> ({LABELS[step.status]})</span>
        </li>
      ))}
    </ol>
  );
}

/**
 * The model's current plan, pinned above the composer as one line (the count and the step in progress); the
 * steps open on demand, so the plan never takes the conversation's room.
 */
export function PlanChecklist({ steps }: { steps: readonly PlanStep[] }): JSX.Element {
  const done = steps.filter((step) => step.status === 'completed').length;
  const current = steps.find((step) => step.status === 'in_progress');
  return (
    <details className="plan-checklist" aria-label="Plan">
      <summary>
        <span className="plan-count">
          Plan · {done} of {steps.length} done
        </span>
        {current ? <span className="plan-current"> · {current.activeForm ?? current.content}</span> : null}
      </summary>
      <PlanSteps steps={steps} label="Plan steps" />
    </details>
  );
}
