/**
 * The `passes` panel (stages of kind `passes`): XLA's pass pipeline, pass by pass,
 * from the report's `passes` data (see `olympus_jupyter/report/passes_view.py`).
 *
 * - the list of passes: those that changed the module first-class (pipeline,
 *   pass, instructions before → after, lines added and removed); pipeline starts,
 *   passes that changed nothing and context rows behind a toggle;
 * - a pass's diff (the module before → after it) in CodeMirror's merge view, the
 *   modules read back from `before` and the deltas on first use (and kept);
 * - the selected source line's journey: the instructions that carried it at the
 *   start, what each pass did to them (an event opens that pass's diff, its first
 *   label marked), and those that carry it at the end; where the user picked an
 *   op of olympuspr or StableHLO, that op's own journey (`op_journeys`) instead.
 *
 * Every string of the report is data: the DOM is built with text nodes only, and
 * delta items out of range are clamped.
 *
 * DOM hooks (tests and styles): `[data-olympus-passes]`; the list
 * `ol[data-olympus-pass-list]` of `li[data-pass-kind]`, each pass that has a module
 * a `button[data-olympus-pass-row=<row>]` (`aria-current` on the open one);
 * `button[data-olympus-action=show-unchanged]`; `[data-olympus-journey]` with
 * `button[data-olympus-journey-event=<i>]` (`data-op` on it: the op id of an
 * op's journey); `[data-olympus-pass-diff]`
 * (`data-row` of the open pass) holding `.cm-mergeView`, its label lines
 * `.cm-line.olympus-pass-hit`; the note `[data-olympus-passes-note]`. User Timing:
 * `olympus:passes-paint` (the panel built, to its first frame).
 */
import { Change, MergeView, diff as textDiff } from '@codemirror/merge';
import {
  Extension,
  RangeSetBuilder,
  StateEffect,
  StateField
} from '@codemirror/state';
import { Decoration, DecorationSet, EditorView } from '@codemirror/view';
import { h } from './dom';
import { mergeSideExtensions } from './editor';
import { ISelection, LinkHub } from './hub';
import { IOpRef, LinkIndex, parseKey, pickedOp } from './links';
import {
  IJourney,
  IOpJourney,
  IPassCarrier,
  IPassRow,
  IPasses,
  IStageInfo,
  baseName
} from './model';
import { LiveSource, loadMoreControl } from './livekernel';
import { IPanelView } from './panel';

/** The most lines a module read back from deltas may have (hostile data cannot make more). */
export const MAX_MODULE_LINES = 5_000_000;

/**
 * The modules of a pass pipeline, read back from `before` and the deltas on first
 * use; every module read is kept (as arrays of lines, which share their strings
 * with the module before, so a hundred steps of a big program cost little).
 */
export class PassModules {
  constructor(data: IPasses) {
    this._before = String(data.before ?? '').split('\n');
    this._deltas = Array.isArray(data.deltas) ? data.deltas : [];
  }

  /** The number of dumped steps. */
  get steps(): number {
    return this._deltas.length;
  }

  /** The module before the first pass. */
  get initial(): string[] {
    return this._before;
  }

  /** The module after dumped step `k`, or null (left out, or `k` out of range). */
  after(k: number): string[] | null {
    if (!Number.isInteger(k) || k < 0 || k >= this._deltas.length) {
      return null;
    }
    let j = k;
    while (j >= 0 && this._modules[j] === undefined) {
      j--;
    }
    let previous: string[] | null =
      j < 0 ? this._before : (this._modules[j] ?? null);
    for (let s = j + 1; s <= k; s++) {
      const next: string[] | null =
        previous === null ? null : decodeDelta(previous, this._deltas[s]);
      this._modules[s] = next;
      previous = next;
    }
    return this._modules[k] ?? null;
  }

  /** The module before dumped step `k` (the one after `k - 1`), or null. */
  before(k: number): string[] | null {
    return k === 0 ? this._before : this.after(k - 1);
  }

  private _before: string[];
  private _deltas: unknown[];
  private _modules: Array<string[] | null | undefined> = [];
}

