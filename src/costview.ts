/**
 * Where the cost goes: the `costs` panel (stages of kind `costs`) and the heatmap
 * the toolbar turns on, both from the report's `costs` (see
 * `olympus_jupyter/report/costs_view.py`; read and checked by `readCosts`).
 *
 * - the panel: what the op the user picked in olympuspr or StableHLO costs (its
 *   compiled instructions' flops, transcendentals and bytes, and their shares:
 *   the data's `ops`), where the data holds it;
 *   a table of XLA's figures by source line (flops, transcendentals,
 *   bytes accessed, bytes live at the peak), each with its share and a bar, what
 *   no line made (compiler-made, arguments) last; clicking a line's row selects
 *   that source line as a click on it does; under a line, its library lines
 *   (flax, optax...: `via`) behind a disclosure button; the cost by module and
 *   layer, a tree (`moduletree.ts`, as `report.cost_by_module()` makes it: each
 *   node's flops, transcendentals, bytes accessed, bytes live at the peak and
 *   collectives) shown to its top two levels whose nodes open with their buttons; the buffers live at the peak; the
 *   collectives the program runs; the shardings of its inputs and outputs; notes.
 * - the heatmap (`CostHeat`): each source line's share of one figure (flops, bytes
 *   accessed or peak memory), and each op line of a linked stage the largest share
 *   among the source lines its op is tied to, as marks for the editors' heat
 *   gutter (`editor.ts`): a colour, the share as text, the exact figures on hover.
 *
 * Every string of the report is data: the DOM is built with text nodes only.
 *
 * DOM hooks (tests and styles): `[data-olympus-costs]`; the tables
 * `table[data-olympus-table=cost-lines|cost-buffers|collectives|shardings]`; a
 * line's row `tr[data-olympus-cost-row=<i>]` (`data-key` when it is a source line
 * of the report, `aria-current` when it is the selected one) with its button
 * `button[data-olympus-cost-line]`, and its library lines' disclosure
 * `button[data-olympus-via-toggle=<i>]` (`aria-expanded`) and rows
 * `tr[data-olympus-via-of=<i>]`; the module tree
 * `table[data-olympus-table=cost-modules]`, a node's row
 * `tr[data-olympus-module=<path>][data-depth]` with its button
 * `button[data-olympus-module-toggle=<path>]` (`aria-expanded`);
 * `[data-olympus-no-collectives]`;
 * `[data-olympus-costs-devices]`; `[data-olympus-costs-peak]`; the picked op's
 * cost `[data-olympus-cost-op]` (`data-op`: its id; empty when none);
 * `[data-olympus-costs-notes]`; rows fetched from the kernel past the output's
 * cap `tr[data-olympus-fetched]` (lines, buffers, collectives; the module tree is
 * made again). User Timing: `olympus:costs-paint`.
 */
import { formatCost } from './costnames';
import { h } from './dom';
import { HeatMarks, IHeatMark } from './editor';
import { ISelection, LinkHub } from './hub';
import { LinkIndex, SourceKey, StageIndex, pickedOp, sourceKey } from './links';
import { LiveSource, loadMoreControl } from './livekernel';
import {
  ICostLine,
  ICostOp,
  ICostTime,
  ICostVia,
  ICosts,
  ILivePart,
  IStageInfo,
  baseName,
  formatBytes,
  readCosts
} from './model';
import { IModuleNode, moduleLeaves, moduleTree } from './moduletree';
import { IPanelView } from './panel';
import { formatF, formatG, pythonNonFinite } from './pyformat';
import { SI_PREFIXES } from './viewtables';

// -- figures for people -----------------------------------------------------------

// The figures are written as the text and static HTML write them (`format_flops`,
// `format_share` in `olympus_jupyter/report/cost_names.py`; tests/test_view_tables.py
// runs both): Python's number formats (`pyformat.ts`), the units of `viewtables.ts`.

/** Python's `.3g`: `8.19` for 8.192, `2` for 2.00. */
function g3(v: number): string {
  return formatG(v, 3);
}

/**
 * A count of floating-point operations in short decimal units: `8192` → `8.2 kFLOP`,
 * `512` → `512 FLOP`, `1.6e7` → `16.0 MFLOP`; another count the same way, its unit a
 * word (`unit = 'ops'`: `2.0 k ops`).
 */
export function formatFlops(v: number, unit = 'FLOP'): string {
  const space = unit === 'FLOP' ? '' : ' ';
  if (!Number.isFinite(v)) {
    return `${pythonNonFinite(v)} ${unit}`;
  }
  const step = SI_PREFIXES.find(([size]) => Math.abs(v) >= size);
  if (step) {
    return `${formatF(v / step[0], 1)} ${step[1]}${space}${unit}`;
  }
  return `${Number.isInteger(v) ? formatF(v, 0) : formatG(v, 3)} ${unit}`;
}

/** A share as a percentage, never rounded to 0 or 100 when it is not: `84%`, `<1%`, `>99%`. */
export function formatShare(share: number): string {
  const pct = share * 100;
  if (0 < pct && pct < 1) {
    return '<1%';
  }
  if (99 < pct && pct < 100) {
    return '>99%';
  }
  return `${formatF(pct, 0)}%`;
}

/** `numerator / total`, 0 when there is no total. */
function shareOf(value: number, total: number): number {
  return total > 0 ? value / total : 0;
}

// -- the time column (a target's report) -------------------------------------------

/**
 * A row's time in the figure's unit (what its share is of): its cycles, the TPU
 * compiler's estimate, or a roofline's seconds; 0 for none.
 */
export function timeOf(
  time: ICostTime,
  row: { cycles: number | null; seconds: number | null }
): number {
  return (time.figure === 'cycles' ? row.cycles : row.seconds) ?? 0;
}

/**
 * A time in the figure's unit as the text and static HTML write it
 * (`time_words` in `time_view.py`): `15.1 k cycles, 10 µs` (cycles alone where
 * the chip's clock is not known), `12.3 µs` for a roofline.
 */
