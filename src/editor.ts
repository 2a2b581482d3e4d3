/**
 * The read-only CodeMirror 6 view every text panel uses, with the host's theme,
 * highlight style and search keys (`host.ts`: JupyterLab's shared CodeMirror, or
 * CodeMirror's own in the standalone bundle): line numbers, folding, search, a
 * keyboard focus line, line decorations computed for the visible lines only
 * (so a 100k-line text costs no more than its first screen), and the heatmap's
 * gutter when it is on (`setHeatGutter`), its markers too made for the visible
 * lines only.
 */
import {
  codeFolding,
  foldGutter,
  foldKeymap,
  foldedRanges,
  syntaxHighlighting
} from '@codemirror/language';
import {
  EditorState,
  Extension,
  RangeSetBuilder,
  StateEffect,
  StateField
} from '@codemirror/state';
import {
  Decoration,
  DecorationSet,
  EditorView,
  GutterMarker,
  ViewPlugin,
  ViewUpdate,
  gutter,
  keymap,
  lineNumbers
} from '@codemirror/view';
import { editorTheme, searchKeys } from './host';
import { stageLanguage } from './languages';
import { stageHighlightStyle } from './languages/tokens';

/** What a view shows on each line (1-based). */
export interface ILineDecorator {
  /** Space-separated CSS classes for the line, or ''. */
  classes(line: number): string;
  /** The line's tooltip, or null. */
  title(line: number): string | null;
}

export interface ITextViewOptions {
  doc: string;
  parent: HTMLElement;
  /** The language (and any extension that goes with it). */
  language: Extension;
  /** Names the text for assistive technology: `olympuspr of f`. */
  label: string;
  decorator: ILineDecorator;
  /** The user clicked a line, or pressed Enter/Space on the focus line. */
  onActivate(line: number): void;
  /** The pointer entered a line, or left the text (`null`). */
  onHover?(line: number | null): void;
  /** Escape (when the search panel is closed). */
  onEscape(): void;
  /** Displayed line numbers (the source view shows the file's). */
  formatNumber?: (line: number) => string;
  /** The heatmap's marks, when it is on as the view is made (see `setHeatGutter`). */
  heat?: HeatMarks | null;
  extensions?: Extension[];
}

/** Rebuild the line decorations (the selection changed). */
export const refreshEffect = StateEffect.define<null>();

const setFocusLine = StateEffect.define<number>();

/** The line the keyboard is on (0: none): Enter/Space act on it, arrows move it. */
const focusLine = StateField.define<number>({
  create: () => 0,
  update(value, tr) {
    for (const e of tr.effects) {
      if (e.is(setFocusLine)) {
        value = e.value;
      }
    }
    return value;
  }
});

export function refreshDecorations(view: EditorView): void {
  view.dispatch({ effects: refreshEffect.of(null) });
}

/**
 * Scrolling into view moves the editor's own scroller only, never the notebook
 * around it (a hover in one panel must not scroll the page to another). CodeMirror
 * still renders the lines around the target, even for an editor off screen.
 */
const ownScroller = EditorView.scrollHandler.of((view, range, options) => {
  const sd = view.scrollDOM;
  const height = sd.clientHeight;
  if (height === 0) {
    return true;
  }
  const block = view.lineBlockAt(range.head);
  const offset =
    view.documentTop - sd.getBoundingClientRect().top + sd.scrollTop;
  const top = block.top + offset;
  const bottom = block.bottom + offset;
  const margin = 4;
  const visible = top >= sd.scrollTop && bottom <= sd.scrollTop + height;
  if (options.y === 'start') {
    sd.scrollTop = top - options.yMargin;
  } else if (options.y === 'end') {
    sd.scrollTop = bottom - height + options.yMargin;
  } else if (!visible) {
    if (options.y === 'center') {
      sd.scrollTop = Math.max(0, top - height / 2 + block.height / 2);
    } else {
      sd.scrollTop =
        top < sd.scrollTop ? top - margin : bottom - height + margin;
    }
  }
  // Horizontally (a search match far right): columns times the width of a character.
  const line = view.state.doc.lineAt(range.head);
  const gutters = view.dom.querySelector('.cm-gutters');
  const gutterWidth = gutters ? gutters.getBoundingClientRect().width : 0;
  const x = (range.head - line.from) * view.defaultCharacterWidth;
  const width = sd.clientWidth - gutterWidth - 4 * margin;
  if (x < sd.scrollLeft) {
    sd.scrollLeft = Math.max(0, x - 4 * margin);
  } else if (x > sd.scrollLeft + width) {
    sd.scrollLeft = x - width / 2;
  }
  return true;
});

