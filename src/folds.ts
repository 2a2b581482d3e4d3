/**
 * What folds in a stage text: the spans of multi-line ops (regions, nested
 * programs, long parameter lists) and HLO computations, from the provenance model;
 * for a text without one (the pre-optimization HLO), braces. Each is a CodeMirror
 * `foldService` answering for one line at a time, from a table built on first use.
 */
import { foldService, foldEffect } from '@codemirror/language';
import { EditorState, Extension } from '@codemirror/state';
import { EditorView } from '@codemirror/view';

function range(state: EditorState, start: number, end: number) {
  const doc = state.doc;
  if (end <= start || end > doc.lines) {
    return null;
  }
  const first = doc.line(start);
  // Keep a closing `}`, `]` or `)` line in sight: `{ ... }`.
  const closing = /^\s*[}\])]/.test(doc.line(end).text) && end - 1 > start;
  const to = doc.line(closing ? end - 1 : end).to;
  return to > first.to ? { from: first.to, to } : null;
}

/** Folds from a table `first line → last line`, asked for when a fold is first needed. */
export function spanFolds(
  table: (state: EditorState) => Map<number, number>
): Extension {
  let ends: Map<number, number> | null = null;
  return foldService.of((state, lineStart) => {
    ends = ends ?? table(state);
    const line = state.doc.lineAt(lineStart).number;
    const end = ends.get(line);
    return end === undefined ? null : range(state, line, end);
  });
}

/**
 * The brace folds of a text, `first line → last line` (1-based): a line ending in
 * `{` up to the line starting with the `}` that closes it. The rule of
 * `brace_folds` in `olympus_jupyter/report/html.py`, which folds the static HTML;
 * tests/test_view_tables.py runs both on the same texts.
 */
export function braceFoldEnds(lines: Iterable<string>): Map<number, number> {
  const ends = new Map<number, number>();
  const open: number[] = [];
  let n = 0;
  for (const text of lines) {
    n++;
    if (/\{\s*$/.test(text)) {
      open.push(n);
    } else if (/^\s*\}/.test(text) && open.length) {
      ends.set(open.pop()!, n);
    }
  }
  return ends;
}

/** Folds by braces ({@link braceFoldEnds}), found when a fold is first needed. */
export function braceFolds(): Extension {
  return spanFolds(state => braceFoldEnds(state.doc.iterLines()));
}

/**
 * The source tables at the top of a compiled HLO text (`FileNames` ...
 * `StackFrames`), as a line range, or null.
 */
export function hloTableLines(state: EditorState): [number, number] | null {
  const doc = state.doc;
  let first = 0;
  for (let n = 1; n <= Math.min(doc.lines, 50); n++) {
    if (doc.line(n).text.trim() === 'FileNames') {
      first = n;
      break;
    }
  }
  if (!first) {
    return null;
  }
  const headings = /^(?:FileNames|FunctionNames|FileLocations|StackFrames)$/;
  let last = first;
  for (let n = first + 1; n <= doc.lines; n++) {
    const text = doc.line(n).text;
    const t = text.trim();
    if (t && !(headings.test(t) || /^\d/.test(text))) {
      break;
    }
    if (t) {
      last = n;
    }
  }
  return last > first ? [first, last] : null;
}

/** Folds a range of lines shut (the HLO source tables start folded). */
export function foldLines(view: EditorView, first: number, last: number): void {
  const doc = view.state.doc;
  if (first < 1 || last > doc.lines || last <= first) {
    return;
  }
  view.dispatch({
    effects: foldEffect.of({ from: doc.line(first).to, to: doc.line(last).to })
  });
}