export function formatTime(time: ICostTime, v: number): string {
  if (time.figure !== 'cycles') {
    return formatCost(v, 'seconds');
  }
  const cycles = formatFlops(v, 'cycles');
  return time.clock_hz
    ? `${cycles}, ${formatCost(v / time.clock_hz, 'seconds')}`
    : cycles;
}

/** The time the rows add up to, in the figure's unit. */
function timeTotal(time: ICostTime): number {
  return timeOf(time, time);
}

// -- the heatmap -------------------------------------------------------------------

/** What the heatmap colours by. */
export type HeatMetric = 'flops' | 'bytes' | 'peak';

/** The heatmap's choices, in the toolbar's order (its value, its label). */
export const HEAT_METRICS: ReadonlyArray<[HeatMetric, string]> = [
  ['flops', 'flops'],
  ['bytes', 'bytes accessed'],
  ['peak', 'peak memory']
];

/** A source line's figures (the rows of one line summed). */
interface ILineFigures {
  file: number;
  line: number;
  flops: number;
  transcendentals: number;
  bytes: number;
  peak: number;
}

/** A share's colour strength, 1 to 5 (a small share still shows). */
export function heatLevel(share: number): number {
  if (share >= 0.5) {
    return 5;
  }
  if (share >= 0.25) {
    return 4;
  }
  if (share >= 0.1) {
    return 3;
  }
  return share >= 0.02 ? 2 : 1;
}

/**
 * The heatmap of one figure: each source line's share of the program's total, and
 * for each linked stage the largest share among the source lines each op line is
 * tied to (through the provenance model's links, as selection lights them up).
 * A source line's mark is made on first use and kept; a stage line's is read from
 * its op's frames when the line is shown.
 */
export class CostHeat {
  constructor(
    readonly costs: ICosts,
    readonly metric: HeatMetric,
    readonly links: LinkIndex | null
  ) {
    const c = costs;
    const totals = c.counted ?? c.totals;
    this.total =
      metric === 'flops'
        ? totals.flops
        : metric === 'bytes'
          ? totals.bytes
          : (c.peak?.bytes ?? 0);
    for (const row of c.lines) {
      if (row.what !== 'line' || row.file === null || row.line === null) {
        continue;
      }
      const key = sourceKey(row.file, row.line);
      let fig = this._byKey.get(key);
      if (!fig) {
        fig = {
          file: row.file,
          line: row.line,
          flops: 0,
          transcendentals: 0,
          bytes: 0,
          peak: 0
        };
        this._byKey.set(key, fig);
      }
      fig.flops += row.flops;
      fig.transcendentals += row.transcendentals;
      fig.bytes += row.bytes;
      fig.peak += row.peak;
    }
  }

  /**
   * The program's total of the figure (XLA's module totals, loop bodies × their trip
   * counts: what the rows add up to; the live-range peak).
   */
  readonly total: number;

  /** What the share is of: `flops`, `bytes accessed`, `the peak`. */
  get of(): string {
    return this.metric === 'flops'
      ? 'flops'
      : this.metric === 'bytes'
        ? 'bytes accessed'
        : 'the peak';
  }

  /** A source line's share of the figure (0 when it costs none). */
  share(key: SourceKey): number {
    const fig = this._byKey.get(key);
    return fig ? shareOf(fig[this.metric], this.total) : 0;
  }

  /** The mark of a source line, or null when it has no share. */
  sourceMark(key: SourceKey): IHeatMark | null {
    let mark = this._marks.get(key);
    if (mark === undefined) {
      const fig = this._byKey.get(key);
      const share = fig ? shareOf(fig[this.metric], this.total) : 0;
      mark =
        fig && share > 0
          ? {
              level: heatLevel(share),
              text: formatShare(share),
              title: this.describe(fig)
            }
          : null;
      this._marks.set(key, mark);
    }
    return mark;
  }

  /**
   * The marks of a linked stage's text lines: each op line takes the largest share
   * among the source lines tied to its op (its location's frames). Made for the
   * lines asked, the visible ones: switching the heatmap builds no table of a
   * stage's ops.
   */
  stageMarks(index: StageIndex): HeatMarks {
    return line => {
      const op = index.lineOp(line);
      if (op < 0) {
        return null;
      }
      let best: SourceKey | null = null;
      let bestShare = 0;
      for (const key of index.opSources(op)) {
        const share = this.share(key);
        if (share > bestShare) {
          best = key;
          bestShare = share;
        }
      }
      const mark = best === null ? null : this.sourceMark(best);
      return mark && { ...mark, title: `tied to ${mark.title}` };
    };
  }

  /** `line 12: 8.19 kFLOP (84% of flops), 4.0 KiB accessed, 2.0 KiB live at peak` */
  describe(fig: ILineFigures): string {
    const parts: Record<HeatMetric, string> = {
      flops: formatFlops(fig.flops),
      bytes: `${formatBytes(fig.bytes)} accessed`,
      peak: `${formatBytes(fig.peak)} live at peak`
    };
    const own = `${parts[this.metric]} (${formatShare(shareOf(fig[this.metric], this.total))} of ${this.of})`;
    const others = HEAT_METRICS.map(([m]) => m)
      .filter(m => m !== this.metric)
      .map(m => parts[m]);
    return `${this.where(fig.file, fig.line)}: ${[own, ...others].join(', ')}`;
  }

  /** `line 12` in the function's file, `other.py:12` in another. */
  where(file: number, line: number): string {
    const prov = this.links?.prov;
    if (!prov || file === prov.function.file) {
      return `line ${line}`;
    }
    const path = prov.files[file]?.path;
    return `${path ? baseName(String(path)) : '?'}:${line}`;
  }

  private _byKey = new Map<SourceKey, ILineFigures>();
  private _marks = new Map<SourceKey, IHeatMark | null>();
}

// -- the panel ---------------------------------------------------------------------

