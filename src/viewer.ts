/**
 * The renderer of `application/vnd.olympus.stages+json` in JupyterLab: a Lumino
 * widget around the report view (`reportview.ts`), which does the work. The
 * widget tells the view when it is attached or shown (so that the editors of the
 * panels on screen are built then) and marks its root `[data-olympus-viewer]`.
 *
 * A MIME renderer is given no kernel; a capped report fetches what its output
 * left out from the kernel of the notebook (or console) it is shown in: the
 * `sessionContext` of the nearest widget above it that has one (a
 * `NotebookPanel`'s, a `ConsolePanel`'s), looked up when the reader asks, so that
 * a restarted or changed kernel is the one asked. An output shown anywhere else (a
 * cell's output in its own tab, say) has none, and its view says so.
 */
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';
import { STAGES_MIME } from './model';
import { IKernelLike } from './livekernel';
import { ReportView } from './reportview';

/** What is read of a widget that has a session (JupyterLab's `ISessionContext`). */
interface IHasSession {
  sessionContext?: {
    isDisposed?: boolean;
    session?: { kernel?: unknown } | null;
  };
}

/**
 * The live kernel of the notebook or console `widget` is in (the session context
 * of the nearest widget above it that has one), or null.
 */
export function kernelOf(widget: Widget): IKernelLike | null {
  for (let w: Widget | null = widget; w; w = w.parent) {
    const context = (w as unknown as IHasSession).sessionContext;
    if (context && typeof context === 'object') {
      if (context.isDisposed) {
        return null;
      }
      const kernel = context.session?.kernel as
        | (IKernelLike & { isDisposed?: boolean; status?: string })
        | null
        | undefined;
      if (
        !kernel ||
        typeof kernel.createComm !== 'function' ||
        kernel.isDisposed ||
        kernel.status === 'dead'
      ) {
        return null;
      }
      return kernel;
    }
  }
  return null;
}

/** A stage report, live: every op of every stage tied to the source line that made it. */
export class StagesViewer extends Widget implements IRenderMime.IRenderer {
  constructor(options: IRenderMime.IRendererOptions) {
    super();
    this._mimeType = options.mimeType ?? STAGES_MIME;
    this.node.dataset.olympusViewer = '1';
    this._view = new ReportView(this.node, () => kernelOf(this));
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
