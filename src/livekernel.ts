/**
 * "Load more from the kernel": the parts of a capped output a live notebook can
 * fetch from the kernel that made the report.
 *
 * A capped output's data carries `live` (see
 * `olympus_jupyter/report/live_reports.py`): the token the kernel keeps the report
 * under, and what the output shows of each list it cut. In JupyterLab the renderer
 * is handed a kernel finder (`viewer.ts`: the kernel of the notebook around it);
 * a request is one comm to the target `olympus.live`
 * (`olympus_jupyter/frontends/live_comm.py`), opened with
 * `{report, kind, part, offset, limit}`, on which the kernel sends one page (or
 * an error saying what was wrong) and closes it. Where there is no kernel (the
 * standalone viewer, a saved page, a notebook whose kernel is gone) the control
 * says so and the capped note stays.
 *
 * Everything the kernel sends is data: the views put it in with text nodes only.
 *
 * DOM hooks (tests): `[data-olympus-live=<kind>:<part>]`, its button
 * `button[data-olympus-load-more]` and status `[data-olympus-live-status]`
 * (`data-state`: `idle`, `loading`, `done`, `error`, `no-kernel`).
 */
import { h } from './dom';
import { ILive, ILivePart } from './model';

/** The comm target the kernel registers (`live_comm.TARGET`). */
export const TARGET = 'olympus.live';

/** Items asked for per click. */
export const PAGE_ITEMS = 100;

/** How long a request may wait for the kernel (it may be running a cell). */
export const TIMEOUT_MS = 60_000;

/** One page of a list, as the kernel sends it. */
export interface IPage {
  items: unknown[];
  total: number;
  /** The offset of the next page, null at the end. */
  next: number | null;
}

/** What the view needs of a JupyterLab kernel connection (`Kernel.IKernelConnection`). */
export interface IKernelLike {
  createComm(targetName: string): ICommLike;
}

/** What the view needs of a JupyterLab comm (`Kernel.IComm`). */
export interface ICommLike {
  onMsg: (msg: { content: { data: unknown } }) => void;
  onClose: (msg: unknown) => void;
  open(data?: unknown): { done: Promise<unknown> } | unknown;
  close(): unknown;
}

/** Finds the live kernel of the view now (null: none). */
export type KernelFinder = () => IKernelLike | null;

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0;
}

/** Said where the view has no kernel to ask. */
export const NO_KERNEL =
  'No live kernel: this view is not connected to the kernel that made the report ' +
  '(a saved page, a viewer outside JupyterLab, or the notebook’s kernel is gone). ' +
  'The note above says what the report object holds.';

/** Said where the kernel closed the comm without answering: no target there. */
export const NO_TARGET =
  'The kernel does not serve Olympus reports (it restarted, or has not run ' +
  '%load_ext olympus_jupyter): run the cell again to fetch its details.';

/** One request to the kernel: resolves with its page, rejects with what went wrong. */
export function requestPage(
  kernel: IKernelLike,
  request: {
    report: string;
    kind: string;
    part: string;
    offset: number;
    limit: number;
  },
  timeoutMs = TIMEOUT_MS
): Promise<IPage> {
  return new Promise<IPage>((resolve, reject) => {
    let comm: ICommLike;
    try {
      comm = kernel.createComm(TARGET);
    } catch (err) {
      reject(new Error(`Cannot reach the kernel: ${String(err)}`));
      return;
    }
    let settled = false;
    const settle = (f: () => void) => {
      if (!settled) {
        settled = true;
        clearTimeout(timer);
        f();
      }
    };
    const timer = setTimeout(
      () =>
        settle(() => {
          try {
            comm.close();
          } catch {
            // already closed: nothing to do
          }
          reject(
            new Error(
              `The kernel did not answer in ${timeoutMs / 1000} s (is it busy running a cell?).`
            )
          );
        }),
      timeoutMs
    );
    comm.onMsg = msg => {
      const data = msg?.content?.data as Record<string, unknown> | undefined;
      settle(() => {
        if (
          data &&
          data.ok === true &&
          Array.isArray(data.items) &&
          isCount(data.total) &&
          (data.next === null || isCount(data.next))
        ) {
          resolve({
            items: data.items,
            total: data.total,
            next: data.next as number | null
          });
        } else {
          const said =
            data && typeof data.error === 'string'
              ? data.error
              : 'The kernel sent an answer this view does not understand.';
          reject(new Error(said.slice(0, 2000)));
        }
      });
    };
    comm.onClose = () => settle(() => reject(new Error(NO_TARGET)));
    try {
      const future = comm.open(request) as { done?: Promise<unknown> };
      future?.done?.catch?.((err: unknown) =>
        settle(() =>
          reject(new Error(`Cannot reach the kernel: ${String(err)}`))
        )
      );
    } catch (err) {
      settle(() =>
        reject(new Error(`Cannot reach the kernel: ${String(err)}`))
      );
    }
  });
}

