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

/** The model's current plan, pinned above the composer; collapsible, open by default. */
export function PlanChecklist({ steps }: { steps: readonly PlanStep[] }): JSX.Element {
  const done = steps.filter((step) => step.status === 'completed').length;
  return (
    <details className="plan-checklist" open aria-label="Plan">
      <summary>
        Plan · {done} of {steps.length} done
      </summary>
      <PlanSteps steps={steps} label="Plan steps" />
    </details>
  );
}
