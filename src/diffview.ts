/**
 * The renderer of `application/vnd.olympus.diff+json`: two reports of one
 * function (say, before and after a change, or for two platforms) side by side,
 * one stage at a time, with CodeMirror's merge view marking what changed.
 *
 * DOM hooks: the root `div.olympus-diff` (`data-olympus-rendered` once painted),
 * the stage selector `[role=tab][data-stage]`, the merge view `.cm-mergeView`,
 * tables `table[data-olympus-table=cost|memory]` comparing the analyses.
 */
import { MergeView } from '@codemirror/merge';
import { syntaxHighlighting } from '@codemirror/language';
import { EditorState, Extension } from '@codemirror/state';
import { EditorView, lineNumbers } from '@codemirror/view';
import { jupyterTheme } from '@jupyterlab/codemirror';
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';
import { h } from './dom';
import { errorBox } from './header';
import { hlo } from './languages/hlo';
import { olympuspr } from './languages/olympuspr';
import { stablehlo } from './languages/stablehlo';
import { stageHighlightStyle } from './languages/tokens';
import { LinkIndex } from './links';
import {
  ALL_STAGES,
  ContractError,
  DIFF_MIME,
  IDiff,
  IReport,
  ReportStage,
  STAGE_LABELS,
  STAGE_TITLES,
  TextStage,
  formatBytes,
  readDiff,
  stageText,
  unavailableReason
} from './model';
import { buildSourceDoc } from './sourceview';
import { change, formatNumber, memoryRows } from './tables';
import { TabList } from './tabs';

let nextId = 0;

const LANGUAGES: Partial<Record<ReportStage, Extension>> = {
  olympuspr,
  stablehlo,
  hlo,
  compiled: hlo
};

/** The text a report shows for a stage in a diff (the source: the held files). */
function diffText(report: IReport, stage: ReportStage): string | null {
  if (unavailableReason(report, stage) !== null) {
    return null;
  }
  if (stage === 'source') {
    return report.provenance
      ? buildSourceDoc(new LinkIndex(report.provenance)).text
      : null;
  }
  return stageText(report, stage as TextStage);
}

/** Two reports' analyses, metric by metric. */
function compareTable(diff: IDiff, stage: 'cost' | 'memory'): HTMLTableElement {
  const [a, b] = diff.labels;
  const rows: string[][] = [];
  if (stage === 'cost') {
    const ca =
      diff.before.analyses.cost.compiled ??
      diff.before.analyses.cost.lowered ??
      {};
    const cb =
      diff.after.analyses.cost.compiled ??
      diff.after.analyses.cost.lowered ??
      {};
    const keys = [...new Set([...Object.keys(ca), ...Object.keys(cb)])].sort();
    for (const k of keys) {
      rows.push([
        k,
        formatNumber(ca[k]),
        formatNumber(cb[k]),
        change(ca[k], cb[k])
      ]);
    }
  } else {
    const ma = diff.before.analyses.memory ?? {};
    const mb = diff.after.analyses.memory ?? {};
    const seen = new Map(memoryRows({ ...ma, ...mb }));
    for (const [k, label] of seen) {
      rows.push([
        label,
        formatBytes(ma[k] ?? 0),
        formatBytes(mb[k] ?? 0),
        change(ma[k], mb[k])
      ]);
    }
  }
  return h(
    'table',
    { class: 'olympus-table', 'data-olympus-table': stage },
    h(
      'caption',
      null,
      stage === 'cost'
        ? 'Cost estimates after optimization (before, where a report has none after)'
        : 'Memory of the compiled program'
    ),
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        ...[stage === 'cost' ? 'metric' : 'memory', a, b, 'change'].map(c =>
          h('th', { scope: 'col' }, c)
        )
      )
    ),
    h(
      'tbody',
      null,
      ...rows.map(([first, ...rest]) =>
        h(
          'tr',
          { class: rest[0] !== rest[1] ? 'olympus-changed' : null },
          h('th', { scope: 'row' }, first),
          ...rest.map(c => h('td', null, c))
        )
      )
    )
  );
}

function sideExtensions(stage: ReportStage, label: string): Extension[] {
  return [
    EditorState.readOnly.of(true),
    EditorView.editable.of(false),
    EditorView.contentAttributes.of({
      tabindex: '0',
      'aria-label': label,
      'aria-readonly': 'true'
    }),
    lineNumbers(),
    jupyterTheme,
    syntaxHighlighting(stageHighlightStyle),
    LANGUAGES[stage] ?? []
  ];
}

export class DiffViewer extends Widget implements IRenderMime.IRenderer {
  constructor(options: IRenderMime.IRendererOptions) {
    super();
    this._mimeType = options.mimeType ?? DIFF_MIME;
    this.addClass('olympus-diff');
    this.node.dataset.olympusDiff = '1';
    this.node.setAttribute('data-lm-suppress-shortcuts', 'true');
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    this._reset();
    let diff: IDiff;
    try {
      diff = readDiff(model.data[this._mimeType]);
    } catch (err) {
      const message =
        err instanceof ContractError
          ? err.message
          : `Cannot show this diff: ${err}`;
      this.node.appendChild(errorBox(message));
      this.node.dataset.olympusRendered = '1';
      return;
    }
    this._diff = diff;
    this._build(diff);
    if (this.node.isConnected) {
      this._show();
    }
  }

  dispose(): void {
    if (!this.isDisposed) {
      this._reset();
      super.dispose();
    }
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    this._show();
  }

