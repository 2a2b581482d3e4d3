/**
 * `host.ts` for pages with no JupyterLab (the standalone bundle puts this module
 * in its place): the same exports, made from the CodeMirror packages alone. The
 * theme reads JupyterLab's theme variables (`--jp-*`), as JupyterLab's own does,
 * so a page with JupyterLab's theme around it (JupyterLab with this extension
 * off) looks the same; elsewhere `style/standalone.css` gives them values.
 */
import { pythonLanguage as pythonLR } from '@codemirror/lang-python';
import {
  HighlightStyle,
  LanguageSupport,
  syntaxHighlighting
} from '@codemirror/language';
import { search, searchKeymap } from '@codemirror/search';
import { Extension } from '@codemirror/state';
import { EditorView, keymap } from '@codemirror/view';
import { tags as t } from '@lezer/highlight';

const theme = EditorView.theme({
  '&': {
    background: 'var(--jp-layout-color0)',
    color: 'var(--jp-content-font-color1)'
  },
  '.cm-scroller': { fontFamily: 'inherit' },
  '.cm-panels': {
    color: 'var(--jp-ui-font-color2)',
    backgroundColor: 'var(--jp-layout-color2)'
  },
  '.cm-panels.cm-panels-top': {
    borderBottom: '1px solid var(--jp-border-color2)'
  },
  '.cm-button': {
    background: 'var(--jp-layout-color2)',
    border: 'var(--jp-border-width) solid var(--jp-border-color1)',
    color: 'var(--jp-ui-font-color1)',
    borderRadius: 'var(--jp-border-radius)'
  },
  '.cm-textfield': {
    backgroundColor: 'var(--jp-layout-color0)',
    color: 'var(--jp-ui-font-color1)',
    border: 'var(--jp-border-width) solid var(--jp-border-color1)'
  },
  '.cm-selectionBackground, .cm-content ::selection': {
    backgroundColor: 'var(--jp-editor-selected-background)'
  },
  '&.cm-focused > .cm-scroller > .cm-selectionLayer .cm-selectionBackground': {
    backgroundColor: 'var(--jp-editor-selected-focused-background)'
  },
  '.cm-gutters': {
    borderRight: '1px solid var(--jp-border-color2)',
    backgroundColor: 'var(--jp-layout-color2)',
    color: 'var(--jp-ui-font-color2)'
  },
  '.cm-searchMatch': {
    backgroundColor: 'var(--jp-search-unselected-match-background-color)'
  },
  '.cm-searchMatch.cm-searchMatch-selected': {
    backgroundColor: 'var(--jp-search-selected-match-background-color)',
    color: 'var(--jp-search-selected-match-color)'
  }
});

/** JupyterLab's colours for Python (its highlight style reads the same variables). */
const highlight = HighlightStyle.define([
  { tag: t.meta, color: 'var(--jp-mirror-editor-meta-color)' },
  {
    tag: [t.keyword, t.bool],
    color: 'var(--jp-mirror-editor-keyword-color)',
    fontWeight: 'bold'
  },
  { tag: t.atom, color: 'var(--jp-mirror-editor-atom-color)' },
  { tag: t.number, color: 'var(--jp-mirror-editor-number-color)' },
  {
    tag: [t.definition(t.name), t.function(t.definition(t.variableName))],
    color: 'var(--jp-mirror-editor-def-color)'
  },
  {
    tag: t.standard(t.variableName),
    color: 'var(--jp-mirror-editor-builtin-color)'
  },
  {
    tag: [t.special(t.variableName), t.self],
    color: 'var(--jp-mirror-editor-variable-2-color)'
  },
  { tag: t.punctuation, color: 'var(--jp-mirror-editor-punctuation-color)' },
  { tag: t.propertyName, color: 'var(--jp-mirror-editor-property-color)' },
  {
    tag: t.operator,
    color: 'var(--jp-mirror-editor-operator-color)',
    fontWeight: 'bold'
  },
  {
    tag: t.comment,
    color: 'var(--jp-mirror-editor-comment-color)',
    fontStyle: 'italic'
  },
  { tag: t.string, color: 'var(--jp-mirror-editor-string-color)' },
  {
    tag: [t.labelName, t.special(t.string)],
    color: 'var(--jp-mirror-editor-string-2-color)'
  },
  { tag: t.bracket, color: 'var(--jp-mirror-editor-bracket-color)' },
  { tag: t.attributeName, color: 'var(--jp-mirror-editor-attribute-color)' }
]);

/** The editor theme and highlight style, from JupyterLab's theme variables. */
export const editorTheme: Extension = [theme, syntaxHighlighting(highlight)];

/** CodeMirror's search panel and keys (Mod-f, F3, Mod-g, Escape). */
export function searchKeys(): Extension {
  return [search({ top: true }), keymap.of(searchKeymap)];
}

/** Python highlighting (the parser alone: a read-only view completes nothing). */
export function pythonLanguage(): Promise<Extension | null> {
  return Promise.resolve(new LanguageSupport(pythonLR));
}
