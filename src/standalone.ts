/**
 * The report view for pages with no JupyterLab extension: Colab, VS Code, the
 * classic notebook, JupyterLab with this extension off, a saved notebook page,
 * and the standalone page `report.save()` writes. It is the same view as the
 * JupyterLab renderer's (`reportview.ts`), built by `scripts/build-standalone.mjs`
 * into one self-contained script, `olympus_jupyter/static/viewer.js` (styles
 * included; it loads nothing from the network).
 *
 * A report's `text/html` form is static HTML that reads well with no script
 * (`div.olympus-report`); the Python side (`olympus_jupyter/report/interactive.py`)
 * follows it with the report's data as a JSON island (`<script
 * type="application/json" data-olympus-bundle>`) and a loader (`<script
 * data-olympus-loader>`) that takes the island's text, removes both scripts, runs
 * this bundle once per page and calls `olympusViewer.show(root, text)`. That
 * reads the text as JSON (never as markup), mounts the view at the start of the
 * report's root and hides the static HTML (kept in the page: its text is still
 * there for a search or a reader of the source).
 */
import { ReportView } from './reportview';

/** The minified CSS of the view (`style/base.css`, `style/standalone.css`): set by the build. */
declare const OLYMPUS_CSS: string;
/** A hash of `OLYMPUS_CSS`: a page holds one copy of each version of the styles. */
declare const OLYMPUS_CSS_ID: string;

/** Marks a live report's root and the view's root inside it. */
export const LIVE = 'data-olympus-live';

/** Adds the view's styles to the document (or shadow root) that holds `node`, once. */
function ensureStyles(node: HTMLElement): void {
  const root = node.getRootNode();
  const holder =
    root instanceof ShadowRoot ? root : (node.ownerDocument.head ?? root);
  const scope = root instanceof ShadowRoot ? root : node.ownerDocument;
  if (scope.querySelector(`style[data-olympus-style="${OLYMPUS_CSS_ID}"]`)) {
    return;
  }
  const style = node.ownerDocument.createElement('style');
  style.dataset.olympusStyle = OLYMPUS_CSS_ID;
  style.textContent = OLYMPUS_CSS;
  holder.appendChild(style);
}

/** `rgb(…)`/`rgba(…)` as [r, g, b, alpha], or null. */
function parseColor(value: string): number[] | null {
  const m = /^rgba?\(([^)]+)\)$/.exec(value.trim());
  if (!m) {
    return null;
  }
  const parts = m[1]
    .split(/[\s,/]+/)
    .filter(Boolean)
    .map(Number);
  if (parts.length < 3 || parts.some(isNaN)) {
    return null;
  }
  return [parts[0], parts[1], parts[2], parts.length > 3 ? parts[3] : 1];
}

/**
 * Whether the page around `node` is dark: VS Code's theme class, else the first
 * opaque background up the tree, else the system's preference.
 */
function pageIsDark(node: HTMLElement): boolean {
  const body = node.ownerDocument.body;
  if (body?.classList.contains('vscode-light')) {
    return false;
  }
  if (
    body?.classList.contains('vscode-dark') ||
    body?.classList.contains('vscode-high-contrast')
  ) {
    return true;
  }
  const view = node.ownerDocument.defaultView;
  for (let el: Element | null = node; el && view; el = el.parentElement) {
    const rgba = parseColor(view.getComputedStyle(el).backgroundColor);
    if (rgba && rgba[3] > 0.5) {
      const [r, g, b] = rgba;
      return 0.2126 * r + 0.7152 * g + 0.0722 * b < 128;
    }
  }
  return !!view?.matchMedia?.('(prefers-color-scheme: dark)').matches;
}

/**
 * Mounts a live report view showing `data` (a bundle, checked by the view) in a
 * new element at the start of `host`, and hides the rest of `host`. Outside
 * JupyterLab's theme the view takes a light or dark theme of its own, following
 * the page.
 */
export function mount(host: HTMLElement, data: unknown): ReportView {
  ensureStyles(host);
  const root = host.ownerDocument.createElement('div');
  root.setAttribute(LIVE, '1');
  const view = host.ownerDocument.defaultView;
  const themed =
    view &&
    view.getComputedStyle(host).getPropertyValue('--jp-layout-color0').trim();
  if (!themed) {
    root.classList.add(
      pageIsDark(host) ? 'olympus-theme-dark' : 'olympus-theme-light'
    );
  }
  host.insertBefore(root, host.firstChild);
  host.setAttribute(LIVE, '1');
  const report = new ReportView(root);
  report.render(data);
  // Views are built for panels on screen: catch up when a hidden output (a
  // collapsed one, one a notebook took out of the page while out of sight) is shown.
  if (typeof ResizeObserver !== 'undefined') {
    let hidden = root.clientHeight === 0;
    new ResizeObserver(() => {
      const now = root.clientHeight === 0;
      if (hidden && !now) {
        report.shown();
      }
      hidden = now;
    }).observe(root);
  }
  return report;
}

/**
 * Shows the report whose bundle is the JSON text `json` live in `host` (a
 * report's static root, `div.olympus-report`). Where anything fails, the static
 * HTML stays as it is and the console says why.
 */
export function show(host: HTMLElement, json: string): ReportView | null {
  if (host.hasAttribute(LIVE)) {
    return null; // shown already
  }
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch (err) {
    console.warn(`Olympus: this report's data does not read (${err})`);
    return null;
  }
  try {
    return mount(host, data);
  } catch (err) {
    host.removeAttribute(LIVE);
    host.querySelector(`:scope > [${LIVE}]`)?.remove();
    console.warn(`Olympus: no interactive view (${err}); the static one stays`);
    return null;
  }
}

(window as unknown as { olympusViewer: unknown }).olympusViewer = {
  mount,
  show
};