  private _reset(): void {
    for (const v of this._merges.values()) {
      v.destroy();
    }
    this._merges.clear();
    this._bodies.clear();
    this.node.textContent = '';
    delete this.node.dataset.olympusRendered;
  }

  private _build(diff: IDiff): void {
    const id = `olympus-diff-${++nextId}`;
    const [a, b] = diff.labels;
    const name =
      diff.before.name === diff.after.name
        ? diff.before.name
        : `${diff.before.name} / ${diff.after.name}`;
    this.node.appendChild(
      h(
        'div',
        { class: 'olympus-head' },
        h('span', { class: 'olympus-name' }, name),
        h('span', { class: 'olympus-meta' }, `${a} ⇄ ${b}`)
      )
    );
    const asked = new Set([...diff.before.stages, ...diff.after.stages]);
    const stages = ALL_STAGES.filter(
      s =>
        asked.has(s) &&
        (unavailableReason(diff.before, s) === null ||
          unavailableReason(diff.after, s) === null)
    );
    this._tabs = new TabList({
      label: `Stages of ${name} to compare`,
      items: stages.map(s => ({
        stage: s,
        label: STAGE_LABELS[s],
        id: `${id}-tab-${s}`,
        controls: `${id}-panel-${s}`
      })),
      onSelect: s => {
        this._selected = s as ReportStage;
        this._show();
      }
    });
    this.node.appendChild(this._tabs.node);
    const panels = h('div', { class: 'olympus-panels' });
    for (const s of stages) {
      const body = h(
        'section',
        {
          class: 'olympus-panel olympus-diff-panel',
          role: 'tabpanel',
          id: `${id}-panel-${s}`,
          'data-stage-panel': s,
          'aria-labelledby': `${id}-tab-${s}`,
          hidden: true
        },
        h(
          'div',
          { class: 'olympus-panel-head' },
          h('h3', { class: 'olympus-panel-title' }, STAGE_TITLES[s])
        )
      );
      this._bodies.set(s, body);
      panels.appendChild(body);
    }
    this.node.appendChild(panels);
    if (!stages.length) {
      this.node.appendChild(
        h(
          'p',
          { class: 'olympus-unavailable', 'data-olympus-unavailable': 'all' },
          'Neither report has a stage to compare.'
        )
      );
    }
    this._selected = stages.includes('compiled')
      ? 'compiled'
      : (stages[0] ?? null);
  }

  private _show(): void {
    const diff = this._diff;
    if (!diff || !this._tabs) {
      return;
    }
    const stage = this._selected;
    if (stage) {
      this._tabs.select(stage);
    }
    for (const [s, body] of this._bodies) {
      body.hidden = s !== stage;
    }
    if (stage && this.node.isConnected) {
      this._ensure(diff, stage);
    }
    requestAnimationFrame(() => {
      this.node.dataset.olympusRendered = '1';
    });
  }

  private _ensure(diff: IDiff, stage: ReportStage): void {
    const body = this._bodies.get(stage)!;
    if (body.dataset.built) {
      this._merges.get(stage)?.a.requestMeasure();
      this._merges.get(stage)?.b.requestMeasure();
      return;
    }
    body.dataset.built = '1';
    const [la, lb] = diff.labels;
    if (stage === 'cost' || stage === 'memory') {
      body.appendChild(
        h('div', { class: 'olympus-table-wrap' }, compareTable(diff, stage))
      );
      return;
    }
    const ta = diffText(diff.before, stage);
    const tb = diffText(diff.after, stage);
    const notes: HTMLElement[] = [];
    for (const [report, text, label] of [
      [diff.before, ta, la],
      [diff.after, tb, lb]
    ] as [IReport, string | null, string][]) {
      if (text === null) {
        notes.push(
          h(
            'p',
            { class: 'olympus-unavailable', 'data-olympus-unavailable': stage },
            `${label}: not available: ${unavailableReason(report, stage)}.`
          )
        );
      }
    }
    notes.forEach(n => body.appendChild(n));
    const labels = h(
      'div',
      { class: 'olympus-diff-labels' },
      h('span', { class: 'olympus-diff-label' }, la),
      h('span', { class: 'olympus-diff-label' }, lb)
    );
    body.appendChild(labels);
    const host = h('div', { class: 'olympus-merge' });
    body.appendChild(host);
    const view = new MergeView({
      a: {
        doc: ta ?? '',
        extensions: sideExtensions(stage, `${STAGE_TITLES[stage]}, ${la}`)
      },
      b: {
        doc: tb ?? '',
        extensions: sideExtensions(stage, `${STAGE_TITLES[stage]}, ${lb}`)
      },
      parent: host,
      gutter: true,
      highlightChanges: true,
      collapseUnchanged: { margin: 3, minSize: 8 },
      diffConfig: { scanLimit: 2000, timeout: 1000 }
    });
    this._merges.set(stage, view);
    const changes = view.chunks.length;
    body
      .querySelector('.olympus-panel-head')
      ?.appendChild(
        h(
          'span',
          { class: 'olympus-panel-meta', 'data-olympus-changes': changes },
          changes === 0
            ? 'no changes'
            : changes === 1
              ? '1 changed region'
              : `${changes} changed regions`
        )
      );
  }

  private _mimeType: string;
  private _diff: IDiff | null = null;
  private _tabs: TabList | null = null;
  private _selected: ReportStage | null = null;
  private _bodies = new Map<ReportStage, HTMLElement>();
  private _merges = new Map<ReportStage, MergeView>();
}