/**
 * A module from the one before and a delta: each item a new line (a string) or
 * `[i, j]`, lines `i` to `j - 1` of `previous` (clamped to it). Null for a delta
 * left out (or not a list), or one that would make more than `MAX_MODULE_LINES`.
 */
export function decodeDelta(
  previous: string[],
  delta: unknown
): string[] | null {
  if (!Array.isArray(delta)) {
    return null;
  }
  const out: string[] = [];
  const n = previous.length;
  for (const item of delta) {
    if (typeof item === 'string') {
      out.push(item);
    } else if (Array.isArray(item) && item.length === 2) {
      const [i, j] = clampRange(item[0], item[1], n);
      if (out.length + (j - i) > MAX_MODULE_LINES) {
        return null;
      }
      for (let k = i; k < j; k++) {
        out.push(previous[k]);
      }
    }
    if (out.length > MAX_MODULE_LINES) {
      return null;
    }
  }
  return out;
}

function clampRange(a: unknown, b: unknown, n: number): [number, number] {
  const i = Math.max(0, Math.min(n, Math.floor(Number(a)) || 0));
  const j = Math.max(i, Math.min(n, Math.floor(Number(b)) || 0));
  return [i, j];
}

/**
 * The changes between a module and the next as the merge view takes them (offsets
 * in characters), straight from the delta's kept ranges: no text diff to run,
 * however big the module. A kept range that goes back (not in a delta Olympus
 * writes) counts as new lines.
 */
export function deltaChanges(
  a: string[],
  b: string[],
  delta: unknown
): Change[] | null {
  if (!Array.isArray(delta)) {
    return null;
  }
  // Line starts, as if every line ended with a newline.
  const startsA = lineStarts(a);
  const startsB = lineStarts(b);
  const lenA = startsA[a.length] - 1;
  const lenB = startsB[b.length] - 1;
  const out: Change[] = [];
  let ia = 0; // the first line of `a` after the last kept range
  let kb = 0; // the first line of `b` after the last kept range
  let ib = 0; // the next line of `b`
  const flush = (toA: number, toB: number) => {
    if (toA === ia && toB === kb) {
      return;
    }
    let fromA = startsA[ia];
    let fromB = startsB[kb];
    let endA = startsA[toA];
    let endB = startsB[toB];
    if (toA === a.length && toB === b.length) {
      // The end of both texts: no last newline; take the one before instead.
      if (fromA > 0 && fromB > 0) {
        fromA--;
        fromB--;
        endA--;
        endB--;
      } else {
        endA = Math.min(endA, lenA);
        endB = Math.min(endB, lenB);
      }
    }
    out.push(new Change(fromA, endA, fromB, endB));
  };
  for (const item of delta) {
    if (typeof item === 'string') {
      ib++;
      continue;
    }
    if (!Array.isArray(item) || item.length !== 2) {
      continue;
    }
    const [i, j] = clampRange(item[0], item[1], a.length);
    if (i < ia) {
      ib += j - i; // copied again, or out of order: new lines here
      continue;
    }
    if (j === i) {
      continue;
    }
    flush(i, ib);
    ia = j;
    ib += j - i;
    kb = ib;
  }
  if (ib !== b.length) {
    return null; // not the delta of these texts
  }
  flush(a.length, b.length);
  return out;
}

function lineStarts(lines: string[]): number[] {
  const starts = new Array<number>(lines.length + 1);
  let at = 0;
  for (let i = 0; i < lines.length; i++) {
    starts[i] = at;
    at += lines[i].length + 1;
  }
  starts[lines.length] = at;
  return starts;
}

/** Whether `label` stands on `line` as an instruction's or computation's name. */
function definesLabel(line: string, label: string): boolean {
  let at = line.indexOf(label);
  while (at >= 0) {
    const before = at > 0 ? line.charAt(at - 1) : ' ';
    const after = line.charAt(at + label.length);
    if (!/[\w.-]/.test(before) && !/[\w.-]/.test(after)) {
      return true;
    }
    at = line.indexOf(label, at + 1);
  }
  return false;
}

