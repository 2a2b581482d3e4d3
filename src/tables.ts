/**
 * The analyses as tables: cost before vs after optimization, and memory with a
 * bar chart of its breakdown. Pure functions from report data to DOM (text only).
 */
import { costKeys, costName, formatCost, formatNumber } from './costnames';
import { h, svg } from './dom';
import { IReport, formatBytes } from './model';

export { formatNumber };

/** `+12%` from `before` to `after`, or ''. */
export function change(
  before: number | undefined,
  after: number | undefined
): string {
  if (before === undefined || before === 0 || after === undefined) {
    return '';
  }
  const pct = Math.round(((after - before) / before) * 100);
  return `${pct >= 0 ? '+' : ''}${pct}%`;
}

/** A column heading, with what it means on hover. */
type Heading = string | [string, string];

function table(
  name: string,
  caption: string,
  head: Heading[],
  rows: ((string | Node)[] | HTMLTableRowElement)[]
): HTMLTableElement {
  return h(
    'table',
    { class: 'olympus-table', 'data-olympus-table': name },
    h('caption', null, caption),
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        ...head.map(c =>
          typeof c === 'string'
            ? h('th', { scope: 'col' }, c)
            : h('th', { scope: 'col', title: c[1] }, c[0])
        )
      )
    ),
    h(
      'tbody',
      null,
      ...rows.map(row =>
        Array.isArray(row)
          ? h(
              'tr',
              null,
              h('th', { scope: 'row' }, row[0]),
              ...row.slice(1).map(c => h('td', null, c))
            )
          : row
      )
    )
  );
}

/**
 * The notes of the cost figures that are no figures (the bundle's
 * `analyses.cost.marks`), in table order, lowered before compiled: note 1 first.
 */
function costMarks(
  report: IReport
): { key: string; column: 'lowered' | 'compiled'; note: string }[] {
  const { marks } = report.analyses.cost;
  return costKeys(report).flatMap(key =>
    (['lowered', 'compiled'] as const)
      .filter(column => typeof marks[column][key] === 'string')
      .map(column => ({ key, column, note: marks[column][key] }))
  );
}

/**
 * Cost estimates before (lowered) and after (compiled) optimization, with the
 * change: each figure named for people with its unit, XLA's key beside it (small),
 * and what it counts on hover.
 */
export function costTable(report: IReport): HTMLTableElement {
  const before = report.analyses.cost.lowered ?? {};
  const after = report.analyses.cost.compiled ?? {};
  const notes = costMarks(report);
  // A figure that is no figure, as it came, with the number of its note (below).
  const figure = (
    k: string,
    column: 'lowered' | 'compiled',
    value: number | undefined,
    unit: string
  ) => {
    const at = notes.findIndex(n => n.key === k && n.column === column);
    return at < 0
      ? h('td', null, formatCost(value, unit))
      : h(
          'td',
          { 'data-olympus-mark': String(at + 1) },
          formatCost(value, unit),
          ' ',
          h('sup', { title: notes[at].note }, `note ${at + 1}`)
        );
  };
  const rows = costKeys(report).map(k => {
    const name = costName(report, k);
    const marked = notes.some(n => n.key === k);
    return h(
      'tr',
      { 'data-key': k },
      h(
        'th',
        { scope: 'row', title: `${name.explanation}\nXLA key: ${k}` },
        name.label,
        name.known
          ? h('small', { class: 'olympus-meta' }, ' ', h('code', null, k))
          : null
      ),
      figure(k, 'lowered', before[k], name.unit),
      figure(k, 'compiled', after[k], name.unit),
      h('td', null, marked ? '' : change(before[k], after[k]))
    );
  });
  return table(
    'cost',
    'The compiler’s cost estimates',
    [
      'figure',
      ['before optimization (lowered)', report.analyses.cost.columns.lowered],
      ['after optimization (compiled)', report.analyses.cost.columns.compiled],
      'change'
    ],
    rows
  );
}

/**
 * What the cost table shows, visible under it (no hover needed): lowered versus
 * compiled, and one line per kind of figure.
 */
export function costLegendBox(report: IReport): HTMLElement {
  return h(
    'div',
    { class: 'olympus-notes', 'data-olympus-legend': 'cost' },
    ...costMarks(report).map((m, k) =>
      h(
        'p',
        { 'data-olympus-mark-note': String(k + 1) },
        h('b', null, `note ${k + 1}`),
        `: ${costName(report, m.key).label} (${m.column}) is ${m.note}`
      )
    ),
    report.analyses.cost.note ? h('p', null, report.analyses.cost.note) : null,
    ...report.analyses.cost.legend.map(([label, text]) =>
      h('p', null, h('b', null, label), ': ', text)
    )
  );
}

/** The memory rows: key, label. Host rows only when they hold something. */
export function memoryRows(mem: { [k: string]: number }): [string, string][] {
  const rows: [string, string][] = [
    ['argument_size_in_bytes', 'arguments'],
    ['output_size_in_bytes', 'outputs'],
    ['temp_size_in_bytes', 'temporaries'],
    ['alias_size_in_bytes', 'aliased (outputs reusing arguments)'],
    ['generated_code_size_in_bytes', 'generated code'],
    ['peak_memory_in_bytes', 'peak (memory_analysis())']
  ];
  for (const k of Object.keys(mem)) {
    if (k.startsWith('host_') && mem[k]) {
      rows.push([k, k.replace('_size_in_bytes', '').replace(/_/g, ' ')]);
    }
  }
  return rows;
}

