/**
 * The Python source of the staged function (from the report's file chunks) in a
 * read-only editor with the files' own line numbers. Every line that made ops has
 * a colour, which its ops carry in every stage; hovering or clicking it (or Enter
 * on it) lights up and scrolls to those ops. With the heatmap on (`setHeat`), a
 * gutter shows each line's share of the chosen cost, its figures on hover.
 */
import {
  Compartment,
  EditorState,
  Extension,
  StateField
} from '@codemirror/state';
import {
  Decoration,
  DecorationSet,
  EditorView,
  WidgetType
} from '@codemirror/view';
import { CostHeat } from './costview';
import {
  HeatMarks,
  createTextView,
  refreshDecorations,
  revealLine,
  setHeatGutter
} from './editor';
import { pythonLanguage } from './host';
import { ISelection, LinkHub } from './hub';
import { LinkIndex, SourceKey, sourceKey } from './links';
import { IStageInfo } from './model';
import { IPanelView } from './panel';

/** The source text a report holds, as one document. */
export interface ISourceDoc {
  text: string;
  /** Doc line (1-based) → source line. */
  keys: (SourceKey | null)[];
  /** Doc line → line number in its file. */
  numbers: number[];
  /** Doc line → a note shown above it (the file's path, or lines left out). */
  headers: Map<number, string>;
  /** Source line → doc line. */
  lineOf: Map<SourceKey, number>;
  /** The doc line of the function's first line, if held. */
  functionLine: number | null;
}

/**
 * The function's file and every file holding a line that made ops, each as the
 * chunks the report holds (in line order, a note where lines are left out).
 */
export function buildSourceDoc(links: LinkIndex): ISourceDoc {
  const prov = links.prov;
  const fn = prov.function;
  const files = new Set<number>();
  if (fn.file !== null) {
    files.add(fn.file);
  }
  const made = links.sourceLines;
  made.forEach(key => files.add(Number(key.split(':')[0])));
  const order = [...files].sort((a, b) =>
    a === fn.file ? -1 : b === fn.file ? 1 : a - b
  );
  const parts: string[] = [];
  const doc: ISourceDoc = {
    text: '',
    keys: [null],
    numbers: [0],
    headers: new Map(),
    lineOf: new Map(),
    functionLine: null
  };
  for (const fi of order) {
    const file = prov.files[fi];
    if (!file || !file.chunks || !file.chunks.length) {
      continue;
    }
    let next: number | null = null;
    for (const [first, text] of file.chunks) {
      const lines = text.split('\n');
      if (lines.length > 1 && lines[lines.length - 1] === '') {
        lines.pop();
      }
      const docLine = parts.length + 1;
      if (next === null) {
        doc.headers.set(docLine, file.path);
      } else if (first > next) {
        doc.headers.set(
          docLine,
          `⋯ lines ${next}–${first - 1} are not in the report`
        );
      }
      lines.forEach((line, k) => {
        const n = first + k;
        const key = sourceKey(fi, n);
        parts.push(line);
        doc.keys.push(key);
        doc.numbers.push(n);
        doc.lineOf.set(key, parts.length);
        if (fi === fn.file && n === fn.first_line) {
          doc.functionLine = parts.length;
        }
      });
      next = first + lines.length;
    }
  }
  doc.text = parts.join('\n');
  return doc;
}

class NoteWidget extends WidgetType {
  constructor(readonly text: string) {
    super();
  }
  eq(other: NoteWidget): boolean {
    return other.text === this.text;
  }
  toDOM(): HTMLElement {
    const el = document.createElement('div');
    el.className = 'olympus-source-note';
    el.textContent = this.text;
    return el;
  }
}

function notes(headers: Map<number, string>): Extension {
  return StateField.define<DecorationSet>({
    create(state: EditorState) {
      const ranges = [...headers.entries()]
        .filter(([line]) => line <= state.doc.lines)
        .sort((a, b) => a[0] - b[0])
        .map(([line, text]) =>
          Decoration.widget({
            widget: new NoteWidget(text),
            block: true,
            side: -1
          }).range(state.doc.line(line).from)
        );
      return Decoration.set(ranges);
    },
    update: value => value,
    provide: f => EditorView.decorations.from(f)
  });
}

/** `sin, mul ×2, …`: the op names of a list, counted. */
export function opSummary(names: string[]): string {
  const counts = new Map<string, number>();
  names.forEach(n => counts.set(n, (counts.get(n) ?? 0) + 1));
  const parts = [...counts].map(([n, c]) => (c > 1 ? `${n} ×${c}` : n));
  return parts.slice(0, 4).join(', ') + (parts.length > 4 ? ', …' : '');
}

