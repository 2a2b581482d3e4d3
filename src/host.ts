/**
 * What the views take from the page that hosts them: the editor's theme, its
 * search keys and the Python language of the source view. This copy takes them
 * from JupyterLab's shared CodeMirror (`@jupyterlab/codemirror`), so that the
 * report looks like the notebook around it and its search keys are JupyterLab's.
 *
 * The standalone bundle (`src/standalone.ts`, built by
 * `scripts/build-standalone.mjs`) swaps this module for `host_standalone.ts`,
 * which has the same exports made from the CodeMirror packages alone: no
 * JupyterLab package ends up in a page that has no JupyterLab.
 */
import { Extension } from '@codemirror/state';
import {
  EditorExtensionRegistry,
  EditorLanguageRegistry,
  IEditorExtensionFactory,
  jupyterTheme
} from '@jupyterlab/codemirror';

/** JupyterLab's editor theme and highlight style. */
export const editorTheme: Extension = jupyterTheme;

/** JupyterLab's CodeMirror search keys (Mod-f, F3, Mod-g, Escape), from its shared copy. */
export function searchKeys(): Extension {
  try {
    const factory = EditorExtensionRegistry.getDefaultExtensions().find(
      f => f.name === 'searchWithCM'
    );
    // The search extension reads no model: the options hold only what it reads.
    const options = {
      inline: false
    } as unknown as IEditorExtensionFactory.IOptions;
    const ext = factory?.factory(options);
    return ext ? ext.instance(true) : [];
  } catch {
    return [];
  }
}

let _python: Promise<Extension | null> | null = null;

/** Python highlighting from JupyterLab's shared language registry (loaded once). */
export function pythonLanguage(): Promise<Extension | null> {
  if (!_python) {
    _python = (async () => {
      try {
        const registry = new EditorLanguageRegistry();
        EditorLanguageRegistry.getDefaultLanguages().forEach(l =>
          registry.addLanguage(l)
        );
        const lang = await registry.getLanguage('python');
        return lang?.support ?? null;
      } catch {
        return null;
      }
    })();
  }
  return _python;
}
