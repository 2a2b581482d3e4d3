/**
 * What the three stage languages share: the token classes (the vocabulary of
 * olympus_jupyter/highlight/lexers.py, as CodeMirror highlighting tags), number and string
 * matchers, and the highlight style that colours them with JupyterLab's editor
 * theme variables (so light and dark themes both work).
 */
import { HighlightStyle, StringStream } from '@codemirror/language';
import { tags as t } from '@lezer/highlight';

/** Token classes, named as CodeMirror highlighting tags. */
export const TOKEN = {
  /** `lambda`, `module`, `ROOT`, `HloModule`... (pygments `Keyword`) */
  keyword: 'keyword',
  /** primitives, operations, opcodes (`Name.Builtin`) */
  op: 'variableName.standard',
  /** `f32[3]`, `tensor<3xf32>`, `f32[3]{0}` (`Keyword.Type`) */
  type: 'typeName',
  /** `a`, `%0`, `%add.1` (`Name.Variable`) */
  variable: 'variableName',
  /** `@main`, computations (`Name.Function`) */
  function: 'variableName.definition',
  /** parameter and attribute names (`Name.Attribute`) */
  attribute: 'attributeName',
  /** `LT`, `kLoop`, `True` (`Name.Constant`, `Keyword.Constant`) */
  constant: 'atom',
  number: 'number',
  string: 'string',
  /** source locations, `/*index=5*\/` (`Comment`) */
  comment: 'comment',
  label: 'labelName',
  meta: 'meta',
  operator: 'operator',
  punctuation: 'punctuation'
} as const;

/** Colours for the tags above that JupyterLab's own highlight style leaves plain. */
export const stageHighlightStyle = HighlightStyle.define([
  { tag: t.typeName, color: 'var(--jp-mirror-editor-variable-3-color)' },
  { tag: t.variableName, color: 'var(--jp-mirror-editor-variable-color)' },
  {
    tag: t.standard(t.variableName),
    color: 'var(--jp-mirror-editor-builtin-color)'
  },
  {
    tag: t.definition(t.variableName),
    color: 'var(--jp-mirror-editor-def-color)'
  },
  { tag: t.labelName, color: 'var(--jp-mirror-editor-string-2-color)' }
]);

const COMPLEX = /^-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?j\b/;
const HEX = /^-?0[xX][0-9a-fA-FX]+\b/;
const FLOAT = /^-?(?:\d+\.\d*(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+)/;
const SPECIAL_FLOAT = /^-?(?:inf|nan)\b/;
const INT = /^-?\d+\b/;

/** Consumes a number (complex, hex, float, `inf`/`nan`, int): its token, or null. */
export function matchNumber(stream: StringStream): string | null {
  if (
    stream.match(COMPLEX) ||
    stream.match(HEX) ||
    stream.match(FLOAT) ||
    stream.match(SPECIAL_FLOAT) ||
    stream.match(INT)
  ) {
    return TOKEN.number;
  }
  return null;
}

const DQ_STRING = /^"(?:\\.|[^"\\])*"/;
const SQ_STRING = /^'(?:\\.|[^'\\])*'/;

/** Consumes a double- or single-quoted string. */
export function matchString(stream: StringStream, single = true): boolean {
  return !!(stream.match(DQ_STRING) || (single && stream.match(SQ_STRING)));
}

/** Is the stream at the first token of its line (only spaces before it)? */
export function atLineStart(stream: StringStream): boolean {
  return /^\s*$/.test(stream.string.slice(0, stream.pos));
}
