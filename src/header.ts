/**
 * The head of a report: the function, its platforms and the time each step took
 * (and the hardware it was compiled for, with whether it fits);
 * the failure box when a step raised; the placeholder of a stage that could not be
 * made. Pure functions from report data to DOM (text only).
 */
import { h } from './dom';
import { IReport, IStageInfo, STEPS, formatMs } from './model';

/** `f · for cpu · trace 1.2 ms · lower 3.4 ms · compile 5.6 ms` */
export function header(report: IReport): HTMLElement {
  // In the order the steps run (saved notebooks sort keys alphabetically).
  const rank = (k: string) =>
    STEPS.includes(k) ? STEPS.indexOf(k) : STEPS.length;
  const steps = Object.entries(report.timings).sort(
    (a, b) => rank(a[0]) - rank(b[0])
  );
  const timings = steps.map(([step, s]) =>
    h(
      'span',
      { class: 'olympus-timing', 'data-olympus-timing': step },
      `${step} ${formatMs(s)}`
    )
  );
  return h(
    'div',
    { class: 'olympus-head' },
    h('span', { class: 'olympus-name' }, report.name),
    h(
      'span',
      {
        class: 'olympus-meta',
        'data-olympus-platforms': report.platforms.join(',')
      },
      report.platforms.length ? `for ${report.platforms.join(', ')}` : ''
    ),
    ...timings,
    ...(report.target?.lines ?? []).map(line =>
      h(
        'div',
        {
          class: 'olympus-target',
          'data-olympus-target': report.target?.name ?? ''
        },
        line
      )
    )
  );
}

/** The report's notes (e.g. that the output was capped), as text; null if none. */
export function notesBox(report: IReport): HTMLElement | null {
  if (!report.notes.length) {
    return null;
  }
  return h(
    'div',
    { class: 'olympus-notes' },
    ...report.notes.map(n => h('p', { class: 'olympus-note' }, n))
  );
}

/** The step that raised, the exception, and the user's frame. */
export function failureBox(report: IReport): HTMLElement | null {
  const f = report.failure;
  if (!f) {
    return null;
  }
  const frames = f.frames ?? [];
  const frame = frames.length ? frames[frames.length - 1] : null;
  const stage = f.stage
    ? f.stage.charAt(0).toUpperCase() + f.stage.slice(1)
    : 'A step';
  return h(
    'div',
    {
      class: 'olympus-failure',
      'data-olympus-failure': f.stage,
      role: 'alert'
    },
    h(
      'p',
      null,
      h('strong', null, `${stage} failed`),
      ': ',
      h('code', null, f.type)
    ),
    frame &&
      h(
        'p',
        null,
        'at ',
        h('code', null, `${frame.file}:${frame.line}`),
        ' in ',
        h('code', null, frame.function)
      ),
    frame && frame.code
      ? h('pre', { class: 'olympus-failure-code' }, frame.code)
      : null,
    h('pre', { class: 'olympus-failure-message' }, f.message)
  );
}

/** `Not available: <reason>.` for a stage the user asked for. */
export function unavailableBox(stage: IStageInfo, reason: string): HTMLElement {
  return h(
    'p',
    {
      class: 'olympus-unavailable',
      'data-olympus-unavailable': stage.name,
      'aria-label': `${stage.title}: not available: ${reason}`
    },
    'Not available: ',
    h('span', { class: 'olympus-reason' }, reason),
    '.'
  );
}

/**
 * A stage this viewer has no view for (a kind, or an analysis, newer than it):
 * say so, and name the stage.
 */
export function unsupportedBox(stage: IStageInfo): HTMLElement {
  const what =
    stage.kind === 'analysis'
      ? `the ${JSON.stringify(stage.name)} analysis`
      : `a stage of kind ${JSON.stringify(stage.kind)}`;
  return h(
    'p',
    {
      class: 'olympus-unavailable olympus-unsupported',
      'data-olympus-unsupported': stage.name
    },
    `This report holds ${what}; this viewer does not know how to show it. `,
    'Update the olympus package (which ships this viewer) to see it.'
  );
}

/** A report this viewer cannot read: say why, in words. */
export function errorBox(message: string): HTMLElement {
  return h(
    'div',
    { class: 'olympus-failure', 'data-olympus-error': '1', role: 'alert' },
    message
  );
}
