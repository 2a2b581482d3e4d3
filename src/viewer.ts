/**
 * The renderer of `application/vnd.olympus.stages+json`: a report as panels (the
 * source, each stage text, the analyses) laid out side by side or as tabs, with a
 * toolbar, a failure box, and the views linked through one hub.
 *
 * DOM hooks (for tests and styles): the root `div.olympus-viewer[data-olympus-viewer]`
 * with `data-layout` and, once the first panel has painted, `data-olympus-rendered`;
 * `button[data-olympus-action=layout]`; tabs `[role=tab][data-stage]`; panels
 * `[role=tabpanel][data-stage-panel]`; `[data-olympus-unavailable]`; `[data-olympus-failure]`.
 */
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';
import { AnalysisView } from './analysisview';
import { h } from './dom';
import { errorBox, failureBox, header, unavailableBox } from './header';
import { ISelection, LinkHub } from './hub';
import { LinkIndex } from './links';
import { LinkStatus } from './linkstatus';
import {
  ContractError,
  IReport,
  LINKED_STAGES,
  LinkedStage,
  PROVENANCE_STAGE,
  ReportStage,
  STAGES_MIME,
  STAGE_LABELS,
  STAGE_TITLES,
  TextStage,
  formatMs,
  readReport,
  reportStages,
  stageText,
  unavailableReason
} from './model';
import { IPanelView } from './panel';
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

const TIMING: Partial<Record<ReportStage, string>> = {
  olympuspr: 'trace',
  stablehlo: 'lower',
  compiled: 'compile'
};
const OP_WORDS: Record<LinkedStage, string> = {
  olympuspr: 'equations',
  stablehlo: 'ops',
  compiled: 'instructions'
};

interface IPanel {
  stage: ReportStage;
  node: HTMLElement;
  body: HTMLElement;
  heading: HTMLElement;
  view: IPanelView | null;
}

