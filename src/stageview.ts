/**
 * One program stage's text (olympuspr, StableHLO, HLO, compiled HLO, or any
 * program stage a report's table names) in a read-only editor, highlighted by the
 * language the table names. In a linked stage each op line carries the colour of
 * the source line that made it; the ops of the selected source line (and, in
 * compiled HLO, the fusions holding them) light up; clicking an op line selects
 * its source line. With the heatmap on (`setHeat`), a linked stage's gutter shows
 * each op line's cost: the largest share among the source lines its op is tied to.
 */
import { EditorView } from '@codemirror/view';
import { CostHeat } from './costview';
import {
  HeatMarks,
  createTextView,
  refreshDecorations,
  revealLine,
  setHeatGutter
} from './editor';
import { braceFolds, foldLines, hloTableLines, spanFolds } from './folds';
import { ISelection, LinkHub } from './hub';
import { stageLanguage } from './languages';
import { SourceKey, StageIndex } from './links';
import { IPanelView } from './panel';

export interface IStageViewOptions {
  /** The stage's name (its panel's `data-stage-panel`). */
  stage: string;
  /** The highlighter's name from the stage table (`hlo`, ...), or null for plain text. */
  language: string | null;
  text: string;
  /** The stage's provenance (none for a stage that is not linked, such as the pre-optimization HLO). */
  index: StageIndex | null;
  hub: LinkHub;
  /** The source stage, shown when an op line is clicked (null when the report shows none). */
  sourceStage: string | null;
  /** Show each op's source line as its tooltip. */
  debugInfo: boolean;
  /** `olympuspr of f`, for assistive technology. */
  label: string;
  parent: HTMLElement;
  /** Called once the editor has painted for the first time. */
  onPainted?: () => void;
}

export class StageView implements IPanelView {
  constructor(private readonly o: IStageViewOptions) {
    this.stage = o.stage;
  }

  readonly stage: string;

  /** The editor, once the panel has been shown. */
  get editor(): EditorView | null {
    return this._view;
  }

  show(): void {
    if (!this._view) {
      performance.mark?.('olympus:editor-start');
      this._view = this._create();
      performance.mark?.('olympus:editor-created');
      this.apply(this.o.hub.current);
      requestAnimationFrame(() => this.o.onPainted?.());
    } else {
      this._view.requestMeasure();
    }
    if (this._pending !== null && revealLine(this._view, this._pending)) {
      this._pending = null;
    }
  }

  apply(sel: ISelection): void {
    const index = this.o.index;
    const key: SourceKey | null = sel.source;
    this._linked = new Set();
    this._fusions = new Set();
    let first: number | null = null;
    if (index && key !== null) {
      const linked = index.linkedLines(key);
      linked.ops.forEach(l => this._linked.add(l));
      linked.fusions.forEach(l => this._fusions.add(l));
      first = linked.ops.length ? linked.ops[0] : null;
    }
    this._active =
      sel.origin && sel.origin.stage === this.stage ? sel.origin.line : 0;
    // The line to bring into sight: not in the view the user clicked in.
    const target = this._active ? null : first;
    if (!this._view) {
      this._pending = target ?? this._pending;
      return;
    }
    refreshDecorations(this._view);
    if (target !== null) {
      const hidden =
        !this._view.dom.isConnected || this._view.scrollDOM.clientHeight === 0;
      if (hidden) {
        this._pending = target; // shown later: catch up then
      } else if (sel.reveal) {
        revealLine(this._view, target, sel.transient ? 'nearest' : 'center');
      }
    }
  }

  focus(): void {
    this._view?.contentDOM.focus();
  }

  dispose(): void {
    this._view?.destroy();
    this._view = null;
  }

  /** Shows the heatmap of `heat` in the gutter of a linked stage (null: off). */
  setHeat(heat: CostHeat | null): void {
    this._heat = heat;
    this._marks = null;
    if (this._view && this.o.index) {
      setHeatGutter(this._view, this._heatMarks());
    }
  }

  /** The heatmap's marks of this stage's lines (made on first use), or null. */
  private _heatMarks(): HeatMarks | null {
    if (!this._marks && this._heat && this.o.index) {
      this._marks = this._heat.stageMarks(this.o.index);
    }
    return this._marks;
  }

  private _classes(line: number): string {
    const index = this.o.index;
    let cls = '';
    if (index) {
      const color = index.lineColor(line);
      if (color >= 0) {
        cls = `olympus-src-${color}`;
      }
    }
    if (this._linked.has(line)) {
      cls += ' olympus-linked';
    }
    if (this._fusions.has(line)) {
      cls += this._linked.has(line)
        ? ' olympus-fusion'
        : ' olympus-linked olympus-fusion';
    }
    if (line === this._active) {
      cls += ' olympus-active';
    }
    return cls.trim();
  }

  private _title(line: number): string | null {
    const index = this.o.index;
    if (!index) {
      return null;
    }
    const op = this.o.debugInfo ? index.lineOp(line) : -1;
    const own = op < 0 ? '' : index.describeOp(op);
    // The heatmap's figures too: the gutter is hidden from assistive technology.
    const heat = this._heat ? this._heatMarks()?.(line) : null;
    return heat ? (own ? `${own}\n${heat.title}` : heat.title) : own || null;
  }

  private _activate(line: number): void {
    const index = this.o.index;
    if (!index) {
      this.o.hub.select(null, { stage: this.stage, line });
      return;
    }
    const op = index.lineOp(line);
    let key = op < 0 ? null : index.opSource(op);
    if (key !== null && index.links.colorOf(key) === undefined) {
      key = null; // a caller's line: ops made there belong to the whole function
    }
    this.o.hub.select(key, { stage: this.stage, line });
    if (key !== null && this.o.sourceStage !== null) {
      this.o.hub.requestShow(this.o.sourceStage);
    }
  }

  private _create(): EditorView {
    const { index } = this.o;
    // HLO texts open with source tables (`FileNames` ... `StackFrames`): they fold, and start folded.
    const hloTables = this.o.language === 'hlo';
    const folds = index
      ? spanFolds(state => {
          const ends = new Map(index.foldEnds());
          const table = hloTables ? hloTableLines(state) : null;
          if (table) {
            ends.set(table[0], table[1]);
          }
          return ends;
        })
      : braceFolds();
    const view = createTextView({
      doc: this.o.text,
      parent: this.o.parent,
      language: stageLanguage(this.o.language),
      label: this.o.label,
      decorator: {
        classes: line => this._classes(line),
        title: line => this._title(line)
      },
      onActivate: line => this._activate(line),
      onEscape: () => this.o.hub.clear(),
      heat: this._heatMarks(),
      extensions: [folds]
    });
    if (hloTables) {
      const table = hloTableLines(view.state);
      if (table) {
        foldLines(view, table[0], table[1]);
      }
    }
    return view;
  }

  private _view: EditorView | null = null;
  private _heat: CostHeat | null = null;
  private _marks: HeatMarks | null = null;
  private _linked = new Set<number>();
  private _fusions = new Set<number>();
  private _active = 0;
  private _pending: number | null = null;
}
