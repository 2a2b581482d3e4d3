/**
 * The renderer of `application/vnd.olympus.diff+json`: two reports of one
 * function (say, before and after a change, or for two platforms) side by side,
 * one stage at a time, with CodeMirror's merge view marking what changed.
 *
 * DOM hooks: the root `div.olympus-diff` (`data-olympus-rendered` once painted),
 * the stage selector `[role=tab][data-stage]`, the merge view `.cm-mergeView`,
 * tables `table[data-olympus-table=cost|memory]` comparing the analyses (`analysisview.ts`).
 *
 * The stages, their order, titles, labels and languages come from the two
 * reports' stage tables (the first report's order, with the second's other stages
 * in theirs).
 */
import { MergeView } from '@codemirror/merge';
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';
import { h } from './dom';
import { errorBox, unsupportedBox } from './header';
import { mergeSideExtensions } from './editor';
import { LinkIndex } from './links';
import { kindOf, unavailableReason } from './kinds';
import {
  ContractError,
  DIFF_MIME,
  IDiff,
  IReport,
  IStageInfo,
  STEPS,
  readDiff,
  stageInfo
} from './model';
import { buildSourceDoc } from './sourceview';
import { TabList } from './tabs';

let nextId = 0;

/**
 * The stages of two reports, in order: the first's, and each of the second's
 * others after the stage it follows there. A stage both have keeps the first's row.
 */
function mergedStages(a: IReport, b: IReport): IStageInfo[] {
  const out = [...a.stage_table];
  let at = -1;
  for (const row of b.stage_table) {
    const i = out.findIndex(r => r.name === row.name);
    if (i >= 0) {
      at = i;
    } else {
      out.splice(++at, 0, row);
    }
  }
  return out;
}

/** A report's own row for a stage, or the other report's (`stage`) when it has none. */
function rowIn(report: IReport, stage: IStageInfo): IStageInfo {
  return stageInfo(report, stage.name) ?? stage;
}

/** Whether a report has something to show for a stage. */
function available(report: IReport, stage: IStageInfo): boolean {
  return unavailableReason(report, rowIn(report, stage)) === null;
}

/** The stage to open on: the first program made by the latest step, or the first. */
function firstChoice(stages: IStageInfo[]): IStageInfo | null {
  const rank = (s: IStageInfo) => STEPS.indexOf(s.step ?? '');
  let best: IStageInfo | null = null;
  for (const s of stages) {
    if (s.kind === 'program' && (best === null || rank(s) > rank(best))) {
      best = s;
    }
  }
  return best ?? stages[0] ?? null;
}

/** The text a report shows for a stage in a diff (the source: the held files). */
function diffText(report: IReport, stage: IStageInfo): string | null {
  const row = rowIn(report, stage);
  if (unavailableReason(report, row) !== null) {
    return null;
  }
  if (row.view === 'source') {
    return report.provenance
      ? buildSourceDoc(new LinkIndex(report.provenance)).text
      : null;
  }
  return kindOf(row)?.diffText?.(report, row) ?? null;
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
    this._stages.clear();
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
    const stages = mergedStages(diff.before, diff.after).filter(
      s => available(diff.before, s) || available(diff.after, s)
    );
    this._stages = new Map(stages.map(s => [s.name, s]));
    this._tabs = new TabList({
      label: `Stages of ${name} to compare`,
      items: stages.map((s, i) => ({
        stage: s.name,
        label: s.label,
        id: `${id}-tab-${i}`,
        controls: `${id}-panel-${i}`
      })),
      onSelect: s => {
        this._selected = s;
        this._show();
      }
    });
    this.node.appendChild(this._tabs.node);
    const panels = h('div', { class: 'olympus-panels' });
    stages.forEach((s, i) => {
      const body = h(
        'section',
        {
          class: 'olympus-panel olympus-diff-panel',
          role: 'tabpanel',
          id: `${id}-panel-${i}`,
          'data-stage-panel': s.name,
          'data-stage-kind': s.kind,
          'aria-labelledby': `${id}-tab-${i}`,
          hidden: true
        },
        h(
          'div',
          { class: 'olympus-panel-head' },
          h('h3', { class: 'olympus-panel-title' }, s.title)
        )
      );
      this._bodies.set(s.name, body);
      panels.appendChild(body);
    });
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
    this._selected = firstChoice(stages)?.name ?? null;
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
    const info = stage === null ? undefined : this._stages.get(stage);
    if (info && this.node.isConnected) {
      this._ensure(diff, info);
    }
    requestAnimationFrame(() => {
      this.node.dataset.olympusRendered = '1';
    });
  }

  private _ensure(diff: IDiff, stage: IStageInfo): void {
    const body = this._bodies.get(stage.name)!;
    if (body.dataset.built) {
      this._merges.get(stage.name)?.a.requestMeasure();
      this._merges.get(stage.name)?.b.requestMeasure();
      return;
    }
    body.dataset.built = '1';
    const [la, lb] = diff.labels;
    // How the stage's kind compares two reports (kinds.ts): texts here, or its own.
    const compare = kindOf(stage)?.diff ?? null;
    if (compare === null) {
      body.appendChild(unsupportedBox(stage));
      return;
    }
    if (compare !== 'text') {
      body.appendChild(compare(diff, stage));
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
            {
              class: 'olympus-unavailable',
              'data-olympus-unavailable': stage.name
            },
            `${label}: not available: ${unavailableReason(report, rowIn(report, stage))}.`
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
        extensions: mergeSideExtensions(stage.language, `${stage.title}, ${la}`)
      },
      b: {
        doc: tb ?? '',
        extensions: mergeSideExtensions(stage.language, `${stage.title}, ${lb}`)
      },
      parent: host,
      gutter: true,
      highlightChanges: true,
      collapseUnchanged: { margin: 3, minSize: 8 },
      diffConfig: { scanLimit: 2000, timeout: 1000 }
    });
    this._merges.set(stage.name, view);
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
  private _selected: string | null = null;
  private _stages = new Map<string, IStageInfo>();
  private _bodies = new Map<string, HTMLElement>();
  private _merges = new Map<string, MergeView>();
}
