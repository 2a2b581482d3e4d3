/**
 * The stage kinds this viewer shows, in one table: for each view a stage's row
 * of the stage table names (`view`; `kind` in bundles before version 3), its
 * panel's view, the few words beside its title, why it has nothing to show, and
 * how two reports of it are compared. The report view (`reportview.ts`), the
 * diff view (`diffview.ts`) and the analyses (`analysisview.ts`) read this table
 * and name no kind themselves.
 *
 * A stage kind registered in Python (`olympus_jupyter.report.kinds`) that this
 * viewer does not know names a generic view (`text`, `table`) and gives data
 * (the bundle's `data[stage]`) that follows that view's schema (`text_view`,
 * `table_view` in `bundle.schema.json`): it is shown with no change here.
 *
 * DOM hooks: a table view's `table[data-olympus-kind=<stage>]`.
 */
import { AnalysisView, analysisOf } from './analysisview';
import { CostView, costsMeta } from './costview';
import { h } from './dom';
import { unsupportedBox } from './header';
import { LinkHub } from './hub';
import { LinkIndex } from './links';
import {
  IDiff,
  ILivePart,
  IReport,
  IStageInfo,
  formatMs,
  sourceStage,
  stageText
} from './model';
import { LiveSource, loadMoreControl } from './livekernel';
import { IPanelView } from './panel';
import { PassView } from './passview';
import { SourceView } from './sourceview';
import { StageView } from './stageview';

/** What a kind's panel view is made from. */
export interface IPanelContext {
  report: IReport;
  stage: IStageInfo;
  links: LinkIndex | null;
  /** The report's linked program stages. */
  linked: IStageInfo[];
  hub: LinkHub;
  /** The panel's body: the view's content goes there. */
  parent: HTMLElement;
  /** Called by a view once it has painted. */
  onPainted: () => void;
  /** Where the output was capped in a live kernel: what fetches the rest (else null). */
  live: LiveSource | null;
}

/** How one kind of stage is shown and compared. */
export interface IKind {
  /** The panel's view, or null when there is nothing to build. */
  view(ctx: IPanelContext): IPanelView | null;
  /** The few words beside the panel's title (`8 equations`, `13 lines`). */
  meta(report: IReport, stage: IStageInfo): string[];
  /**
   * Why the stage has nothing to show, or null when it has; `given` is the
   * reason the report gives, if any.
   */
  unavailable(
    report: IReport,
    stage: IStageInfo,
    given: string | undefined
  ): string | null;
  /**
   * How two reports of the stage are compared: `text` (their texts, from
   * `diffText`, in a merge view) or an element of its own.
   */
  diff: 'text' | ((diff: IDiff, stage: IStageInfo) => HTMLElement);
  /** The text a report shows for the stage in a diff (for `diff: 'text'`). */
  diffText?(report: IReport, stage: IStageInfo): string | null;
}

/** The data the report holds for a stage of a registered kind (`data[stage]`). */
export function kindData(report: IReport, stage: IStageInfo): unknown {
  return Object.prototype.hasOwnProperty.call(report.data, stage.name)
    ? report.data[stage.name]
    : undefined;
}

/** A text view's data (`text_view`), or null when it is not one. */
function textData(
  report: IReport,
  stage: IStageInfo
): { text: string; language: string | null } | null {
  const d = kindData(report, stage) as Record<string, unknown> | undefined;
  if (!d || typeof d !== 'object' || typeof d.text !== 'string') {
    return null;
  }
  return {
    text: d.text,
    language: typeof d.language === 'string' ? d.language : stage.language
  };
}

/** A table view's data (`table_view`), or null when it is not one. */
function tableData(
  report: IReport,
  stage: IStageInfo
): { columns: string[]; rows: unknown[][] } | null {
  const d = kindData(report, stage) as Record<string, unknown> | undefined;
  if (
    !d ||
    typeof d !== 'object' ||
    !Array.isArray(d.columns) ||
    !Array.isArray(d.rows)
  ) {
    return null;
  }
  return {
    columns: d.columns.map(String),
    rows: d.rows.filter(Array.isArray) as unknown[][]
  };
}

function lineCount(text: string): number {
  let n = 1;
  for (
    let i = text.indexOf('\n');
    i >= 0 && i < text.length - 1;
    i = text.indexOf('\n', i + 1)
  ) {
    n++;
  }
  return n;
}

const count = (n: number) => n.toLocaleString('en-US');

/** A cell of a table view: a string or a finite number as text, else empty. */
function cell(v: unknown): string {
  if (typeof v === 'number') {
    return Number.isFinite(v) ? v.toLocaleString('en-US') : '';
  }
  return typeof v === 'string' ? v : '';
}

/** The generic table view: columns and rows, as text. */
class TableView implements IPanelView {
  constructor(
    readonly stage: string,
    private readonly table: { columns: string[]; rows: unknown[][] },
    private readonly label: string,
    private readonly parent: HTMLElement
  ) {}