/** A stage report, live: every op of every stage tied to the source line that made it. */
export class StagesViewer extends Widget implements IRenderMime.IRenderer {
  constructor(options: IRenderMime.IRendererOptions) {
    super();
    this._mimeType = options.mimeType ?? STAGES_MIME;
    this.addClass('olympus-viewer');
    this.node.dataset.olympusViewer = '1';
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

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    mark('olympus:render-start');
    this._reset();
    let report: IReport;
    try {
      report = readReport(model.data[this._mimeType]);
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

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._reset();
    super.dispose();
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    this._showVisible();
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this._showVisible();
  }

  private _reset(): void {
    for (const p of this._panels.values()) {
      p.view?.dispose();
    }
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
    const stages = reportStages(report);
    this._mode = loadLayout();
    this._hidden = new Set([...loadHidden()].filter(s => stages.includes(s)));
    if (stages.every(s => this._hidden.has(s))) {
      this._hidden.clear();
    }

    this.node.appendChild(header(report));
    const failure = failureBox(report);
    if (failure) {
      this.node.appendChild(failure);
    }

    const toolbar = new Toolbar({
      stages: stages.map(s => ({ stage: s, label: STAGE_LABELS[s] })),
      layout: this._mode,
      hidden: this._hidden,
      onLayout: layout => this._setLayout(layout),
      onToggle: (stage, shown) => this._toggle(stage as ReportStage, shown)
    });
    this.node.appendChild(toolbar.node);

    this._tabs = new TabList({
      label: `Stages of ${report.name}`,
      items: stages.map(s => ({
        stage: s,
        label: STAGE_LABELS[s],
        id: `${id}-tab-${s}`,
        controls: `${id}-panel-${s}`
      })),
      onSelect: stage => this._select(stage as ReportStage)
    });
    this.node.appendChild(this._tabs.node);

    this._status = new LinkStatus(
      links,
      () => this._visibleStages(),
      stage => this._go(stage),
      () => hub.clear()
    );
    if (links && stages.includes('source')) {
      this.node.appendChild(this._status.node);
    }

    const grid = h('div', { class: 'olympus-panels' });
    this.node.appendChild(grid);
    for (const stage of stages) {
      const panel = this._panel(report, links, stage, id);
      this._panels.set(stage, panel);
      grid.appendChild(panel.node);
    }

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
    stage: ReportStage,
    id: string
  ): IPanel {
    const headingId = `${id}-heading-${stage}`;
    const heading = h(
      'h3',
      { class: 'olympus-panel-title', id: headingId },
      STAGE_TITLES[stage]
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
        id: `${id}-panel-${stage}`,
        'data-stage-panel': stage,
        'aria-labelledby': `${id}-tab-${stage}`
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
    const painted = () => this._markPainted();
    if (stage === 'source') {
      panel.view = new SourceView({
        links: links!,
        hub: this._hub!,
        label: `Source of ${report.name}`,
        parent: body,
        onPainted: painted
      });
    } else if (stage === 'cost' || stage === 'memory') {
      panel.view = new AnalysisView(stage, report, body);
    } else {
      const linked = (LINKED_STAGES as ReadonlyArray<string>).includes(stage);
      panel.view = new StageView({
        stage: stage as TextStage,
        text: stageText(report, stage as TextStage) ?? '',
        index: linked && links ? links.stage(stage as LinkedStage) : null,
        hub: this._hub!,
        debugInfo: report.debug_info,
        label: `${STAGE_TITLES[stage]} of ${report.name}`,
        parent: body,
        onPainted: painted
      });
    }
    return panel;
  }

  /** `8 equations · 13 lines · trace 20.5 ms` */
  private _meta(report: IReport, stage: ReportStage): string {
    const parts: string[] = [];
    const prov = report.provenance;
    if (stage === 'source' && prov && prov.function.file !== null) {
      const file = prov.files[prov.function.file];
      if (file) {
        parts.push(
          `${prov.function.name} · ${file.path.split(/[\\/]/).pop()}:${prov.function.first_line}`
        );
      }
    }
    if ((LINKED_STAGES as ReadonlyArray<string>).includes(stage) && prov) {
      const st = prov.stages[PROVENANCE_STAGE[stage as LinkedStage]];
      if (st) {
        parts.push(
          `${st.ops.count.toLocaleString('en-US')} ${OP_WORDS[stage as LinkedStage]}`
        );
      }
    }
    if (
      stage === 'olympuspr' ||
      stage === 'stablehlo' ||
      stage === 'hlo' ||
      stage === 'compiled'
    ) {
      const text = stageText(report, stage);
      if (text !== null) {
        let n = 1;
        for (
          let i = text.indexOf('\n');
          i >= 0 && i < text.length - 1;
          i = text.indexOf('\n', i + 1)
        ) {
          n++;
        }
        parts.push(`${n.toLocaleString('en-US')} lines`);
      }
    }
    const step = TIMING[stage];
    if (step && report.timings[step] !== undefined) {
      parts.push(`${step} ${formatMs(report.timings[step])}`);
    }
    return parts.join(' · ');
  }

  private _visibleStages(): ReportStage[] {
    return [...this._panels.keys()].filter(s => !this._hidden.has(s));
  }

  private _setLayout(layout: Layout): void {
    this._mode = layout;
    saveLayout(layout);
    this._applyLayout();
  }

  private _toggle(stage: ReportStage, shown: boolean): void {
    if (shown) {
      this._hidden.delete(stage);
    } else {
      this._hidden.add(stage);
    }
    saveHidden(this._hidden);
    this._applyLayout();
  }

  private _select(stage: ReportStage): void {
    this._selected = stage;
    this._applyLayout();
  }

  /** Go to a stage from the status line: its tab, or its panel's editor. */
  private _go(stage: ReportStage): void {
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

  /** Builds the views of the panels now on screen (the others wait until shown). */
  private _showVisible(): void {
    let any = false;
    for (const panel of this._panels.values()) {
      if (!panel.node.hidden && panel.view) {
        panel.view.show();
        any =
          any ||
          panel.view instanceof StageView ||
          panel.view instanceof SourceView;
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
    for (const stage of LINKED_STAGES) {
      const lit = (ops?.[PROVENANCE_STAGE[stage]]?.length ?? 0) > 0;
      this._tabs?.setMarked(stage, lit && !!this._panels.get(stage)?.view);
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

  private _mimeType: string;
  private _hub: LinkHub | null = null;
  private _links: LinkIndex | null = null;
  private _tabs: TabList | null = null;
  private _status: LinkStatus | null = null;
  private _panels = new Map<ReportStage, IPanel>();
  private _mode: Layout = 'tabs';
  private _hidden = new Set<ReportStage>();
  private _selected: ReportStage | null = null;
  private _painted = false;
}
