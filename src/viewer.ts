/**
 * The renderer of `application/vnd.olympus.stages+json` in JupyterLab: a Lumino
 * widget around the report view (`reportview.ts`), which does the work. The
 * widget tells the view when it is attached or shown (so that the editors of the
 * panels on screen are built then) and marks its root `[data-olympus-viewer]`.
 */
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';
import { STAGES_MIME } from './model';
import { ReportView } from './reportview';

/** A stage report, live: every op of every stage tied to the source line that made it. */
export class StagesViewer extends Widget implements IRenderMime.IRenderer {
  constructor(options: IRenderMime.IRendererOptions) {
    super();
    this._mimeType = options.mimeType ?? STAGES_MIME;
    this.node.dataset.olympusViewer = '1';
    this._view = new ReportView(this.node);
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    this._view.render(model.data[this._mimeType]);
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._view.dispose();
    super.dispose();
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    this._view.shown();
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this._view.shown();
  }

  private _mimeType: string;
  private _view: ReportView;
}