/** A column of the module tree: its figure, heading, total and format. */
type ModuleColumn = [
  'flops' | 'transcendentals' | 'bytes' | 'peak' | 'time',
  string,
  number,
  (v: number) => string
];

/** The levels of the module tree shown at first (deeper ones open from their parent). */
const SHOWN_MODULE_DEPTH = 2;

/** The most nodes of the module tree shown (the bundle caps the modules lower). */
const MAX_MODULE_ROWS = 5_000;

export interface ICostViewOptions {
  stage: IStageInfo;
  costs: ICosts;
  hub: LinkHub;
  /** The report's links (null: no provenance, no line can be selected). */
  links: LinkIndex | null;
  /** `Where the cost goes of f`, for assistive technology. */
  label: string;
  parent: HTMLElement;
  /** Called once the panel has painted for the first time. */
  onPainted?: () => void;
  /** Where the output was capped: the kernel that holds the rest (null: not capped). */
  live?: LiveSource | null;
}

/** `4 lines · 8.19 kFLOP · peak 4.0 KiB`: the panel's heading's meta. */
export function costsMeta(costs: ICosts): string {
  const lines = costs.lines.filter(r => r.what === 'line').length;
  const parts = [
    `${lines.toLocaleString('en-US')} ${lines === 1 ? 'line' : 'lines'}`,
    costs.counted
      ? `${formatFlops(costs.counted.flops)} (loops × trip counts)`
      : formatFlops(costs.totals.flops)
  ];
  if (costs.peak) {
    parts.push(`peak ${formatBytes(costs.peak.bytes)}`);
  }
  if (costs.time) {
    parts.push(
      `${formatTime(costs.time, timeTotal(costs.time))} (${costs.time.label.replace(/^time \(|\)$/g, '')})`
    );
  }
  if (costs.devices > 1) {
    parts.push(`per device of ${costs.devices}`);
  }
  return parts.join(' · ');
}

/** One figure's column of the line table. */
interface IColumn {
  key: 'flops' | 'transcendentals' | 'bytes' | 'peak' | 'time';
  heading: string;
  explanation: string;
  value(row: ICostLine): number;
  total: number;
  format(v: number): string;
}

export class CostView implements IPanelView {
  constructor(private readonly o: ICostViewOptions) {
    this.stage = o.stage.name;
    for (const op of o.costs.ops ?? []) {
      this._ops.set(op.op, op);
    }
  }

  readonly stage: string;

  show(): void {
    if (this._root) {
      return;
    }
    performance.mark?.('olympus:costs-start');
    this._root = this._build();
    this.o.parent.appendChild(this._root);
    this.apply(this.o.hub.current);
    requestAnimationFrame(() => {
      this._root?.setAttribute('data-olympus-costs-painted', '1');
      try {
        performance.measure('olympus:costs-paint', 'olympus:costs-start');
      } catch {
        // no start mark (cleared by the page): nothing to measure
      }
      this.o.onPainted?.();
    });
  }

  apply(sel: ISelection): void {
    this._renderOp(sel);
    const key = sel.source;
    for (const [rowKey, rows] of this._rowsByKey) {
      for (const tr of rows) {
        if (rowKey === key) {
          tr.setAttribute('aria-current', 'true');
          tr.classList.add('olympus-active');
        } else if (tr.hasAttribute('aria-current')) {
          tr.removeAttribute('aria-current');
          tr.classList.remove('olympus-active');
        }
      }
    }
  }

  focus(): void {
    const target =
      this._root?.querySelector<HTMLElement>(
        'button[data-olympus-cost-line]'
      ) ?? this._root?.querySelector<HTMLElement>('table');
    if (target && target.tagName === 'TABLE') {
      target.tabIndex = -1;
    }
    target?.focus();
  }

  dispose(): void {
    this._root?.remove();
    this._root = null;
    this._rowsByKey.clear();
  }

  /** What the op the user picked costs, where the data holds it; else nothing. */
  private _renderOp(sel: ISelection): void {
    const node = this._opNode;
    if (!node) {
      return;
    }
    node.textContent = '';
    delete node.dataset.op;
    const op = pickedOp(this.o.links, sel.origin);
    if (!op) {
      node.hidden = true;
      return;
    }
    node.hidden = false;
    node.dataset.op = op.id;
    const found = this._ops.get(op.id);
    if (!found) {
      node.appendChild(
        h(
          'span',
          { class: 'olympus-hint' },
          `${op.name} (${op.id}): no compiled instruction that costs anything came from this op` +
            (this.o.costs.ops.length
              ? '.'
              : ' (this report holds no cost by op).')
        )
      );
      return;
    }
    const c = this.o.costs;
    const t = c.counted ?? c.totals;
    node.append(
      h('span', { class: 'olympus-cost-op-name' }, `${op.name} (${op.id})`),
      ` costs ${formatFlops(found.flops)} (${formatShare(shareOf(found.flops, t.flops))} of flops), ` +
        `${formatFlops(found.transcendentals).replace('FLOP', 'transcendentals')} (${formatShare(shareOf(found.transcendentals, t.transcendentals))}), ` +
        `${formatBytes(found.bytes)} accessed (${formatShare(shareOf(found.bytes, t.bytes))}): its compiled instructions'.`
    );
  }

