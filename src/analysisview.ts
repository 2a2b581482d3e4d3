/**
 * The analyses panels (stages of kind `analysis`), by the analysis's name, in one
 * table (`ANALYSES`): the cost analysis (before vs after optimization, each
 * figure named for people, with a legend) and memory (a table and a chart of its
 * breakdown), each with why it has nothing to show and how two reports of it are
 * compared. An analysis this viewer does not know gets a note saying so. They do
 * not take part in line linking.
 */
import { costKeys, costName, formatCost } from './costnames';
import { h } from './dom';
import { unsupportedBox } from './header';
import { IDiff, IReport, IStageInfo, formatBytes } from './model';
import { IPanelView } from './panel';
import {
  change,
  costLegendBox,
  costTable,
  memoryChart,
  memoryRows,
  memoryTable,
  peakSummary
} from './tables';

/** One analysis: its panel's content, why it is unavailable, two reports compared. */
export interface IAnalysis {
  view(report: IReport): HTMLElement;
  unavailable(report: IReport, given: string | undefined): string | null;
  compare(diff: IDiff): HTMLElement;
  /** The panel heading's meta (none when absent). */
  meta?(report: IReport): string[];
}

/**
 * Why a CUDA program's report has no cost analysis: as Python's
 * `olympus.gpu_costs.NO_COST_ANALYSIS` says it in the text and static HTML.
 */
const NO_CUDA_COST_ANALYSIS =
  'a CUDA compile gives no cost_analysis() (None, before and after optimization); ' +
  "the costs stage counts the program with XLA's HLO cost analysis instead";

/**
 * Why a CUDA program's cost table has figures before optimization and none after
 * (JAX 0.12): as Python's `olympus.gpu_costs.NO_COMPILED_COST_ANALYSIS` says it.
 */
const NO_CUDA_COMPILED_COST_ANALYSIS =
  'a CUDA compile gives no cost_analysis() after optimization (None); the costs ' +
  "stage counts the optimized program with XLA's HLO cost analysis instead";

const costAnalysis: IAnalysis = {
  view: report => {
    const c = report.analyses.cost;
    const noCompiled =
      c.lowered && !c.compiled && report.platforms.includes('cuda');
    return h(
      'div',
      { class: 'olympus-table-wrap' },
      costTable(report),
      noCompiled
        ? h(
            'p',
            { class: 'olympus-notes' },
            `after optimization (compiled): unavailable (${NO_CUDA_COMPILED_COST_ANALYSIS})`
          )
        : null,
      costLegendBox(report)
    );
  },
  unavailable: (report, given) => {
    const c = report.analyses.cost;
    return c.lowered || c.compiled
      ? null
      : (given ??
          (report.platforms.includes('cuda')
            ? NO_CUDA_COST_ANALYSIS
            : 'this backend reports no cost analysis'));
  },
  compare: diff => compareTable(diff, 'cost')
};

/** The analyses this viewer shows, by stage name. */
export const ANALYSES: Readonly<Record<string, IAnalysis>> = {
  cost_analysis: costAnalysis,
  memory: {
    view: report =>
      h(
        'div',
        { class: 'olympus-memory' },
        h('div', { class: 'olympus-table-wrap' }, memoryTable(report)),
        h('div', { class: 'olympus-chart-wrap' }, memoryChart(report))
      ),
    unavailable: (report, given) =>
      report.analyses.memory
        ? null
        : (given ?? 'this backend reports no memory analysis'),
    compare: diff => compareTable(diff, 'memory'),
    meta: report => {
      const words = peakSummary(report);
      return words ? [`peak ${words}`] : [];
    }
  }
};

/** The analysis called `name`, or null when this viewer does not know it. */
export function analysisOf(name: string): IAnalysis | null {
  return Object.prototype.hasOwnProperty.call(ANALYSES, name)
    ? ANALYSES[name]
    : null;
}

export class AnalysisView implements IPanelView {
  constructor(
    private readonly info: IStageInfo,
    private readonly report: IReport,
    private readonly parent: HTMLElement
  ) {
    this.stage = info.name;
  }

  readonly stage: string;

  show(): void {
    if (this._built) {
      return;
    }
    this._built = true;
    const analysis = analysisOf(this.stage);
    this.parent.appendChild(
      analysis ? analysis.view(this.report) : unsupportedBox(this.info)
    );
  }

  apply(): void {
    // Analyses are about the whole program: nothing to light up.
  }

  focus(): void {
    const table = this.parent.querySelector('table');
    if (table) {
      table.tabIndex = -1;
      table.focus();
    }
  }

  dispose(): void {
    this.parent.textContent = '';
  }

  private _built = false;
}

const own = (o: object, k: string) =>
  Object.prototype.hasOwnProperty.call(o, k);

/** Two reports' analyses, metric by metric. */
function compareTable(diff: IDiff, stage: 'cost' | 'memory'): HTMLTableElement {
  const [a, b] = diff.labels;
  const rows: string[][] = [];
  if (stage === 'cost') {
    const ca =
      diff.before.analyses.cost.compiled ??
      diff.before.analyses.cost.lowered ??
      {};
    const cb =
      diff.after.analyses.cost.compiled ??
      diff.after.analyses.cost.lowered ??
      {};
    const keys = [
      ...new Set([...costKeys(diff.before), ...costKeys(diff.after)])
    ].filter(k => own(ca, k) || own(cb, k));
    for (const k of keys) {
      const name = diff.before.analyses.cost.names.has(k)
        ? costName(diff.before, k)
        : costName(diff.after, k);
      rows.push([
        name.label,
        formatCost(own(ca, k) ? ca[k] : null, name.unit),
        formatCost(own(cb, k) ? cb[k] : null, name.unit),
        change(own(ca, k) ? ca[k] : undefined, own(cb, k) ? cb[k] : undefined)
      ]);
    }
  } else {
    const ma = diff.before.analyses.memory ?? {};
    const mb = diff.after.analyses.memory ?? {};
    const seen = new Map(memoryRows({ ...ma, ...mb }));
    for (const [k, label] of seen) {
      rows.push([
        label,
        formatBytes(ma[k] ?? 0),
        formatBytes(mb[k] ?? 0),
        change(ma[k], mb[k])
      ]);
    }
  }
  return h(
    'table',
    { class: 'olympus-table', 'data-olympus-table': stage },
    h(
      'caption',
      null,
      stage === 'cost'
        ? 'Cost estimates after optimization (before, where a report has none after)'
        : 'Memory of the compiled program'
    ),
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        ...[stage === 'cost' ? 'metric' : 'memory', a, b, 'change'].map(c =>
          h('th', { scope: 'col' }, c)
        )
      )
    ),
    h(
      'tbody',
      null,
      ...rows.map(([first, ...rest]) =>
        h(
          'tr',
          { class: rest[0] !== rest[1] ? 'olympus-changed' : null },
          h('th', { scope: 'row' }, first),
          ...rest.map(c => h('td', null, c))
        )
      )
    )
  );
}