  show(): void {
    if (this._built) {
      return;
    }
    this._built = true;
    const { columns, rows } = this.table;
    this.parent.appendChild(
      h(
        'div',
        { class: 'olympus-table-wrap' },
        h(
          'table',
          {
            class: 'olympus-table',
            'data-olympus-kind': this.stage,
            'aria-label': this.label
          },
          h(
            'thead',
            null,
            h('tr', null, ...columns.map(c => h('th', { scope: 'col' }, c)))
          ),
          h(
            'tbody',
            null,
            ...rows.map(r =>
              h('tr', null, ...columns.map((_, i) => h('td', null, cell(r[i]))))
            )
          )
        )
      )
    );
  }

  apply(): void {
    // A table of the whole program: nothing to light up.
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

/** A note in a diff's panel for a stage each report shows in its own view. */
function ownViewNote(what: string) {
  return (_diff: IDiff, stage: IStageInfo): HTMLElement =>
    h(
      'p',
      { class: 'olympus-unavailable', 'data-olympus-unavailable': stage.name },
      `Each report's ${what} are shown in that report's own view; they are not compared here.`
    );
}

/** The program view's text and its meta, shared by `program` and `text`. */
function programMeta(
  report: IReport,
  stage: IStageInfo,
  text: string | null
): string[] {
  const parts: string[] = [];
  const prov = report.provenance;
  const st = stage.linked && prov ? prov.stages[stage.name] : undefined;
  if (st) {
    parts.push(`${count(st.ops.count)} ${stage.unit}`);
  }
  if (text !== null) {
    parts.push(`${count(lineCount(text))} lines`);
    // The time of the step that made it (not for a stage it could not make).
    const step = stage.step;
    if (step && report.timings[step] !== undefined) {
      parts.push(`${step} ${formatMs(report.timings[step])}`);
    }
  }
  return parts;
}

function stageView(
  ctx: IPanelContext,
  text: string,
  language: string | null,
  linked: boolean
): StageView {
  const { report, stage, links } = ctx;
  const live = ctx.live;
  const part = live?.part('stage', stage.name);
  let parent = ctx.parent;
  if (live && part) {
    // The editor, then the lines past the cap as the kernel sends them.
    parent = h('div', { class: 'olympus-stage-body' });
    ctx.parent.appendChild(parent);
    ctx.parent.appendChild(moreLines(live, part));
  }
  return new StageView({
    stage: stage.name,
    language,
    text,
    index: linked && links ? links.stage(stage.name) : null,
    hub: ctx.hub,
    sourceStage: sourceStage(report),
    debugInfo: report.debug_info,
    label: `${stage.title} of ${report.name}`,
    parent,
    onPainted: ctx.onPainted
  });
}

/**
 * A program stage's lines past the cap, fetched from the kernel: plain text under
 * the editor (not linked to the source: the output holds the ops of the lines it
 * shows), numbered from the first line the output left out.
 */
function moreLines(live: LiveSource, part: ILivePart): HTMLElement {
  const pre = h('pre', {
    class: 'olympus-live-lines',
    'data-olympus-live-lines': part.part,
    hidden: true
  });
  const caption = h('p', { class: 'olympus-hint', hidden: true });
  let next = part.shown;
  const control = loadMoreControl(live, part, 'lines', items => {
    const lines = items.filter((l): l is string => typeof l === 'string');
    if (lines.length) {
      pre.appendChild(document.createTextNode(lines.join('\n') + '\n'));
      next += lines.length;
      pre.hidden = false;
      caption.hidden = false;
      caption.textContent = `Lines ${count(part.shown + 1)} to ${count(next)}, from the kernel (plain text: not linked to the source).`;
    }
    return lines.length;
  });
  return h('div', { class: 'olympus-live-more-lines' }, control, caption, pre);
}

/** The kinds this viewer shows, by the view a stage's row names. */
export const KINDS: Readonly<Record<string, IKind>> = {
  source: {
    view: ctx =>
      ctx.links
        ? new SourceView({
            stage: ctx.stage.name,
            links: ctx.links,
            linked: ctx.linked,
            hub: ctx.hub,
            label: `Source of ${ctx.report.name}`,
            parent: ctx.parent,
            onPainted: ctx.onPainted
          })
        : null,
    meta: report => {
      const prov = report.provenance;
      const file =
        prov && prov.function.file !== null
          ? prov.files[prov.function.file]
          : undefined;
      return prov && file
        ? [
            `${prov.function.name} · ${file.path.split(/[\\/]/).pop()}:${prov.function.first_line}`
          ]
        : [];
    },
    unavailable: (report, _stage, given) => {
      const prov = report.provenance;
      if (!prov || !prov.files.some(f => f.chunks && f.chunks.length)) {
        return given ?? 'the source of this function could not be read';
      }
      return null;
    },
    diff: 'text',
    // The source: the held files (set by diffview, which builds the document).
    diffText: () => null
  },
  program: {
    view: ctx =>
      stageView(
        ctx,
        stageText(ctx.report, ctx.stage) ?? '',
        ctx.stage.language,
        ctx.stage.linked
      ),
    meta: (report, stage) =>
      programMeta(report, stage, stageText(report, stage)),
    unavailable: (report, stage, given) =>
      stageText(report, stage) !== null ? null : (given ?? 'not made'),
    diff: 'text',
    diffText: (report, stage) => stageText(report, stage)
  },
  analysis: {
    view: ctx => new AnalysisView(ctx.stage, ctx.report, ctx.parent),
    meta: (report, stage) => analysisOf(stage.name)?.meta?.(report) ?? [],
    unavailable: (report, stage, given) => {
      const analysis = analysisOf(stage.name);
      return analysis ? analysis.unavailable(report, given) : (given ?? null);
    },
    diff: (diff, stage) => {
      const analysis = analysisOf(stage.name);
      return analysis
        ? h('div', { class: 'olympus-table-wrap' }, analysis.compare(diff))
        : unsupportedBox(stage);
    }
  },
  passes: {
    view: ctx =>
      ctx.report.passes
        ? new PassView({
            stage: ctx.stage,
            passes: ctx.report.passes,
            hub: ctx.hub,
            files: (ctx.report.provenance?.files ?? []).map(f =>
              String(f.path)
            ),
            links: ctx.links,
            label: `${ctx.stage.title} of ${ctx.report.name}`,
            parent: ctx.parent,
            onPainted: ctx.onPainted,
            live: ctx.live
          })
        : null,
    meta: (report, stage) => {
      if (!report.passes) {
        return [];
      }
      const rows = Array.isArray(report.passes.rows) ? report.passes.rows : [];
      const changed = rows.filter(r => r.kind === 'changed').length;
      return [
        `${count(changed)} of ${count(rows.length)} ${stage.unit} changed the module`
      ];
    },
    unavailable: (report, _stage, given) =>
      report.passes ? null : (given ?? 'not made'),
    diff: ownViewNote('passes')
  },
  costs: {
    view: ctx =>
      ctx.report.costs
        ? new CostView({
            stage: ctx.stage,
            costs: ctx.report.costs,
            hub: ctx.hub,
            links: ctx.links,
            label: `${ctx.stage.title} of ${ctx.report.name}`,
            parent: ctx.parent,
            onPainted: ctx.onPainted,
            live: ctx.live
          })
        : null,
    meta: report => (report.costs ? [costsMeta(report.costs)] : []),
    unavailable: (report, _stage, given) =>
      report.costs ? null : (given ?? 'not made'),
    diff: (_diff, stage) => unsupportedBox(stage)
  },
  text: {
    view: ctx => {
      const data = textData(ctx.report, ctx.stage);
      return data ? stageView(ctx, data.text, data.language, false) : null;
    },
    meta: (report, stage) =>
      programMeta(report, stage, textData(report, stage)?.text ?? null),
    unavailable: (report, stage, given) =>
      textData(report, stage) ? null : (given ?? 'not made'),
    diff: 'text',
    diffText: (report, stage) => textData(report, stage)?.text ?? null
  },
  table: {
    view: ctx => {
      const data = tableData(ctx.report, ctx.stage);
      return data
        ? new TableView(
            ctx.stage.name,
            data,
            `${ctx.stage.title} of ${ctx.report.name}`,
            ctx.parent
          )
        : null;
    },
    meta: (report, stage) => {
      const data = tableData(report, stage);
      return data ? [`${count(data.rows.length)} ${stage.unit}`] : [];
    },
    unavailable: (report, stage, given) =>
      tableData(report, stage) ? null : (given ?? 'not made'),
    diff: 'text',
    // One line per row, its cells separated by tabs: the merge view marks what changed.
    diffText: (report, stage) => {
      const data = tableData(report, stage);
      return data
        ? [
            data.columns,
            ...data.rows.map(r => data.columns.map((_, i) => cell(r[i])))
          ]
            .map(r => r.join('\t'))
            .join('\n')
        : null;
    }
  }
};

/** The kind that shows a stage, or null when this viewer has none for it. */
export function kindOf(stage: IStageInfo): IKind | null {
  return Object.prototype.hasOwnProperty.call(KINDS, stage.view)
    ? KINDS[stage.view]
    : null;
}

/** Why a stage the user asked for has nothing to show, or null when it has. */
export function unavailableReason(
  report: IReport,
  stage: IStageInfo
): string | null {
  const given =
    report.unavailable[stage.name] ??
    report.provenance?.unavailable[stage.name];
  const kind = kindOf(stage);
  return kind ? kind.unavailable(report, stage, given) : (given ?? null);
}