/** The report's live parts and the way to its kernel: what the views' controls use. */
export class LiveSource {
  constructor(
    readonly live: ILive,
    private readonly kernel: KernelFinder | null
  ) {}

  /** The list `kind`/`part` the output cut, or null (not cut). */
  part(kind: string, part: string): ILivePart | null {
    return (
      this.live.parts.find(p => p.kind === kind && p.part === part) ?? null
    );
  }

  /** The kernel to ask now, or null. */
  kernelNow(): IKernelLike | null {
    try {
      return this.kernel ? this.kernel() : null;
    } catch {
      return null;
    }
  }

  /** The page of `kind`/`part` from `offset` on, from the kernel. */
  nextPage(kind: string, part: string, offset: number): Promise<IPage> {
    const kernel = this.kernelNow();
    if (!kernel) {
      return Promise.reject(new Error(NO_KERNEL));
    }
    return requestPage(kernel, {
      report: this.live.report,
      kind,
      part,
      offset,
      limit: PAGE_ITEMS
    });
  }
}

const count = (n: number) => n.toLocaleString('en-US');

/**
 * The "Load more from the kernel" control of a capped list: `noun` names its
 * items (`source lines`); `append` puts a page's items in the view and returns how
 * many it showed.
 */
export function loadMoreControl(
  source: LiveSource,
  part: ILivePart,
  noun: string,
  append: (items: unknown[]) => number
): HTMLElement {
  let shown = part.shown;
  let next: number | null = part.shown < part.total ? part.shown : null;
  const status = h('span', {
    class: 'olympus-live-status',
    'data-olympus-live-status': '1',
    'data-state': 'idle',
    role: 'status',
    'aria-live': 'polite'
  });
  const button = h(
    'button',
    {
      type: 'button',
      class: 'olympus-live-more',
      'data-olympus-load-more': '1',
      title: 'Fetch the next items from the kernel that made this report'
    },
    'Load more from the kernel'
  );
  const say = (state: string, text: string) => {
    status.dataset.state = state;
    status.textContent = text;
  };
  const showing = () =>
    `Showing ${count(shown)} of ${count(part.total)} ${noun}.`;
  // Whether there is a kernel to ask, said when the control is built, again once
  // it is in the page (a renderer meets its notebook when attached) and when the
  // pointer comes to it (a kernel started since); never while a request runs.
  const check = () => {
    if (
      status.dataset.state !== 'idle' &&
      status.dataset.state !== 'no-kernel'
    ) {
      return;
    }
    if (source.kernelNow() === null) {
      button.disabled = true;
      say('no-kernel', `${showing()} ${NO_KERNEL}`);
    } else {
      button.disabled = false;
      say('idle', `${showing()} The kernel holds the rest.`);
    }
  };
  check();
  let frames = 0;
  const untilInPage = () => {
    if (root.isConnected) {
      check();
    } else if (++frames < 600) {
      requestAnimationFrame(untilInPage);
    }
  };
  requestAnimationFrame(untilInPage);
  button.addEventListener('click', async e => {
    e.stopPropagation();
    if (next === null) {
      return;
    }
    button.disabled = true;
    say('loading', `${showing()} Loading…`);
    try {
      const page = await source.nextPage(part.kind, part.part, next);
      shown += append(page.items);
      next = page.next;
      if (next === null) {
        say('done', `Showing all ${count(shown)} ${noun}.`);
        button.hidden = true;
      } else {
        say('idle', `${showing()} The kernel holds the rest.`);
        button.disabled = false;
      }
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      say(
        message === NO_KERNEL ? 'no-kernel' : 'error',
        `${showing()} ${message}`
      );
      button.disabled = message === NO_KERNEL;
    }
  });
  const root = h(
    'div',
    {
      class: 'olympus-live',
      'data-olympus-live': `${part.kind}:${part.part}`
    },
    button,
    ' ',
    status
  );
  root.addEventListener('pointerenter', check);
  return root;
}