/**
 * The line (0-based) that names `label` first: the one defining it
 * (`%label = ...`, `ROOT label = ...`, a computation `label {`), else the first
 * that holds it as a name; -1 when none does.
 */
export function findLabel(lines: string[], label: string): number {
  if (!label) {
    return -1;
  }
  let any = -1;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.indexOf(label) < 0 || !definesLabel(line, label)) {
      continue;
    }
    const head = line
      .trimStart()
      .replace(/^ROOT\s+/, '')
      .replace(/^%/, '');
    if (head.startsWith(label)) {
      const rest = head.slice(label.length).trimStart();
      if (
        rest.startsWith('=') ||
        rest.startsWith('{') ||
        rest.startsWith('(')
      ) {
        return i;
      }
    }
    if (any < 0) {
      any = i;
    }
  }
  return any;
}

/** Marks lines of a merge side (`olympus-pass-hit`): the labels of a journey's event. */
const setHits = StateEffect.define<number[]>();

const hitField = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(value, tr) {
    for (const e of tr.effects) {
      if (e.is(setHits)) {
        const builder = new RangeSetBuilder<Decoration>();
        const doc = tr.state.doc;
        for (const line of [...new Set(e.value)].sort((x, y) => x - y)) {
          if (line >= 1 && line <= doc.lines) {
            builder.add(doc.line(line).from, doc.line(line).from, HIT);
          }
        }
        return builder.finish();
      }
    }
    return value.map(tr.changes);
  },
  provide: f => EditorView.decorations.from(f)
});

const HIT = Decoration.line({ class: 'olympus-pass-hit' });

function sideExtensions(language: string | null, label: string): Extension[] {
  return [...mergeSideExtensions(language, label), hitField];
}

function count(n: number): string {
  return (Number(n) || 0).toLocaleString('en-US');
}

function carrierText(c: IPassCarrier): string {
  if (c.fusion) {
    return `${c.label} in ${c.fusion}${c.fusion_kind ? `, ${c.fusion_kind}` : ''}`;
  }
  return `${c.label} (${c.opcode})`;
}

const KIND_WORDS: Readonly<Record<string, string>> = {
  start: 'pipeline start',
  changed: 'changed',
  unchanged: 'changed nothing',
  context: 'context'
};

export interface IPassViewOptions {
  stage: IStageInfo;
  passes: IPasses;
  hub: LinkHub;
  /** The report's source files' paths (journeys name a file by index). */
  files: string[];
  /** The report's links (null: no provenance): which op a picked op line is. */
  links?: LinkIndex | null;
  /** `XLA passes of f`, for assistive technology. */
  label: string;
  parent: HTMLElement;
  /** Called once the panel has painted for the first time. */
  onPainted?: () => void;
  /** Where the output was capped: the kernel that holds the rest (null: not capped). */
  live?: LiveSource | null;
}

/** A journey as the kernel sends it, checked enough for the view to show it. */
function isJourney(v: unknown): v is IJourney {
  const j = v as IJourney;
  return (
    typeof v === 'object' &&
    v !== null &&
    Number.isInteger(j.file) &&
    Number.isInteger(j.line) &&
    Array.isArray(j.start) &&
    Array.isArray(j.end) &&
    Array.isArray(j.events) &&
    j.events.every(e => typeof e === 'object' && e !== null)
  );
}

export class PassView implements IPanelView {
  constructor(private readonly o: IPassViewOptions) {
    this.stage = o.stage.name;
    const p = o.passes;
    this._rows = Array.isArray(p.rows) ? p.rows : [];
    this._modules = new PassModules(p);
    for (const j of Array.isArray(p.journeys) ? p.journeys : []) {
      this._journeys.set(`${j.file}:${j.line}`, j);
    }
    for (const j of Array.isArray(p.op_journeys) ? p.op_journeys : []) {
      for (const op of Array.isArray(j.ops) ? j.ops : []) {
        this._opJourneys.set(String(op), j);
      }
    }
  }