  private _build(): HTMLElement {
    const c = this.o.costs;
    this._nextRow = c.lines.length;
    const root = h('div', {
      class: 'olympus-costs',
      'data-olympus-costs': '1',
      'aria-label': this.o.label
    });
    root.appendChild(
      h(
        'p',
        {
          class: 'olympus-costs-summary',
          'data-olympus-costs-devices': c.devices
        },
        c.devices > 1
          ? `The program runs on ${c.devices.toLocaleString('en-US')} devices: figures are per device.`
          : 'The program runs on one device.',
        ` XLA counts ${formatFlops(c.totals.flops)}, ${formatFlops(c.totals.transcendentals).replace('FLOP', 'transcendentals')} and ${formatBytes(c.totals.bytes)} accessed in all.`
      )
    );
    this._opNode = h('p', {
      class: 'olympus-cost-op',
      'data-olympus-cost-op': '1',
      'aria-live': 'polite',
      hidden: true
    });
    root.appendChild(this._opNode);
    if (c.time) {
      root.appendChild(
        h(
          'p',
          { class: 'olympus-costs-summary', 'data-olympus-costs-time': '1' },
          `${c.time.label[0].toUpperCase()}${c.time.label.slice(1)}: ${c.time.what}; ` +
            `${formatTime(c.time, timeTotal(c.time))} in all.`,
          ...c.time.notes.map(
            n => ` ${n[0]?.toUpperCase() ?? ''}${n.slice(1)}.`
          )
        )
      );
    }
    const notes = [
      ...c.notes,
      ...Object.entries(c.unavailable).map(
        ([part, why]) => `No ${part}: ${why}`
      )
    ];
    if (notes.length) {
      root.appendChild(
        h(
          'div',
          { class: 'olympus-notes', 'data-olympus-costs-notes': '1' },
          ...notes.map(n => h('p', { class: 'olympus-note' }, n))
        )
      );
    }
    root.appendChild(
      h('div', { class: 'olympus-table-wrap' }, this._lineTable())
    );
    const more = this._moreLines();
    if (more) {
      root.appendChild(more);
    }
    const modules = this._modules();
    if (modules) {
      root.appendChild(modules);
    }
    root.appendChild(this._peak());
    root.appendChild(this._collectives());
    root.appendChild(this._shardings());
    return root;
  }

  /** The line's place: `f.py:12` (with its text), `compiler-made`, `arguments`. */
  private _where(row: ICostLine): { label: string; key: SourceKey | null } {
    if (row.what !== 'line') {
      return { label: row.what, key: null };
    }
    const prov = this.o.links?.prov;
    if (row.file !== null && row.line !== null && prov) {
      const path = prov.files[row.file]?.path;
      return {
        label: `${path ? baseName(String(path)) : '?'}:${row.line}`,
        key: sourceKey(row.file, row.line)
      };
    }
    return {
      label: `${row.path ? baseName(row.path) : '?'}:${row.line ?? '?'}`,
      key: null
    };
  }