/** The memory table's key of the live-range peak (not one of XLA's keys). */
export const LIVE_PEAK_KEY = 'olympus:live_peak';

/**
 * The memory figures and rows of a report: XLA's (`memory_analysis()`), and where
 * the costs stage read it, the live-range peak of the buffer assignment
 * (temporaries included) just before `memory_analysis()`'s peak, each named.
 */
export function memoryFigures(report: IReport): {
  mem: { [k: string]: number };
  rows: [string, string][];
} {
  const mem: { [k: string]: number } = { ...(report.analyses.memory ?? {}) };
  const rows = memoryRows(mem);
  const live = report.costs?.peak?.bytes;
  if (live !== undefined) {
    const at = rows.findIndex(([k]) => k === 'peak_memory_in_bytes');
    rows.splice(at < 0 ? rows.length : at, 0, [
      LIVE_PEAK_KEY,
      'peak live (buffer assignment)'
    ]);
    mem[LIVE_PEAK_KEY] = live;
  }
  return { mem, rows };
}

/**
 * The peak in words, each figure named, as the Python summary says it
 * (`olympus_jupyter/report/peak_words.py`): the live-range peak of the buffer
 * assignment then `memory_analysis()`'s, or `memory_analysis()`'s alone and why;
 * null when neither is known.
 */
export function peakSummary(report: IReport): string | null {
  const live = report.costs?.peak?.bytes;
  let ma: number | null | undefined =
    report.analyses.memory?.peak_memory_in_bytes;
  if (ma === undefined || ma === null) {
    ma = report.costs?.peak?.memory_analysis_peak;
  }
  const analysed =
    typeof ma === 'number' ? `${formatBytes(ma)} memory_analysis()` : null;
  if (live !== undefined) {
    return [`${formatBytes(live)} live (buffer assignment)`, analysed]
      .filter(p => p)
      .join(' · ');
  }
  if (analysed === null) {
    return null;
  }
  const why = report.costs
    ? `the live-range peak is unavailable: ${report.costs.unavailable.peak ?? 'not known'}`
    : 'the live-range peak of the buffer assignment needs the costs stage: costs=True';
  return `${analysed} (${why})`;
}

/** Memory of the compiled program, in bytes and readable units. */
export function memoryTable(report: IReport): HTMLTableElement {
  const { mem, rows: shown } = memoryFigures(report);
  const rows = shown.map(([k, label]) => [
    label,
    formatBytes(mem[k] ?? 0),
    formatNumber(mem[k] ?? 0)
  ]);
  return table(
    'memory',
    'Memory of the compiled program',
    ['memory', 'size', 'bytes'],
    rows
  );
}

/** A horizontal bar per memory row (SVG, scaled to the largest). */
export function memoryChart(report: IReport): SVGSVGElement {
  const { mem, rows } = memoryFigures(report);
  const biggest = Math.max(1, ...rows.map(([k]) => mem[k] ?? 0));
  const rowHeight = 22;
  const labelWidth = 250;
  const barWidth = 300;
  const valueWidth = 90;
  const width = labelWidth + barWidth + valueWidth;
  const height = rows.length * rowHeight + 4;
  const chart = svg(
    'svg',
    {
      class: 'olympus-chart',
      'data-olympus-chart': 'memory',
      viewBox: `0 0 ${width} ${height}`,
      width,
      height,
      role: 'img',
      'aria-label':
        'Memory breakdown: ' +
        rows.map(([k, l]) => `${l} ${formatBytes(mem[k] ?? 0)}`).join(', ')
    },
    svg('title', null, 'Memory breakdown')
  );
  rows.forEach(([k, label], i) => {
    const v = mem[k] ?? 0;
    const y = i * rowHeight + 2;
    const w = v ? Math.max(1, (v / biggest) * barWidth) : 0;
    const cls =
      k === 'peak_memory_in_bytes' || k === LIVE_PEAK_KEY
        ? 'olympus-bar olympus-bar-peak'
        : 'olympus-bar';
    chart.appendChild(
      svg(
        'text',
        {
          x: labelWidth - 8,
          y: y + rowHeight / 2,
          class: 'olympus-chart-label',
          'text-anchor': 'end',
          'dominant-baseline': 'middle'
        },
        label
      )
    );
    chart.appendChild(
      svg(
        'rect',
        {
          x: labelWidth,
          y: y + 3,
          width: w,
          height: rowHeight - 8,
          rx: 2,
          class: cls,
          'data-key': k
        },
        svg('title', null, `${label}: ${formatBytes(v)}`)
      )
    );
    chart.appendChild(
      svg(
        'text',
        {
          x: labelWidth + w + 6,
          y: y + rowHeight / 2,
          class: 'olympus-chart-value',
          'dominant-baseline': 'middle'
        },
        formatBytes(v)
      )
    );
  });
  return chart;
}