/**
 * Scrolls a view to show a line (only if it is not in sight already, for
 * `'nearest'`). Returns false when the view is hidden: the caller keeps the line
 * and tries again when it is shown.
 */
export function revealLine(
  view: EditorView,
  line: number,
  how: 'center' | 'nearest' = 'center'
): boolean {
  const doc = view.state.doc;
  if (line < 1 || line > doc.lines) {
    return true;
  }
  if (!view.dom.isConnected || view.scrollDOM.clientHeight === 0) {
    return false;
  }
  view.dispatch({
    effects: EditorView.scrollIntoView(doc.line(line).from, { y: how })
  });
  return true;
}

/** The next line from `line` in direction `dir` that no fold hides. */
function nextVisibleLine(
  state: EditorState,
  line: number,
  dir: 1 | -1
): number {
  const doc = state.doc;
  let next = Math.min(Math.max(line + dir, 1), doc.lines);
  const folds = foldedRanges(state);
  folds.between(doc.line(next).from, doc.line(next).to, (from, to) => {
    const fromLine = doc.lineAt(from).number;
    const toLine = doc.lineAt(to).number;
    if (next > fromLine) {
      next = dir > 0 ? Math.min(toLine + 1, doc.lines) : fromLine;
    }
  });
  return next;
}

function moveFocus(view: EditorView, to: (current: number) => number): boolean {
  const current = view.state.field(focusLine) || topVisibleLine(view);
  const line = Math.min(Math.max(to(current), 1), view.state.doc.lines);
  view.dispatch({ effects: setFocusLine.of(line) });
  revealLine(view, line, 'nearest');
  return true;
}

function topVisibleLine(view: EditorView): number {
  const sd = view.scrollDOM;
  const offset =
    view.documentTop - sd.getBoundingClientRect().top + sd.scrollTop;
  const block = view.lineBlockAtHeight(Math.max(0, sd.scrollTop - offset));
  return view.state.doc.lineAt(block.from).number;
}

function pageLines(view: EditorView): number {
  return Math.max(
    1,
    Math.floor(view.scrollDOM.clientHeight / view.defaultLineHeight) - 1
  );
}

let _searchKeys: Extension | null = null;

const lineDecorationCache = new Map<string, Decoration>();

function lineDecoration(cls: string, title: string | null): Decoration {
  if (title !== null) {
    return Decoration.line({ class: cls, attributes: { title } });
  }
  let d = lineDecorationCache.get(cls);
  if (!d) {
    d = Decoration.line({ class: cls });
    lineDecorationCache.set(cls, d);
  }
  return d;
}

/** Line decorations for the visible lines only, rebuilt when they or the selection change. */
function decorations(decorator: ILineDecorator): Extension {
  const build = (view: EditorView): DecorationSet => {
    const builder = new RangeSetBuilder<Decoration>();
    const doc = view.state.doc;
    const focus = view.hasFocus ? view.state.field(focusLine) : 0;
    let last = 0;
    for (const { from, to } of view.visibleRanges) {
      let line = doc.lineAt(from).number;
      const end = doc.lineAt(to).number;
      if (line <= last) {
        line = last + 1;
      }
      for (; line <= end; line++) {
        let cls = decorator.classes(line);
        if (line === focus) {
          cls = cls ? cls + ' olympus-focus' : 'olympus-focus';
        }
        const title = decorator.title(line);
        if (cls || title) {
          const start = doc.line(line).from;
          builder.add(start, start, lineDecoration(cls, title));
        }
      }
      last = end;
    }
    return builder.finish();
  };
  return ViewPlugin.fromClass(
    class {
      decorations: DecorationSet;
      constructor(view: EditorView) {
        this.decorations = build(view);
      }
      update(u: ViewUpdate) {
        if (
          u.docChanged ||
          u.viewportChanged ||
          u.focusChanged ||
          u.transactions.some(tr =>
            tr.effects.some(e => e.is(refreshEffect) || e.is(setFocusLine))
          )
        ) {
          this.decorations = build(u.view);
        }
      }
    },
    { decorations: v => v.decorations }
  );
}

