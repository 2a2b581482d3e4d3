/**
 * The Olympus JupyterLab extension: two MIME renderers, one per document type.
 *
 * - `application/vnd.olympus.stages+json`: a stage report (`%olympus_lower f(x)`),
 *   every op of every stage tied to the source line that made it;
 * - `application/vnd.olympus.diff+json`: two reports of one function compared.
 *
 * Both are safe: they render saved and untrusted notebooks with no kernel and
 * execute nothing from the data (text goes in as text, code into CodeMirror
 * documents). Their rank (40) puts them ahead of the report's own `text/html`
 * form (JupyterLab's HTML renderer has rank 50; lower ranks win).
 */
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { DiffViewer } from './diffview';
import { DIFF_MIME, STAGES_MIME } from './model';
import { StagesViewer } from './viewer';

/** Below JupyterLab's `text/html` renderer (50), so the report's HTML form is not chosen. */
export const RANK = 40;

const stagesRenderer: IRenderMime.IRendererFactory = {
  safe: true,
  mimeTypes: [STAGES_MIME],
  defaultRank: RANK,
  createRenderer: options => new StagesViewer(options)
};

const diffRenderer: IRenderMime.IRendererFactory = {
  safe: true,
  mimeTypes: [DIFF_MIME],
  defaultRank: RANK,
  createRenderer: options => new DiffViewer(options)
};

const stages: IRenderMime.IExtension = {
  id: 'olympus-jupyter:stages',
  description:
    'Shows Olympus stage reports: every op of every stage tied to its source line.',
  rendererFactory: stagesRenderer,
  rank: RANK,
  dataType: 'json'
};

const diff: IRenderMime.IExtension = {
  id: 'olympus-jupyter:diff',
  description:
    'Compares two Olympus stage reports of one function, stage by stage.',
  rendererFactory: diffRenderer,
  rank: RANK,
  dataType: 'json'
};

export default [stages, diff];
