/**
 * A stage report, live, in a plain DOM node: the report as panels (the source,
 * each stage text, the analyses) laid out side by side or as tabs, with a
 * toolbar, a failure box, and the views linked through one hub. It needs no
 * JupyterLab: the JupyterLab renderer (`viewer.ts`) wraps it in a Lumino widget,
 * and the standalone bundle (`standalone.ts`) mounts it on a node of any page.
 *
 * DOM hooks (for tests and styles): the root `div.olympus-viewer` (its host marks
 * it: `[data-olympus-viewer]` in JupyterLab, `[data-olympus-live]` in a page) with
 * `data-layout` and, once the first panel has painted, `data-olympus-rendered`;
 * `button[data-olympus-action=layout]`; tabs `[role=tab][data-stage]`; panels
 * `[role=tabpanel][data-stage-panel][data-stage-kind]` (a `passes` panel: see
 * `passview.ts`; a `costs` panel: `costview.ts`); the heatmap's choice
 * `select[data-olympus-action=heat]` (a report with costs only) and its marks
 * `.olympus-heat-gutter [data-olympus-heat-mark]`; `[data-olympus-unavailable]`;
 * `[data-olympus-unsupported]` (a stage this viewer has no view for); `[data-olympus-failure]`.
 *
 * The stages, their order, titles, labels, languages and units are the report's
 * stage table's (see `readReport`): each panel's view, the words beside its title
 * and why it is unavailable follow its stage's kind (`kinds.ts`).
 *
 * User Timing: `olympus:heat` (the heatmap switched, to the next frame).
 */
import { CostHeat, CostView, HEAT_METRICS, HeatMetric } from './costview';
import { KernelFinder, LiveSource } from './livekernel';
import { h } from './dom';
import {
  errorBox,
  failureBox,
  notesBox,
  header,
  unavailableBox,
  unsupportedBox
} from './header';
import { ISelection, LinkHub } from './hub';
import { LinkIndex } from './links';
import { LinkStatus } from './linkstatus';
import { kindOf, unavailableReason } from './kinds';
import {
  ContractError,
  IReport,
  IStageInfo,
  linkedStages,
  readReport,
  sourceStage
} from './model';
import { IPanelView } from './panel';
import { PassView } from './passview';
import {
  Layout,
  loadHidden,
  loadLayout,
  saveHidden,
  saveLayout
} from './prefs';
import { SourceView } from './sourceview';
import { StageView } from './stageview';
import { TabList } from './tabs';
import { Toolbar } from './toolbar';

let nextId = 0;

/** A User Timing mark, for benchmarks (`performance.getEntriesByName('olympus:first-paint')`). */
function mark(name: string): void {
  try {
    performance.mark(name);
  } catch {
    // no User Timing here
  }
}

interface IPanel {
  stage: IStageInfo;
  node: HTMLElement;
  body: HTMLElement;
  heading: HTMLElement;
  view: IPanelView | null;
}

/** A stage report, live: every op of every stage tied to the source line that made it. */
export class ReportView {
  /**
   * Shows reports in `node` (its content is the view's from now on). `kernel`
   * finds the live kernel the report came from, where there may be one
   * (JupyterLab: the notebook's); a capped report fetches the rest from it
   * (`livekernel.ts`).
   */
  constructor(
    readonly node: HTMLElement,
    private readonly kernel: KernelFinder | null = null
  ) {
    this.node.classList.add('olympus-viewer');
    // Keys pressed in the report are the report's (arrows, Enter, Escape), not the notebook's.
    this.node.setAttribute('data-lm-suppress-shortcuts', 'true');
    // Escape anywhere in the report (unless an editor's search panel took it) clears the highlight.
    this.node.addEventListener('keydown', e => {
      const hub = this._hub;
      if (
        e.key === 'Escape' &&
        !e.defaultPrevented &&
        hub &&
        hub.current.source !== null
      ) {
        hub.clear();
        e.preventDefault();
      }
    });
  }

  /**
   * Shows the report `data` (a bundle as JSON data, checked here): the views of
   * the panels on screen are built at once if the node is in the page, else when
   * `shown()` is called.
   */
  render(data: unknown): void {
    mark('olympus:render-start');
    this._reset();
    let report: IReport;
    try {
      report = readReport(data);
    } catch (err) {
      const message =
        err instanceof ContractError
          ? err.message
          : `Cannot show this report: ${err}`;
      this.node.appendChild(errorBox(message));
      this._markPainted();
      return;
    }
    this._build(report);
    mark('olympus:built');
    if (this.node.isConnected) {
      this._showVisible();
    }
  }

  /** The node was put in the page or shown: builds the views now on screen. */
  shown(): void {
    this._showVisible();
  }

  dispose(): void {
    this._reset();
  }

