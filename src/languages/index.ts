/**
 * The highlighters of stage texts, by the language name a report's stage table
 * gives (`language`): `olympuspr`, `stablehlo`, `hlo`. Python (the source) comes
 * from JupyterLab's own language registry, in the source view. A language this
 * viewer does not know shows plain text.
 */
import { Extension } from '@codemirror/state';
import { hlo } from './hlo';
import { olympuspr } from './olympuspr';
import { stablehlo } from './stablehlo';

const LANGUAGES: ReadonlyMap<string, Extension> = new Map<string, Extension>([
  ['olympuspr', olympuspr],
  ['stablehlo', stablehlo],
  ['hlo', hlo]
]);

/** The highlighter named `language`, or none (plain text). */
export function stageLanguage(language: string | null): Extension {
  return (language !== null && LANGUAGES.get(language)) || [];
}