  readonly stage: string;

  show(): void {
    if (!this._root) {
      performance.mark?.('olympus:passes-start');
      this._root = this._build();
      this.o.parent.appendChild(this._root);
      this.apply(this.o.hub.current);
      performance.mark?.('olympus:passes-built');
      requestAnimationFrame(() => {
        this._root?.setAttribute('data-olympus-passes-painted', '1');
        try {
          // For benchmarks: building the panel to its first frame.
          performance.measure('olympus:passes-paint', 'olympus:passes-start');
        } catch {
          // no start mark (cleared by the page): nothing to measure
        }
        this.o.onPainted?.();
      });
    } else {
      this._merge?.a.requestMeasure();
      this._merge?.b.requestMeasure();
    }
  }

  apply(sel: ISelection): void {
    this._selection = sel;
    if (this._journeyNode) {
      this._renderJourney();
    }
  }

  focus(): void {
    const target =
      this._list?.querySelector<HTMLElement>('button[tabindex="0"]') ??
      this._list?.querySelector<HTMLElement>('button');
    target?.focus();
  }

  dispose(): void {
    this._merge?.destroy();
    this._merge = null;
    this._root?.remove();
    this._root = null;
  }

  /** Opens the diff of row `row` (as a click on it does); marks `labels` in it. */
  openRow(row: number, labels: string[] = []): void {
    this._open(row, labels);
  }

  private _build(): HTMLElement {
    const p = this.o.passes;
    const rows = this._rows;
    const changed = rows.filter(r => r.kind === 'changed').length;
    const quiet = rows.length - changed;
    const root = h('div', {
      class: 'olympus-passes',
      'data-olympus-passes': '1'
    });
    if (p.note) {
      root.appendChild(
        h(
          'p',
          { class: 'olympus-note', 'data-olympus-passes-note': '1' },
          String(p.note)
        )
      );
    }
    root.appendChild(
      h(
        'p',
        { class: 'olympus-passes-summary' },
        `${count(changed)} ${changed === 1 ? 'pass' : 'passes'} changed ${p.module ? String(p.module) : 'the module'}`,
        ` · ${count(quiet)} other ${quiet === 1 ? 'row' : 'rows'}`,
        p.pass_re && p.pass_re !== '.*'
          ? ` · passes matching ${String(p.pass_re)}`
          : ''
      )
    );

    this._journeyNode = h('section', {
      class: 'olympus-journey',
      'data-olympus-journey': '1',
      'aria-live': 'polite',
      'aria-label': 'Where the selected line went'
    });
    root.appendChild(this._journeyNode);
    const live = this.o.live;
    const part = live?.part('passes', 'journeys');
    if (live && part) {
      this._journeysLeftOut = true;
      let shown = part.shown;
      root.appendChild(
        loadMoreControl(live, part, 'source lines’ journeys', items => {
          const got = items.filter(isJourney);
          for (const j of got) {
            this._journeys.set(`${j.file}:${j.line}`, j);
          }
          shown += items.length;
          this._journeysLeftOut = shown < part.total;
          if (this._journeyNode) {
            this._renderJourney();
          }
          return got.length;
        })
      );
    }

    const main = h('div', { class: 'olympus-passes-main' });
    root.appendChild(main);

    const listWrap = h('div', { class: 'olympus-pass-list-wrap' });
    main.appendChild(listWrap);
    const toggle = h(
      'button',
      {
        type: 'button',
        class: 'olympus-button olympus-pass-toggle',
        'data-olympus-action': 'show-unchanged',
        'aria-expanded': 'false'
      },
      `show passes that changed nothing (${count(quiet)})`
    );
    this._toggle = toggle;
    toggle.disabled = quiet === 0;
    listWrap.appendChild(toggle);
    const list = h('ol', {
      class: 'olympus-pass-list',
      'data-olympus-pass-list': '1',
      'aria-label': `Passes of ${this.o.label}`
    });
    this._list = list;
    listWrap.appendChild(list);
    toggle.setAttribute('aria-controls', (list.id = `${nextId()}-list`));
    toggle.addEventListener('click', () => this._setShowAll(!this._showAll));
    let first = true;
    rows.forEach((row, i) => {
      const item = this._rowItem(row, i);
      if (item.button && first && row.kind === 'changed') {
        item.button.tabIndex = 0;
        first = false;
      }
      list.appendChild(item.node);
    });
    if (first) {
      const any = list.querySelector('button');
      if (any) {
        (any as HTMLElement).tabIndex = 0;
      }
    }
    list.addEventListener('keydown', e => this._onListKey(e));

    this._diffNode = h(
      'section',
      {
        class: 'olympus-pass-diff',
        'data-olympus-pass-diff': '1',
        'aria-label': 'What the chosen pass changed'
      },
      h(
        'p',
        { class: 'olympus-hint' },
        'Choose a pass to see what it changed in the module.'
      )
    );
    main.appendChild(this._diffNode);
    return root;
  }