  private _lineTable(): HTMLTableElement {
    const c = this.o.costs;
    // Shares are of what the rows add up to: loop bodies × their trip counts.
    const t = c.counted ?? c.totals;
    const columns: IColumn[] = [
      {
        key: 'flops',
        heading: 'flops',
        explanation:
          'Floating-point operations of the line’s compiled instructions (XLA’s cost analysis)',
        value: r => r.flops,
        total: t.flops,
        format: formatFlops
      },
      {
        key: 'transcendentals',
        heading: 'transcendentals',
        explanation:
          'Transcendental operations (exp, log, tanh, ...) of the line’s compiled instructions',
        value: r => r.transcendentals,
        total: t.transcendentals,
        format: v => g3(v)
      },
      {
        key: 'bytes',
        heading: 'bytes accessed',
        explanation: 'Bytes the line’s compiled instructions read and write',
        value: r => r.bytes,
        total: t.bytes,
        format: formatBytes
      },
      {
        key: 'peak',
        heading: 'live at peak',
        explanation:
          'Bytes of the line’s buffers that are live when the program’s memory peaks',
        value: r => r.peak,
        total: c.peak?.bytes ?? 0,
        format: formatBytes
      }
    ];
    const time = c.time;
    if (time) {
      // A target's: the time before any run, named as every form names it.
      columns.push({
        key: 'time',
        heading: time.label,
        explanation: `${time.what[0]?.toUpperCase() ?? ''}${time.what.slice(1)}`,
        value: r => timeOf(time, r),
        total: timeTotal(time),
        format: v => formatTime(time, v)
      });
    }
    const body = h('tbody');
    this._lineBody = body;
    this._columns = columns;
    this._anyVia = c.lines.some(r => r.via.length > 0);
    c.lines.forEach((row, i) =>
      body.appendChild(this._lineRow(row, i, columns))
    );
    if (!c.lines.length) {
      body.appendChild(
        h(
          'tr',
          null,
          h(
            'td',
            { colspan: columns.length + 1, class: 'olympus-hint' },
            'No line costs anything.'
          )
        )
      );
    }
    const foot = h(
      'tfoot',
      null,
      h(
        'tr',
        null,
        h(
          'th',
          {
            scope: 'row',
            title: c.counted
              ? 'XLA’s totals with each loop body counted × its trip count'
              : null
          },
          c.counted ? 'the program (loops × trip counts)' : 'the program'
        ),
        ...columns.map(col =>
          h(
            'td',
            { title: `${col.heading}: ${col.total.toLocaleString('en-US')}` },
            col.format(col.total)
          )
        )
      ),
      c.counted ? this._xlaTotals(columns) : null
    );
    return h(
      'table',
      {
        class: 'olympus-table olympus-cost-table',
        'data-olympus-table': 'cost-lines'
      },
      h(
        'caption',
        null,
        'Where the cost goes, by source line (choose a line to light up its ops)'
      ),
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          h('th', { scope: 'col' }, 'line'),
          ...columns.map(col =>
            h('th', { scope: 'col', title: col.explanation }, col.heading)
          )
        )
      ),
      body,
      foot
    );
  }

  /**
   * Where the output left source lines out and the kernel holds them: the control
   * that fetches the next ones and puts them after the shown ones (before what no
   * line made), read as the report's own rows are (`readCosts`).
   */
  private _moreLines(): HTMLElement | null {
    const live = this.o.live;
    const part = live?.part('costs', 'lines');
    if (!live || !part) {
      return null;
    }
    return loadMoreControl(live, part, 'source lines', items => {
      const body = this._lineBody;
      const columns = this._columns;
      if (!body || !columns) {
        return 0;
      }
      const rows = this._readFetched({ lines: items }).lines.filter(
        r => r.what === 'line'
      );
      const before = body.querySelector(
        'tr[data-what]:not([data-what="line"])'
      );
      for (const row of rows) {
        const tr = this._lineRow(row, this._nextRow++, columns);
        tr.setAttribute('data-olympus-fetched', '1');
        body.insertBefore(tr, before);
      }
      this.apply(this.o.hub.current);
      return rows.length;
    });
  }

  /** XLA's own totals, each loop body counted once, under the counted ones. */
  private _xlaTotals(columns: IColumn[]): HTMLTableRowElement {
    const c = this.o.costs;
    const xla = [
      c.totals.flops,
      c.totals.transcendentals,
      c.totals.bytes,
      c.peak?.bytes ?? 0
    ];
    return h(
      'tr',
      { 'data-olympus-cost-xla': '1' },
      h(
        'th',
        {
          scope: 'row',
          title: 'Compiled.cost_analysis(): each loop body counted once'
        },
        'XLA’s totals (loop bodies once)'
      ),
      ...columns.map((col, i) =>
        i < xla.length
          ? h(
              'td',
              { title: `${col.heading}: ${xla[i].toLocaleString('en-US')}` },
              col.format(xla[i])
            )
          : h('td')
      )
    );
  }

  private _lineRow(
    row: ICostLine,
    i: number,
    columns: IColumn[]
  ): HTMLTableRowElement {
    const { label, key } = this._where(row);
    const links = this.o.links;
    const selectable = key !== null && links?.opsOf(key) !== undefined;
    const text = key !== null && links ? links.sourceText(key) : null;
    const head = h('th', { scope: 'row' });
    if (selectable) {
      const button = h(
        'button',
        {
          type: 'button',
          class: 'olympus-link',
          'data-olympus-cost-line': key,
          title: 'Light up this line’s ops in every stage'
        },
        label
      );
      button.addEventListener('click', e => {
        e.stopPropagation();
        this.o.hub.select(key, null);
      });
      head.appendChild(button);
    } else {
      head.appendChild(h('span', { class: 'olympus-cost-where' }, label));
    }
    if (row.iterations) {
      head.appendChild(
        h(
          'span',
          { class: 'olympus-cost-iterations', 'data-olympus-iterations': '1' },
          row.iterations
        )
      );
    }
    if (text !== null && text.trim()) {
      head.appendChild(
        h('code', { class: 'olympus-cost-code' }, text.trim().slice(0, 80))
      );
    }
    if (row.instructions.length) {
      head.title = `compiled: ${row.instructions.join(', ')}`;
    }
    if (row.via.length) {
      head.insertBefore(this._viaToggle(row, i, columns), head.firstChild);
    } else if (this._anyVia) {
      // Aligned with the rows that have a toggle.
      head.insertBefore(
        h('span', {
          class: 'olympus-cost-toggle-space',
          'aria-hidden': 'true'
        }),
        head.firstChild
      );
    }
    const tr = h(
      'tr',
      {
        'data-olympus-cost-row': i,
        'data-what': row.what,
        'data-key': selectable ? key : null
      },
      head,
      ...columns.map(col => figureCell(col.value(row), col.total, col.format))
    );
    if (selectable) {
      tr.classList.add('olympus-cost-selectable');
      tr.addEventListener('click', () => this.o.hub.select(key, null));
      let rows = this._rowsByKey.get(key!);
      if (!rows) {
        rows = [];
        this._rowsByKey.set(key!, rows);
      }
      rows.push(tr);
    }
    return tr;
  }

  /**
   * The disclosure button of a line's library lines (`via`), collapsed: its rows
   * are made on first opening, under the line's row, and hidden again on closing.
   */
  private _viaToggle(
    row: ICostLine,
    i: number,
    columns: IColumn[]
  ): HTMLButtonElement {
    const n = row.via.length;
    const what = `${n} library ${n === 1 ? 'line' : 'lines'}`;
    const button = h(
      'button',
      {
        type: 'button',
        class: 'olympus-cost-toggle',
        'data-olympus-via-toggle': i,
        'aria-expanded': 'false',
        'aria-label': `Show the ${what} beneath this line`,
        title: `The ${what} beneath this line (inside flax, optax, ...), with their part of its cost`
      },
      '▸'
    );
    let rows: HTMLTableRowElement[] | null = null;
    button.addEventListener('click', e => {
      e.stopPropagation(); // not a choice of the line
      const open = button.getAttribute('aria-expanded') !== 'true';
      if (open && rows === null) {
        rows = row.via.map(v => this._viaRow(v, i, columns));
        button.closest('tr')?.after(...rows);
      }
      for (const tr of rows ?? []) {
        tr.hidden = !open;
      }
      button.setAttribute('aria-expanded', open ? 'true' : 'false');
      button.setAttribute(
        'aria-label',
        `${open ? 'Hide' : 'Show'} the ${what} beneath this line`
      );
      button.textContent = open ? '▾' : '▸';
    });
    return button;
  }

  /** A library line beneath line row `i`: `linear.py:287 (Dense.__call__)` and its figures. */
  private _viaRow(
    v: ICostVia,
    i: number,
    columns: IColumn[]
  ): HTMLTableRowElement {
    const prov = this.o.links?.prov;
    const path = v.file !== null ? prov?.files[v.file]?.path : v.path;
    const place = `${path ? baseName(String(path)) : '?'}:${v.line ?? '?'}`;
    const links = this.o.links;
    const text =
      v.file !== null && v.line !== null && links
        ? links.sourceText(sourceKey(v.file, v.line))
        : null;
    const head = h(
      'th',
      {
        scope: 'row',
        class: 'olympus-cost-via-where',
        title: `inside a library: ${path ? String(path) : '?'}:${v.line ?? '?'}${v.function ? ` (${v.function})` : ''}`
      },
      '↳ ',
      place,
      v.function
        ? h('span', { class: 'olympus-cost-function' }, ` (${v.function})`)
        : null
    );
    if (text !== null && text.trim()) {
      head.appendChild(
        h('code', { class: 'olympus-cost-code' }, text.trim().slice(0, 80))
      );
    }
    return h(
      'tr',
      { class: 'olympus-cost-via', 'data-olympus-via-of': i },
      head,
      ...columns.map(col =>
        col.key === 'peak'
          ? h('td', { title: 'The peak is counted on the user’s line' })
          : figureCell(
              col.key === 'time' && this.o.costs.time
                ? timeOf(this.o.costs.time, v)
                : col.key === 'time'
                  ? 0
                  : v[col.key],
              col.total,
              col.format
            )
      )
    );
  }

  /**
   * The cost by module and layer: the module tree, its top two levels shown, each
   * node with a toggle that shows or hides the nodes beneath it. Nothing when the
   * report names no module (an older bundle, a program without modules).
   */
  private _modules(): HTMLElement | null {
    const c = this.o.costs;
    const part = this.o.live?.part('costs', 'modules') ?? null;
    if (!c.modules.some(m => m.path) && !part) {
      return null;
    }
    const compiled = this.o.links?.prov.stages.compiled?.ops ?? null;
    const t = c.counted ?? c.totals;
    const columns: ModuleColumn[] = [
      ['flops', 'flops', t.flops, formatFlops],
      ['transcendentals', 'transcendentals', t.transcendentals, v => g3(v)],
      ['bytes', 'bytes accessed', t.bytes, formatBytes],
      ['peak', 'live at peak', c.peak?.bytes ?? 0, formatBytes]
    ];
    const time = c.time;
    if (time) {
      // The modules' own: a roofline of a module is of its own figures.
      const total = c.modules.reduce((sum, m) => sum + timeOf(time, m), 0);
      columns.push(['time', time.label, total, v => formatTime(time, v)]);
    }
    const body = h('tbody', null);
    const hint = h('p', { class: 'olympus-hint', hidden: true });
    // The modules the output holds, then those fetched from the kernel: the tree
    // is made again from all of them as more come.
    let held = c.modules;
    const fill = () => {
      const all = moduleTree(moduleLeaves({ ...c, modules: held }, compiled));
      const nodes = all.slice(0, MAX_MODULE_ROWS);
      body.replaceChildren(...this._moduleRows(nodes, columns));
      hint.hidden = all.length <= nodes.length;
      hint.textContent = `The first ${nodes.length.toLocaleString('en-US')} of ${all.length.toLocaleString('en-US')} modules are shown; report.cost_by_module() gives every one.`;
    };
    fill();
    const section = h(
      'section',
      { class: 'olympus-costs-section', 'data-olympus-costs-modules': '1' },
      h('h4', { class: 'olympus-costs-title' }, 'By module and layer'),
      h(
        'div',
        { class: 'olympus-table-wrap' },
        h(
          'table',
          {
            class: 'olympus-table olympus-cost-table',
            'data-olympus-table': 'cost-modules'
          },
          h(
            'caption',
            null,
            'Where the cost goes, by module and layer: each holds the modules inside it (open one to see them)'
          ),
          h(
            'thead',
            null,
            h(
              'tr',
              null,
              h('th', { scope: 'col' }, 'module'),
              ...columns.map(([key, heading]) =>
                h(
                  'th',
                  {
                    scope: 'col',
                    title: key === 'time' ? (c.time?.what ?? null) : null
                  },
                  heading
                )
              ),
              h(
                'th',
                {
                  scope: 'col',
                  title: 'How many collectives the module’s instructions run'
                },
                'collectives'
              )
            )
          ),
          body
        )
      ),
      hint
    );
    const live = this.o.live;
    if (live && part) {
      section.appendChild(
        loadMoreControl(live, part, 'modules', items => {
          const got = this._readFetched({ modules: items }).modules;
          held = [...held, ...got];
          fill();
          return got.length;
        })
      );
    }
    return section;
  }

  /**
   * The module tree's rows, the top levels shown, each node with children a
   * toggle that shows or hides the nodes beneath it.
   */
  private _moduleRows(
    nodes: IModuleNode[],
    columns: ModuleColumn[]
  ): HTMLTableRowElement[] {
    // Open: the top level's nodes (their children show); the others closed.
    const open = nodes.map(n => n.depth < SHOWN_MODULE_DEPTH - 1);
    const shown = nodes.map(n => n.depth < SHOWN_MODULE_DEPTH);
    const trs: HTMLTableRowElement[] = [];
    const toggle = (i: number, button: HTMLButtonElement) => {
      open[i] = !open[i];
      button.setAttribute('aria-expanded', open[i] ? 'true' : 'false');
      button.textContent = open[i] ? '▾' : '▸';
      for (
        let j = i + 1;
        j < nodes.length && nodes[j].depth > nodes[i].depth;
        j++
      ) {
        const p = nodes[j].parent;
        shown[j] = shown[p] && open[p];
        trs[j].hidden = !shown[j];
      }
    };
    nodes.forEach((node: IModuleNode, i) => {
      const name = node.path ? node.name : '(no module: made outside any)';
      const head = h('th', {
        scope: 'row',
        class: 'olympus-cost-module',
        title: node.path || name
      });
      head.style.paddingLeft = `${(node.depth * 1.2 + 0.3).toFixed(1)}em`;
      if (node.children) {
        const button = h(
          'button',
          {
            type: 'button',
            class: 'olympus-cost-toggle',
            'data-olympus-module-toggle': node.path,
            'aria-expanded': open[i] ? 'true' : 'false',
            'aria-label': `Modules inside ${node.path}`
          },
          open[i] ? '▾' : '▸'
        );
        button.addEventListener('click', () => toggle(i, button));
        head.appendChild(button);
      } else {
        head.appendChild(
          h('span', {
            class: 'olympus-cost-toggle-space',
            'aria-hidden': 'true'
          })
        );
      }
      head.appendChild(h('span', { class: 'olympus-cost-module-name' }, name));
      if (node.iterations) {
        head.appendChild(
          h(
            'span',
            {
              class: 'olympus-hint olympus-cost-iterations',
              'data-olympus-module-iterations': '1'
            },
            ` ${node.iterations}`
          )
        );
      }
      const tr = h(
        'tr',
        {
          'data-olympus-module': node.path,
          'data-depth': node.depth
        },
        head,
        ...columns.map(([key, , total, format]) =>
          figureCell(node[key], total, format)
        ),
        h(
          'td',
          { 'data-olympus-collectives': node.collectives },
          node.collectives ? node.collectives.toLocaleString('en-US') : ''
        )
      );
      tr.hidden = !shown[i];
      trs.push(tr);
    });
    return trs;
  }

  /** The live-range peak, how it compares with memory_analysis(), and its buffers. */
  private _peak(): HTMLElement {
    const c = this.o.costs;
    const section = h('section', {
      class: 'olympus-costs-section',
      'data-olympus-costs-peak': '1'
    });
    section.appendChild(
      h('h4', { class: 'olympus-costs-title' }, 'Memory at the peak')
    );
    const peak = c.peak;
    if (!peak) {
      section.appendChild(
        h(
          'p',
          { class: 'olympus-unavailable' },
          `Not available: ${c.unavailable.peak ?? 'no peak was computed'}`
        )
      );
      return section;
    }
    const kinds = Object.entries(peak.by_kind)
      .filter(([, v]) => v > 0)
      .map(([k, v]) => `${k} ${formatBytes(v)}`);
    section.appendChild(
      h(
        'p',
        null,
        `${formatBytes(peak.bytes)} live at the peak`,
        peak.at ? ` (reached at ${peak.at})` : '',
        kinds.length ? `: ${kinds.join(', ')}.` : '.'
      )
    );
    if (peak.difference) {
      section.appendChild(
        h('p', { 'data-olympus-costs-difference': '1' }, peak.difference)
      );
    }
    const body = h('tbody', null, ...c.buffers.map(b => this._bufferRow(b)));
    const part = this.o.live?.part('costs', 'buffers') ?? null;
    if (c.buffers.length || part) {
      section.appendChild(
        h(
          'div',
          { class: 'olympus-table-wrap' },
          h(
            'table',
            {
              class: 'olympus-table olympus-cost-table',
              'data-olympus-table': 'cost-buffers'
            },
            h('caption', null, 'Buffers live at the peak, biggest first'),
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                ...['buffer', 'kind', 'shape', 'size', 'line'].map(t =>
                  h('th', { scope: 'col' }, t)
                )
              )
            ),
            body
          )
        )
      );
    }
    const more = this._fetched(
      part,
      'buffers at the peak',
      items =>
        this._readFetched({ buffers: items }).buffers.map(b =>
          this._bufferRow(b)
        ),
      body
    );
    if (more) {
      section.appendChild(more);
    }
    return section;
  }

  /** A buffer live at the peak, as a row (an argument by its pytree name). */
  private _bufferRow(b: ICosts['buffers'][number]): HTMLTableRowElement {
    const prov = this.o.links?.prov;
    const peak = this.o.costs.peak?.bytes ?? 0;
    return h(
      'tr',
      null,
      // An argument by its pytree name, XLA's label (param.136) beside it.
      b.argument !== null && b.kind === 'argument'
        ? h(
            'th',
            { scope: 'row', 'data-olympus-argument': '1' },
            b.argument,
            ' ',
            h('span', { class: 'olympus-hint' }, b.label)
          )
        : h(
            'th',
            { scope: 'row' },
            b.label,
            b.index && b.index !== '{}' ? ` ${b.index}` : ''
          ),
      h(
        'td',
        null,
        b.kind +
          (b.aliased_argument !== null
            ? ` (aliases argument ${b.aliased_argument}` +
              (b.argument !== null ? `: ${b.argument})` : ')')
            : '')
      ),
      h('td', { class: 'olympus-cost-shape' }, b.shape),
      h('td', null, figureCell(b.size, peak, formatBytes, 'div')),
      h(
        'td',
        null,
        b.line === null
          ? '—'
          : `${baseName(String((b.file !== null ? prov?.files[b.file]?.path : b.path) ?? '?'))}:${b.line}`
      )
    );
  }

  /**
   * Where the output cut list `part` of the costs and the kernel holds the rest:
   * the control that fetches the next items, makes them rows (`rows`, from the
   * items read as the report's own are) and appends them to `body`.
   */
  private _fetched(
    part: ILivePart | null,
    noun: string,
    rows: (items: unknown[]) => HTMLTableRowElement[],
    body: HTMLTableSectionElement
  ): HTMLElement | null {
    const live = this.o.live;
    if (!live || !part) {
      return null;
    }
    return loadMoreControl(live, part, noun, items => {
      const made = rows(items);
      for (const tr of made) {
        tr.setAttribute('data-olympus-fetched', '1');
        body.appendChild(tr);
      }
      return made.length;
    });
  }

  /** Items fetched from the kernel, read and checked as the report's own costs are. */
  private _readFetched(data: Record<string, unknown[]>): ICosts {
    const read = readCosts(data, this.o.links?.prov.files ?? []);
    if (!read) {
      throw new Error('The kernel sent costs this view cannot read.');
    }
    return read;
  }

  private _collectives(): HTMLElement {
    const c = this.o.costs;
    const section = h('section', {
      class: 'olympus-costs-section',
      'data-olympus-costs-collectives': '1'
    });
    section.appendChild(
      h('h4', { class: 'olympus-costs-title' }, 'Collectives')
    );
    const part = this.o.live?.part('costs', 'collectives') ?? null;
    if (!c.collectives.length && !part) {
      section.appendChild(
        h(
          'p',
          { class: 'olympus-hint', 'data-olympus-no-collectives': '1' },
          c.devices > 1
            ? 'No collectives: the compiler inserted none.'
            : 'No collectives: the program runs on one device.'
        )
      );
      return section;
    }
    const body = h(
      'tbody',
      null,
      ...c.collectives.map(col => this._collectiveRow(col))
    );
    section.appendChild(
      h(
        'div',
        { class: 'olympus-table-wrap' },
        h(
          'table',
          {
            class: 'olympus-table olympus-cost-table',
            'data-olympus-table': 'collectives'
          },
          h(
            'caption',
            null,
            c.devices > 1
              ? `Collectives of the compiled program (bytes per device of ${c.devices})`
              : 'Collectives of the compiled program'
          ),
          h(
            'thead',
            null,
            h(
              'tr',
              null,
              ...[
                'opcode',
                'kind',
                'replica groups',
                'group size',
                'bytes per device',
                'bytes moved',
                'line',
                'arguments moved',
                'parameters served',
                'shardings'
              ].map(t => h('th', { scope: 'col' }, t))
            )
          ),
          body
        )
      )
    );
    const more = this._fetched(
      part,
      'collectives',
      items =>
        this._readFetched({ collectives: items }).collectives.map(col =>
          this._collectiveRow(col)
        ),
      body
    );
    if (more) {
      section.appendChild(more);
    }
    return section;
  }

  /** A collective as a row: what it is, what it moves, the lines and shardings. */
  private _collectiveRow(
    col: ICosts['collectives'][number]
  ): HTMLTableRowElement {
    const prov = this.o.links?.prov;
    const where = (file: number | null, line: number) =>
      `${file !== null ? baseName(String(prov?.files[file]?.path ?? '?')) : '?'}:${line}`;
    return h(
      'tr',
      { title: col.text || null },
      h('th', { scope: 'row' }, col.opcode || col.label),
      h('td', null, col.kind),
      h('td', { class: 'olympus-cost-shape' }, col.replica_groups || '—'),
      h('td', null, col.group_size === null ? '—' : String(col.group_size)),
      h('td', null, formatBytes(col.result_bytes)),
      h(
        'td',
        null,
        col.moved_bytes === null ? '—' : formatBytes(col.moved_bytes)
      ),
      h('td', null, col.lines.map(([f, l]) => where(f, l)).join(', ') || '—'),
      h(
        'td',
        { class: 'olympus-cost-shape', 'data-olympus-moved': '1' },
        ...(col.arguments.length
          ? col.arguments.map(a => h('div', null, a))
          : ['—'])
      ),
      h(
        'td',
        { class: 'olympus-cost-shape', 'data-olympus-serves': '1' },
        ...(col.parameters.length
          ? col.parameters.map(a => h('div', null, a))
          : ['—'])
      ),
      h(
        'td',
        { class: 'olympus-cost-shape' },
        ...col.shardings.map(s => h('div', null, s))
      )
    );
  }

  private _shardings(): HTMLElement {
    const s = this.o.costs.shardings;
    const section = h('section', {
      class: 'olympus-costs-section',
      'data-olympus-costs-shardings': '1'
    });
    section.appendChild(h('h4', { class: 'olympus-costs-title' }, 'Shardings'));
    if (!s.inputs.length && !s.outputs.length) {
      section.appendChild(
        h('p', { class: 'olympus-hint' }, 'The compiled program names none.')
      );
      return section;
    }
    // Each by its pytree name where known (params/Dense_0/kernel), else its place.
    const rows = [
      ...s.inputs.map((t, i) => ['input', i, t, s.input_names[i]] as const),
      ...s.outputs.map((t, i) => ['output', i, t, s.output_names[i]] as const)
    ].map(([what, i, t, name]) =>
      h(
        'tr',
        null,
        name
          ? h('th', { scope: 'row', title: `${what} ${i}` }, name)
          : h('th', { scope: 'row' }, `${what} ${i}`),
        h('td', { class: 'olympus-cost-shape' }, t)
      )
    );
    section.appendChild(
      h(
        'div',
        { class: 'olympus-table-wrap' },
        h(
          'table',
          {
            class: 'olympus-table olympus-cost-table',
            'data-olympus-table': 'shardings'
          },
          h('caption', null, 'Shardings of the compiled program'),
          h(
            'thead',
            null,
            h(
              'tr',
              null,
              h('th', { scope: 'col' }, 'of'),
              h('th', { scope: 'col' }, 'sharding')
            )
          ),
          h('tbody', null, ...rows)
        )
      )
    );
    return section;
  }

  private _root: HTMLElement | null = null;
  /** Whether a line of the table has library lines (the others keep a toggle's room). */
  private _anyVia = false;
  private _lineBody: HTMLTableSectionElement | null = null;
  private _columns: IColumn[] | null = null;
  private _nextRow = 0;
  private _rowsByKey = new Map<SourceKey, HTMLTableRowElement[]>();
  private _ops = new Map<string, ICostOp>();
  private _opNode: HTMLElement | null = null;
}

/** A figure with its share of `total` as text and as a small bar (the bar is decoration). */
function figureCell(
  value: number,
  total: number,
  format: (v: number) => string,
  tag: 'td' | 'div' = 'td'
): HTMLElement {
  const share = shareOf(value, total);
  const width = Math.max(0, Math.min(100, share * 100));
  const fill = h('span', { class: 'olympus-cost-fill' });
  fill.style.width = `${width.toFixed(1)}%`;
  return h(
    tag,
    {
      class: 'olympus-cost-figure',
      title: `${value.toLocaleString('en-US')} (${formatShare(share)} of ${total.toLocaleString('en-US')})`
    },
    h('span', { class: 'olympus-cost-value' }, format(value)),
    h('span', { class: 'olympus-cost-share' }, formatShare(share)),
    h('span', { class: 'olympus-cost-bar', 'aria-hidden': 'true' }, fill)
  );
}