export interface ISourceViewOptions {
  /** The source stage's name (its panel's `data-stage-panel`). */
  stage: string;
  links: LinkIndex;
  /** The report's linked stages, in order: what a line's tooltip sums up. */
  linked: IStageInfo[];
  hub: LinkHub;
  label: string;
  parent: HTMLElement;
  onPainted?: () => void;
}

export class SourceView implements IPanelView {
  constructor(private readonly o: ISourceViewOptions) {
    this.stage = o.stage;
  }

  readonly stage: string;

  get editor(): EditorView | null {
    return this._view;
  }

  /** The source document (built on first use). */
  get doc(): ISourceDoc {
    if (!this._doc) {
      this._doc = buildSourceDoc(this.o.links);
    }
    return this._doc;
  }

  /** `olympuspr: sin · StableHLO: stablehlo.sine · compiled: sine, fusion` */
  summary(key: SourceKey): string {
    const ops = this.o.links.opsOf(key);
    if (!ops) {
      return '';
    }
    const prov = this.o.links.prov;
    const parts: string[] = [];
    for (const stage of this.o.linked) {
      const idx = ops[stage.name];
      const st = prov.stages[stage.name];
      if (idx && idx.length && st) {
        parts.push(
          `${stage.label}: ${opSummary(idx.map(i => st.ops.name(i)))}`
        );
      }
    }
    return parts.join(' · ');
  }

  show(): void {
    if (!this._view) {
      this._view = this._create();
      const start = this._pendingLine ?? this.doc.functionLine;
      this.apply(this.o.hub.current);
      requestAnimationFrame(() => {
        if (this._view && start !== null && this._pendingLine === null) {
          revealLine(this._view, start, 'nearest');
        }
        this.o.onPainted?.();
      });
    } else {
      this._view.requestMeasure();
    }
    if (
      this._pendingLine !== null &&
      this._view &&
      revealLine(this._view, this._pendingLine)
    ) {
      this._pendingLine = null;
    }
  }

  apply(sel: ISelection): void {
    this._active =
      sel.source === null ? 0 : (this.doc.lineOf.get(sel.source) ?? 0);
    const reveal = sel.reveal && sel.origin !== null && this._active > 0;
    if (!this._view) {
      if (reveal) {
        this._pendingLine = this._active;
      }
      return;
    }
    refreshDecorations(this._view);
    if (reveal && !revealLine(this._view, this._active)) {
      this._pendingLine = this._active;
    }
  }

  focus(): void {
    this._view?.contentDOM.focus();
  }

  dispose(): void {
    this._view?.destroy();
    this._view = null;
  }

  /** Shows the heatmap of `heat` in the gutter (null: the heatmap is off). */
  setHeat(heat: CostHeat | null): void {
    this._heat = heat;
    if (this._view) {
      setHeatGutter(this._view, this._heatMarks());
    }
  }

  private _heatMarks(): HeatMarks | null {
    const heat = this._heat;
    if (!heat) {
      return null;
    }
    return line => {
      const key = this.doc.keys[line];
      return key ? heat.sourceMark(key) : null;
    };
  }

  private _key(line: number): SourceKey | null {
    const key = this.doc.keys[line] ?? null;
    return key !== null && this.o.links.colorOf(key) !== undefined ? key : null;
  }

  private _create(): EditorView {
    const doc = this.doc;
    const language = new Compartment();
    const view = createTextView({
      doc: doc.text,
      parent: this.o.parent,
      language: language.of([]),
      label: this.o.label,
      formatNumber: n => String(doc.numbers[n] ?? n),
      decorator: {
        classes: line => {
          const key = this._key(line);
          if (key === null) {
            return '';
          }
          const cls = `olympus-src-${this.o.links.colorOf(key)}`;
          return line === this._active ? cls + ' olympus-active' : cls;
        },
        title: line => {
          const key = this._key(line);
          const summary = key === null ? '' : this.summary(key);
          const docKey = this._heat ? this.doc.keys[line] : null;
          const heat = docKey ? this._heat!.sourceMark(docKey) : null;
          return heat
            ? summary
              ? `${summary}\n${heat.title}`
              : heat.title
            : summary || null;
        }
      },
      heat: this._heatMarks(),
      onActivate: line => {
        const key = this._key(line);
        this.o.hub.select(key, null);
      },
      onHover: line => this.o.hub.hover(line === null ? null : this._key(line)),
      onEscape: () => this.o.hub.clear(),
      extensions: [notes(doc.headers)]
    });
    void pythonLanguage().then(support => {
      if (support && this._view === view) {
        view.dispatch({ effects: language.reconfigure(support) });
      }
    });
    return view;
  }

  private _view: EditorView | null = null;
  private _heat: CostHeat | null = null;
  private _doc: ISourceDoc | null = null;
  private _active = 0;
  private _pendingLine: number | null = null;
}