  private _reset(): void {
    for (const p of this._panels.values()) {
      p.view?.dispose();
    }
    this._costs = null;
    this._heat = null;
    this._panels.clear();
    this._hub = null;
    this._links = null;
    this._tabs = null;
    this._status = null;
    this.node.textContent = '';
    delete this.node.dataset.olympusRendered;
    this._painted = false;
  }

  private _build(report: IReport): void {
    const id = `olympus-${++nextId}`;
    const hub = new LinkHub();
    this._hub = hub;
    const links = report.provenance ? new LinkIndex(report.provenance) : null;
    this._links = links;
    const table = report.stage_table;
    const stages = table.map(s => s.name);
    this._linked = linkedStages(report);
    this._mode = loadLayout();
    this._hidden = new Set([...loadHidden()].filter(s => stages.includes(s)));
    if (stages.every(s => this._hidden.has(s))) {
      this._hidden.clear();
    }

    this.node.appendChild(header(report));
    const notes = notesBox(report);
    if (notes) {
      this.node.appendChild(notes);
    }
    const failure = failureBox(report);
    if (failure) {
      this.node.appendChild(failure);
    }

    const toolbar = new Toolbar({
      stages: table.map(s => ({ stage: s.name, label: s.label })),
      layout: this._mode,
      hidden: this._hidden,
      onLayout: layout => this._setLayout(layout),
      onToggle: (stage, shown) => this._toggle(stage, shown),
      heat: report.costs
        ? {
            choices: HEAT_METRICS.map(([value, label]) => ({
              value,
              label,
              unavailable:
                value === 'peak' && !report.costs!.peak
                  ? (report.costs!.unavailable.peak ?? 'no peak was computed')
                  : undefined
            })),
            onHeat: metric => this._setHeat(metric as HeatMetric | null)
          }
        : undefined
    });
    this._costs = report.costs;
    this.node.appendChild(toolbar.node);

    this._tabs = new TabList({
      label: `Stages of ${report.name}`,
      items: table.map((s, i) => ({
        stage: s.name,
        label: s.label,
        id: `${id}-tab-${i}`,
        controls: `${id}-panel-${i}`
      })),
      onSelect: stage => this._select(stage)
    });
    this.node.appendChild(this._tabs.node);

    this._status = new LinkStatus(
      links,
      this._linked,
      () => this._visibleStages(),
      stage => this._go(stage),
      () => hub.clear()
    );
    if (links && sourceStage(report) !== null) {
      this.node.appendChild(this._status.node);
    }

    const grid = h('div', { class: 'olympus-panels' });
    this.node.appendChild(grid);
    table.forEach((stage, i) => {
      const panel = this._panel(report, links, stage, id, i);
      this._panels.set(stage.name, panel);
      grid.appendChild(panel.node);
    });

    hub.changed.connect((_, sel) => this._apply(sel));
    hub.showRequested.connect((_, stage) => {
      if (
        this._mode === 'tabs' &&
        this._panels.has(stage) &&
        !this._hidden.has(stage)
      ) {
        const focusWasInside = this.node.contains(document.activeElement);
        this._select(stage);
        if (focusWasInside) {
          this._panels.get(stage)?.view?.focus();
        }
      }
    });

    const first = stages.find(s => !this._hidden.has(s)) ?? stages[0];
    this._selected = first ?? null;
    this._applyLayout();
  }

  private _panel(
    report: IReport,
    links: LinkIndex | null,
    stage: IStageInfo,
    id: string,
    index: number
  ): IPanel {
    const headingId = `${id}-heading-${index}`;
    const heading = h(
      'h3',
      { class: 'olympus-panel-title', id: headingId },
      stage.title
    );
    const meta = h(
      'span',
      { class: 'olympus-panel-meta' },
      this._meta(report, stage)
    );
    const body = h('div', { class: 'olympus-panel-body' });
    const node = h(
      'section',
      {
        class: 'olympus-panel',
        role: 'tabpanel',
        id: `${id}-panel-${index}`,
        'data-stage-panel': stage.name,
        'data-stage-kind': stage.kind,
        'aria-labelledby': `${id}-tab-${index}`
      },
      h('div', { class: 'olympus-panel-head' }, heading, meta),
      body
    );
    const panel: IPanel = { stage, node, body, heading, view: null };
    const reason = unavailableReason(report, stage);
    if (reason !== null) {
      body.appendChild(unavailableBox(stage, reason));
      return panel;
    }
    const kind = kindOf(stage);
    if (kind === null) {
      body.appendChild(unsupportedBox(stage));
      return panel;
    }
    panel.view = kind.view({
      report,
      stage,
      links,
      linked: this._linked,
      hub: this._hub!,
      parent: body,
      onPainted: () => this._markPainted(),
      live: report.live ? new LiveSource(report.live, this.kernel) : null
    });
    return panel;
  }