  private _rowItem(
    row: IPassRow,
    i: number
  ): { node: HTMLElement; button: HTMLButtonElement | null } {
    const kind = String(row.kind);
    const quiet = kind !== 'changed';
    const pipeline = h(
      'span',
      { class: 'olympus-pass-pipeline' },
      String(row.pipeline)
    );
    const name = h(
      'span',
      { class: 'olympus-pass-name' },
      kind === 'start' ? `${row.pipeline} starts` : String(row.pass)
    );
    const counts = h(
      'span',
      { class: 'olympus-pass-count' },
      row.instructions_before === row.instructions
        ? `${count(row.instructions)} instructions`
        : `${count(row.instructions_before)} → ${count(row.instructions)} instructions`
    );
    const parts: Array<HTMLElement> = [name, pipeline, counts];
    if (row.added || row.removed) {
      parts.push(
        h(
          'span',
          { class: 'olympus-pass-lines' },
          h('span', { class: 'olympus-pass-added' }, `+${count(row.added)}`),
          ' ',
          h('span', { class: 'olympus-pass-removed' }, `−${count(row.removed)}`)
        )
      );
    } else if (kind === 'changed') {
      // XLA may call a change what prints the same (layouts it kept, say).
      parts.push(h('span', { class: 'olympus-pass-lines' }, 'same text'));
    }
    if (quiet) {
      parts.push(
        h('span', { class: 'olympus-pass-kind' }, KIND_WORDS[kind] ?? kind)
      );
    }
    const li = h('li', {
      class: `olympus-pass-item${quiet ? ' olympus-pass-quiet' : ''}`,
      'data-pass-kind': kind,
      hidden: quiet
    });
    let button: HTMLButtonElement | null = null;
    if (typeof row.step === 'number') {
      button = h(
        'button',
        {
          type: 'button',
          class: 'olympus-pass',
          'data-olympus-pass-row': i,
          tabindex: -1
        },
        ...parts
      );
      button.addEventListener('click', () => this._open(i, []));
      li.appendChild(button);
    } else {
      li.appendChild(h('span', { class: 'olympus-pass' }, ...parts));
    }
    this._items.set(i, li);
    return { node: li, button };
  }

  private _setShowAll(on: boolean): void {
    this._showAll = on;
    this._toggle?.setAttribute('aria-expanded', on ? 'true' : 'false');
    if (this._toggle) {
      const quiet = this._rows.filter(r => r.kind !== 'changed').length;
      this._toggle.textContent = on
        ? `hide passes that changed nothing (${count(quiet)})`
        : `show passes that changed nothing (${count(quiet)})`;
    }
    for (const li of this._items.values()) {
      if (li.classList.contains('olympus-pass-quiet')) {
        li.hidden = !on && li.dataset.current !== '1';
      }
    }
  }