/**
 * Mouse: a click activates a line (a drag selects text to copy instead), moving
 * over lines hovers them.
 */
function pointer(o: ITextViewOptions): Extension {
  let hovered: number | null = null;
  let down: { x: number; y: number } | null = null;
  const lineAt = (view: EditorView, e: MouseEvent): number | null => {
    const pos = view.posAtCoords({ x: e.clientX, y: e.clientY }, false);
    return pos === null ? null : view.state.doc.lineAt(pos).number;
  };
  return EditorView.domEventHandlers({
    mousedown(e) {
      down = { x: e.clientX, y: e.clientY };
      return false;
    },
    focus(e, view) {
      // Tabbing in puts the keyboard on the first line in sight (a click picks its own line).
      if (!down && !view.state.field(focusLine)) {
        view.dispatch({ effects: setFocusLine.of(topVisibleLine(view)) });
      }
      return false;
    },
    click(e, view) {
      const start = down;
      down = null;
      if (e.button !== 0) {
        return false;
      }
      if (start && Math.hypot(e.clientX - start.x, e.clientY - start.y) > 4) {
        return false; // the user dragged to select text
      }
      const line = lineAt(view, e);
      if (line !== null) {
        view.dispatch({ effects: setFocusLine.of(line) });
        o.onActivate(line);
      }
      return false;
    },
    mousemove(e, view) {
      if (!o.onHover) {
        return false;
      }
      const line = lineAt(view, e);
      if (line !== hovered) {
        hovered = line;
        o.onHover(line);
      }
      return false;
    },
    mouseleave() {
      if (o.onHover && hovered !== null) {
        hovered = null;
        o.onHover(null);
      }
      return false;
    }
  });
}

/** Keys on the focus line: arrows, Page Up/Down, Home/End move it; Enter/Space act; Escape clears. */
function keys(o: ITextViewOptions): Extension {
  const activate = (view: EditorView) => {
    const line = view.state.field(focusLine) || topVisibleLine(view);
    view.dispatch({ effects: setFocusLine.of(line) });
    o.onActivate(line);
    return true;
  };
  return keymap.of([
    {
      key: 'ArrowDown',
      run: v => moveFocus(v, l => nextVisibleLine(v.state, l, 1))
    },
    {
      key: 'ArrowUp',
      run: v => moveFocus(v, l => nextVisibleLine(v.state, l, -1))
    },
    { key: 'PageDown', run: v => moveFocus(v, l => l + pageLines(v)) },
    { key: 'PageUp', run: v => moveFocus(v, l => l - pageLines(v)) },
    { key: 'Mod-Home', run: v => moveFocus(v, () => 1) },
    { key: 'Mod-End', run: v => moveFocus(v, () => v.state.doc.lines) },
    { key: 'Enter', run: activate },
    { key: 'Space', run: activate },
    {
      key: 'Escape',
      run: () => {
        o.onEscape();
        return true;
      }
    }
  ]);
}

/** What the heatmap's gutter shows beside one line. */
export interface IHeatMark {
  /** 1 (a small share) to 5 (the largest): the colour's strength. */
  level: number;
  /** The share as text (`84%`): the gutter shows it, colour is not the only signal. */
  text: string;
  /** The exact figures, for the tooltip and for assistive technology. */
  title: string;
}

/** The heatmap's mark of a line (1-based), or null for none. */
export type HeatMarks = (line: number) => IHeatMark | null;

class HeatMarker extends GutterMarker {
  constructor(readonly mark: IHeatMark) {
    super();
    this.elementClass = `olympus-heat olympus-heat-${mark.level}`;
  }
  eq(other: HeatMarker): boolean {
    return (
      other.mark.level === this.mark.level &&
      other.mark.text === this.mark.text &&
      other.mark.title === this.mark.title
    );
  }
  toDOM(): HTMLElement {
    const el = document.createElement('span');
    el.className = 'olympus-heat-mark';
    el.textContent = this.mark.text;
    if (this.mark.level > 0) {
      // (Not the spacer, which only sizes the gutter.)
      el.setAttribute('data-olympus-heat-mark', String(this.mark.level));
      el.setAttribute('role', 'img');
      el.setAttribute('aria-label', this.mark.title);
      el.title = this.mark.title;
    }
    return el;
  }
}