  /** `8 equations · 13 lines · trace 20.5 ms`: the stage's kind says (`kinds.ts`). */
  private _meta(report: IReport, stage: IStageInfo): string {
    return (kindOf(stage)?.meta(report, stage) ?? []).join(' · ');
  }

  private _visibleStages(): string[] {
    return [...this._panels.keys()].filter(s => !this._hidden.has(s));
  }

  private _setLayout(layout: Layout): void {
    this._mode = layout;
    saveLayout(layout);
    this._applyLayout();
  }

  private _toggle(stage: string, shown: boolean): void {
    if (shown) {
      this._hidden.delete(stage);
    } else {
      this._hidden.add(stage);
    }
    saveHidden(this._hidden);
    this._applyLayout();
  }

  private _select(stage: string): void {
    this._selected = stage;
    this._applyLayout();
  }

  /** Go to a stage from the status line: its tab, or its panel's editor. */
  private _go(stage: string): void {
    if (this._mode === 'tabs') {
      this._select(stage);
    }
    this._panels.get(stage)?.view?.focus();
  }

  private _applyLayout(): void {
    const tabs = this._tabs;
    if (!tabs) {
      return;
    }
    const side = this._mode === 'side-by-side';
    this.node.dataset.layout = this._mode;
    const visible = this._visibleStages();
    if (this._selected === null || !visible.includes(this._selected)) {
      this._selected = visible[0] ?? null;
    }
    tabs.node.hidden = side;
    for (const [stage, panel] of this._panels) {
      tabs.setHidden(stage, this._hidden.has(stage));
      const shown = side ? !this._hidden.has(stage) : stage === this._selected;
      panel.node.hidden = !shown;
      panel.node.setAttribute(
        'aria-labelledby',
        side ? panel.heading.id : `${panel.node.id.replace('-panel-', '-tab-')}`
      );
    }
    if (this._selected) {
      tabs.select(this._selected);
    }
    this.node.classList.toggle('olympus-side-by-side', side);
    if (this.node.isConnected) {
      this._showVisible();
    }
  }

  /**
   * The heatmap: off (null), or each line coloured by its share of `metric`. Every
   * source and stage view follows at once (a view not built yet takes it when it is).
   */
  private _setHeat(metric: HeatMetric | null): void {
    mark('olympus:heat-start');
    this._heat =
      metric && this._costs
        ? new CostHeat(this._costs, metric, this._links)
        : null;
    for (const panel of this._panels.values()) {
      const view = panel.view;
      if (view instanceof SourceView || view instanceof StageView) {
        view.setHeat(this._heat);
      }
    }
    this.node.dataset.olympusHeat = metric ?? 'off';
    requestAnimationFrame(() => {
      try {
        performance.measure('olympus:heat', 'olympus:heat-start');
      } catch {
        // no start mark (cleared by the page): nothing to measure
      }
    });
  }

  /** Builds the views of the panels now on screen (the others wait until shown). */
  private _showVisible(): void {
    let any = false;
    for (const panel of this._panels.values()) {
      if (!panel.node.hidden && panel.view) {
        panel.view.show();
        any =
          any ||
          panel.view instanceof StageView ||
          panel.view instanceof SourceView ||
          panel.view instanceof PassView ||
          panel.view instanceof CostView;
      }
    }
    if (!any) {
      requestAnimationFrame(() => this._markPainted());
    }
  }

  private _apply(sel: ISelection): void {
    for (const panel of this._panels.values()) {
      panel.view?.apply(sel);
    }
    this._status?.update(sel);
    const ops =
      sel.source && this._links ? this._links.opsOf(sel.source) : undefined;
    for (const stage of this._linked) {
      const lit = (ops?.[stage.name]?.length ?? 0) > 0;
      this._tabs?.setMarked(
        stage.name,
        lit && !!this._panels.get(stage.name)?.view
      );
    }
  }

  private _markPainted(): void {
    if (!this._painted) {
      this._painted = true;
      this.node.dataset.olympusRendered = '1';
      mark('olympus:rendered');
      try {
        performance.measure(
          'olympus:first-paint',
          'olympus:render-start',
          'olympus:rendered'
        );
      } catch {
        // no start mark (cleared by the page): nothing to measure
      }
    }
  }

  private _hub: LinkHub | null = null;
  private _links: LinkIndex | null = null;
  private _costs: IReport['costs'] = null;
  /** The heatmap shown, or null (off). */
  private _heat: CostHeat | null = null;
  private _tabs: TabList | null = null;
  private _status: LinkStatus | null = null;
  private _panels = new Map<string, IPanel>();
  /** The report's linked stages, in order. */
  private _linked: IStageInfo[] = [];
  private _mode: Layout = 'tabs';
  private _hidden = new Set<string>();
  private _selected: string | null = null;
  private _painted = false;
}