  /** Arrow keys, Home and End move between the passes (Enter or Space opens one). */
  private _onListKey(e: KeyboardEvent): void {
    if (!this._list) {
      return;
    }
    const buttons = [
      ...this._list.querySelectorAll<HTMLButtonElement>('button')
    ].filter(b => !(b.parentElement as HTMLElement).hidden);
    if (!buttons.length) {
      return;
    }
    const at = buttons.indexOf(document.activeElement as HTMLButtonElement);
    let to: number;
    switch (e.key) {
      case 'ArrowDown':
        to = Math.min(buttons.length - 1, at + 1);
        break;
      case 'ArrowUp':
        to = Math.max(0, at - 1);
        break;
      case 'Home':
        to = 0;
        break;
      case 'End':
        to = buttons.length - 1;
        break;
      default:
        return;
    }
    e.preventDefault();
    e.stopPropagation();
    this._rove(buttons[to]);
    buttons[to].focus();
  }

  private _rove(button: HTMLButtonElement): void {
    this._list
      ?.querySelectorAll<HTMLButtonElement>('button[tabindex="0"]')
      .forEach(b => (b.tabIndex = -1));
    button.tabIndex = 0;
  }

  private _open(index: number, labels: string[]): void {
    if (!this._root) {
      this.show();
    }
    const diffNode = this._diffNode!;
    const row = this._rows[index];
    // The list marks the open pass (a quiet row shows while it is open).
    for (const [i, li] of this._items) {
      const on = i === index;
      const b = li.querySelector('button');
      if (on) {
        li.dataset.current = '1';
        b?.setAttribute('aria-current', 'true');
        if (b) {
          this._rove(b);
        }
        li.hidden = false;
      } else if (li.dataset.current) {
        delete li.dataset.current;
        b?.removeAttribute('aria-current');
        if (li.classList.contains('olympus-pass-quiet') && !this._showAll) {
          li.hidden = true;
        }
      }
    }
    this._items.get(index)?.scrollIntoView?.({ block: 'nearest' });
    this._merge?.destroy();
    this._merge = null;
    diffNode.textContent = '';
    diffNode.dataset.row = String(index);
    if (!row) {
      return;
    }
    const step = row.step;
    const title = h(
      'h4',
      { class: 'olympus-pass-diff-title' },
      h(
        'span',
        { class: 'olympus-pass-name' },
        row.kind === 'start' ? `${row.pipeline} starts` : String(row.pass)
      ),
      ' ',
      h('span', { class: 'olympus-pass-pipeline' }, String(row.pipeline)),
      ' ',
      h(
        'span',
        { class: 'olympus-panel-meta' },
        `${count(row.instructions_before)} → ${count(row.instructions)} instructions · +${count(row.added)} −${count(row.removed)} lines`
      )
    );
    diffNode.appendChild(title);
    const before = typeof step === 'number' ? this._modules.before(step) : null;
    const after = typeof step === 'number' ? this._modules.after(step) : null;
    if (before === null || after === null) {
      diffNode.appendChild(
        h(
          'p',
          { class: 'olympus-unavailable', 'data-olympus-unavailable': 'pass' },
          typeof step !== 'number'
            ? 'XLA wrote no module after this pass: it changed nothing.'
            : 'The module after this pass is left out of this report.'
        )
      );
      return;
    }
    diffNode.appendChild(
      h(
        'div',
        { class: 'olympus-diff-labels' },
        h('span', { class: 'olympus-diff-label' }, 'before the pass'),
        h('span', { class: 'olympus-diff-label' }, 'after the pass')
      )
    );
    const host = h('div', { class: 'olympus-merge' });
    diffNode.appendChild(host);
    const delta = this.o.passes.deltas[step!];
    const changes = deltaChanges(before, after, delta);
    // Where the labels are, and whether the first is in sight of a change: an
    // unchanged stretch around it would be folded away.
    const hitsA: number[] = [];
    const hitsB: number[] = [];
    let target: { side: 'a' | 'b'; line: number } | null = null;
    for (const label of labels.map(String)) {
      const lb = findLabel(after, label);
      const la = findLabel(before, label);
      if (lb >= 0) {
        hitsB.push(lb + 1);
      }
      if (la >= 0) {
        hitsA.push(la + 1);
      }
      if (!target) {
        target =
          lb >= 0
            ? { side: 'b', line: lb + 1 }
            : la >= 0
              ? { side: 'a', line: la + 1 }
              : null;
      }
    }
    const make = (collapse: boolean) =>
      new MergeView({
        a: {
          doc: before.join('\n'),
          extensions: sideExtensions(
            this.o.stage.language,
            `${row.pass}: the module before`
          )
        },
        b: {
          doc: after.join('\n'),
          extensions: sideExtensions(
            this.o.stage.language,
            `${row.pass}: the module after`
          )
        },
        parent: host,
        gutter: true,
        highlightChanges: true,
        collapseUnchanged: collapse ? { margin: 3, minSize: 8 } : undefined,
        diffConfig: {
          scanLimit: 2000,
          timeout: 200,
          override: changes
            ? (a: string, b: string) =>
                a.length === textLength(before) &&
                b.length === textLength(after)
                  ? changes
                  : textDiff(a, b, { scanLimit: 2000, timeout: 200 })
            : undefined
        }
      });
    let view = make(true);
    if (target && !nearChunk(view, target.side, target.line, 3)) {
      view.destroy();
      view = make(false);
    }
    this._merge = view;
    view.a.dispatch({ effects: setHits.of(hitsA) });
    view.b.dispatch({ effects: setHits.of(hitsB) });
    const chunks = view.chunks.length;
    title.appendChild(
      h(
        'span',
        { class: 'olympus-panel-meta', 'data-olympus-changes': chunks },
        chunks === 0
          ? ' · no changes'
          : chunks === 1
            ? ' · 1 changed region'
            : ` · ${count(chunks)} changed regions`
      )
    );
    if (target) {
      const side = target.side === 'a' ? view.a : view.b;
      const pos = side.state.doc.line(target.line).from;
      side.dispatch({
        effects: EditorView.scrollIntoView(pos, { y: 'center' })
      });
    }
  }