/** The widest mark, so that the gutter does not change width as it scrolls. */
const heatSpacer = new HeatMarker({ level: 0, text: '100%', title: '' });
/** The spacer while the heatmap is off: the gutter takes no room. */
const noHeatSpacer = new HeatMarker({ level: 0, text: '', title: '' });

const setHeatMarks = StateEffect.define<HeatMarks | null>();

/** The heatmap's marks shown, or null (off). */
const heatMarks = StateField.define<HeatMarks | null>({
  create: () => null,
  update(value, tr) {
    for (const e of tr.effects) {
      if (e.is(setHeatMarks)) {
        value = e.value;
      }
    }
    return value;
  }
});

/**
 * The heatmap's gutter, in every view from the start: switching the heatmap only
 * changes its marks (no reconfiguration, which would cost a big text's editor a
 * full measure). With no marks it holds no element and takes no room.
 */
const heatGutter: Extension = [
  heatMarks,
  gutter({
    class: 'olympus-heat-gutter',
    lineMarker(view, block) {
      const marks = view.state.field(heatMarks);
      const mark = marks
        ? marks(view.state.doc.lineAt(block.from).number)
        : null;
      return mark ? new HeatMarker(mark) : null;
    },
    lineMarkerChange: u =>
      u.startState.field(heatMarks) !== u.state.field(heatMarks) ||
      u.transactions.some(tr => tr.effects.some(e => e.is(refreshEffect))),
    initialSpacer: view =>
      view.state.field(heatMarks) ? heatSpacer : noHeatSpacer,
    updateSpacer: (spacer, u) =>
      u.state.field(heatMarks) ? heatSpacer : noHeatSpacer
  })
];

/**
 * Shows the heatmap's gutter with `marks` (asked for the visible lines only), or
 * empties it (`null`); the line decorations are rebuilt too (their tooltips may
 * say the figures).
 */
export function setHeatGutter(view: EditorView, marks: HeatMarks | null): void {
  view.dispatch({
    effects: [setHeatMarks.of(marks), refreshEffect.of(null)]
  });
}

/** A read-only CodeMirror view of `o.doc` inside `o.parent`. */
export function createTextView(o: ITextViewOptions): EditorView {
  if (_searchKeys === null) {
    _searchKeys = searchKeys();
  }
  let state = EditorState.create({
    doc: o.doc,
    extensions: [
      EditorState.readOnly.of(true),
      EditorView.editable.of(false),
      EditorView.contentAttributes.of({
        tabindex: '0',
        'aria-label': o.label,
        'aria-readonly': 'true'
      }),
      ownScroller,
      lineNumbers(o.formatNumber ? { formatNumber: o.formatNumber } : {}),
      codeFolding(),
      foldGutter(),
      _searchKeys,
      keymap.of(foldKeymap),
      keys(o),
      focusLine,
      editorTheme,
      syntaxHighlighting(stageHighlightStyle),
      o.language,
      decorations(o.decorator),
      pointer(o),
      heatGutter,
      ...(o.extensions ?? [])
    ]
  });
  if (o.heat) {
    state = state.update({ effects: setHeatMarks.of(o.heat) }).state;
  }
  return new EditorView({ state, parent: o.parent });
}

/**
 * The extensions of one side of a read-only merge view (a diff of two stage
 * texts, or of a module before and after an XLA pass): the host's theme and
 * highlight style, line numbers, and `label` for screen readers.
 */
export function mergeSideExtensions(
  language: string | null,
  label: string
): Extension[] {
  return [
    EditorState.readOnly.of(true),
    EditorView.editable.of(false),
    EditorView.contentAttributes.of({
      tabindex: '0',
      'aria-label': label,
      'aria-readonly': 'true'
    }),
    lineNumbers(),
    editorTheme,
    syntaxHighlighting(stageHighlightStyle),
    stageLanguage(language)
  ];
}