  private _renderJourney(): void {
    const node = this._journeyNode!;
    node.textContent = '';
    delete node.dataset.op;
    const op = pickedOp(this.o.links ?? null, this._selection.origin);
    if (op && this._renderOpJourney(node, op)) {
      delete node.dataset.line;
      return;
    }
    const key = this._selection.source;
    if (key === null) {
      node.appendChild(
        h(
          'p',
          { class: 'olympus-hint' },
          'Select a source line, or an op of olympuspr or StableHLO, to see where its instructions went through the passes.'
        )
      );
      return;
    }
    const { file, line } = parseKey(key);
    const path = this.o.files[file];
    const where = `${path ? baseName(path) : 'line'}:${line}`;
    const j = this._journeys.get(`${file}:${line}`);
    node.dataset.line = String(line);
    if (!j) {
      node.appendChild(
        h(
          'p',
          { class: 'olympus-hint', 'data-olympus-journey-none': '1' },
          this._journeysLeftOut
            ? `${where}: its journey is not among those this output shows: load more from the kernel below.`
            : `${where}: no instructions of this line reached XLA's passes.`
        )
      );
      return;
    }
    node.appendChild(
      h('h4', { class: 'olympus-journey-title' }, `Where ${where} went`)
    );
    this._journeyBody(node, j, where);
  }

  /**
   * The journey of the op the user picked, where the data holds it (true), else
   * nothing shown (false: the line's journey is shown instead).
   */
  private _renderOpJourney(node: HTMLElement, op: IOpRef): boolean {
    const j = this._opJourneys.get(op.id);
    if (!j) {
      return false;
    }
    const where = `${op.name} (${op.id})`;
    node.dataset.op = op.id;
    node.appendChild(
      h('h4', { class: 'olympus-journey-title' }, `Where ${where} went`)
    );
    const others = (Array.isArray(j.ops) ? j.ops : [])
      .map(String)
      .filter(o => o !== op.id);
    if (others.length) {
      node.appendChild(
        h(
          'p',
          { class: 'olympus-hint', 'data-olympus-journey-shared': '1' },
          `XLA's metadata does not tell it from ${others.length === 1 ? 'op' : 'ops'} ${others.slice(0, 8).join(', ')}${others.length > 8 ? '…' : ''}: they share these instructions.`
        )
      );
    }
    this._journeyBody(node, j, where);
    return true;
  }

  /** A journey's carriers at the start, its events and its carriers at the end. */
  private _journeyBody(
    node: HTMLElement,
    j: IJourney | IOpJourney,
    where: string
  ): void {
    node.appendChild(this._carriers('At the start', j.start, 'start'));
    const events = Array.isArray(j.events) ? j.events : [];
    if (!events.length) {
      node.appendChild(
        h('p', { class: 'olympus-hint' }, 'No pass changed its instructions.')
      );
    }
    const ol = h('ol', {
      class: 'olympus-journey-events',
      'aria-label': `What the passes did to ${where}`
    });
    events.forEach((ev, i) => {
      const labels = Array.isArray(ev.labels) ? ev.labels.map(String) : [];
      const kind = String(ev.kind);
      const button = h(
        'button',
        {
          type: 'button',
          class: 'olympus-journey-event',
          'data-olympus-journey-event': i,
          'data-event-kind': kind,
          'data-row': ev.row
        },
        h('span', { class: 'olympus-pass-name' }, String(ev.pass)),
        h('span', { class: 'olympus-event-kind' }, kind),
        h('span', { class: 'olympus-event-detail' }, String(ev.detail)),
        h('span', { class: 'olympus-pass-pipeline' }, String(ev.pipeline))
      );
      const row = Number(ev.row);
      if (!Number.isInteger(row) || !this._rows[row]) {
        button.disabled = true;
      }
      button.addEventListener('click', () => this._open(row, labels));
      ol.appendChild(h('li', null, button));
    });
    node.appendChild(ol);
    node.appendChild(this._carriers('At the end', j.end, 'end'));
  }

  private _carriers(
    title: string,
    carriers: IPassCarrier[],
    which: string
  ): HTMLElement {
    const list = Array.isArray(carriers) ? carriers : [];
    return h(
      'p',
      { class: 'olympus-journey-carriers', 'data-olympus-carriers': which },
      h('span', { class: 'olympus-journey-when' }, `${title}: `),
      ...(list.length
        ? list.map(c => h('code', { class: 'olympus-carrier' }, carrierText(c)))
        : [h('span', { class: 'olympus-hint' }, 'nothing (removed)')])
    );
  }

  private _rows: IPassRow[];
  private _modules: PassModules;
  private _journeys = new Map<string, IJourney>();
  private _opJourneys = new Map<string, IOpJourney>();
  /** Whether the output left journeys out that the kernel holds. */
  private _journeysLeftOut = false;
  private _selection: ISelection = {
    source: null,
    origin: null,
    reveal: false,
    transient: false
  };
  private _root: HTMLElement | null = null;
  private _journeyNode: HTMLElement | null = null;
  private _list: HTMLElement | null = null;
  private _toggle: HTMLButtonElement | null = null;
  private _diffNode: HTMLElement | null = null;
  private _items = new Map<number, HTMLElement>();
  private _showAll = false;
  private _merge: MergeView | null = null;
}

let _next = 0;
function nextId(): string {
  return `olympus-passes-${++_next}`;
}

function textLength(lines: string[]): number {
  let n = lines.length ? lines.length - 1 : 0;
  for (const l of lines) {
    n += l.length;
  }
  return n;
}

/** Whether line `line` of a side is within `margin` lines of a changed chunk. */
function nearChunk(
  view: MergeView,
  side: 'a' | 'b',
  line: number,
  margin: number
): boolean {
  const doc = (side === 'a' ? view.a : view.b).state.doc;
  for (const c of view.chunks) {
    const from = doc.lineAt(side === 'a' ? c.fromA : c.fromB).number;
    const to = doc.lineAt(side === 'a' ? c.endA : c.endB).number;
    if (line >= from - margin && line <= to + margin) {
      return true;
    }
  }
  return false;
}
