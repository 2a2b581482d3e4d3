/**
 * One line under the toolbar that says what the selected source line became:
 * `line 3 · z = jnp.sin(x) → olympuspr: sin · StableHLO: stablehlo.sine · ...`,
 * with a button per stage to go there (the keyboard way across stages), and a
 * hint when nothing is selected. Announced politely to screen readers.
 */
import { h } from './dom';
import { ISelection } from './hub';
import { LinkIndex, parseKey } from './links';
import { IStageInfo } from './model';
import { opSummary } from './sourceview';

const HINT =
  'Hover or click a source line (or press Enter on it) to see its ops in every stage; ' +
  'click an op line to go back to its source line; Escape clears.';

export class LinkStatus {
  readonly node: HTMLElement;

  constructor(
    private readonly links: LinkIndex | null,
    /** The report's linked stages, in order. */
    private readonly linked: IStageInfo[],
    private readonly shown: () => string[],
    private readonly onGo: (stage: string) => void,
    private readonly onClear: () => void
  ) {
    this.node = h('div', {
      class: 'olympus-status',
      role: 'status',
      'aria-live': 'polite'
    });
    this.update(null);
  }

  update(sel: ISelection | null): void {
    const node = this.node;
    node.textContent = '';
    // Announce what was picked, not every line the pointer passes over.
    node.setAttribute('aria-live', sel?.transient ? 'off' : 'polite');
    const links = this.links;
    if (!links) {
      return;
    }
    const key = sel?.source ?? null;
    const ops = key === null ? undefined : links.opsOf(key);
    if (key === null || !ops) {
      node.appendChild(h('span', { class: 'olympus-hint' }, HINT));
      return;
    }
    const { file, line } = parseKey(key);
    const color = links.colorOf(key);
    const path = links.prov.files[file]?.path ?? '?';
    const text = links.sourceText(key);
    node.appendChild(
      h(
        'span',
        { class: `olympus-status-line olympus-src-${color}` },
        `${path.split(/[\\/]/).pop()}:${line}`
      )
    );
    if (text !== null) {
      node.appendChild(
        h('code', { class: 'olympus-status-code' }, text.trim())
      );
    }
    node.appendChild(
      h('span', { class: 'olympus-status-arrow', 'aria-hidden': 'true' }, '→')
    );
    const shown = new Set(this.shown());
    for (const stage of this.linked) {
      const idx = ops[stage.name];
      const st = links.prov.stages[stage.name];
      if (!idx || !idx.length || !st) {
        continue;
      }
      const label = `${stage.label}: ${opSummary(idx.map(i => st.ops.name(i)))}`;
      if (shown.has(stage.name)) {
        const go = h(
          'button',
          {
            type: 'button',
            class: 'olympus-link',
            'data-olympus-goto': stage.name
          },
          label
        );
        go.addEventListener('click', () => this.onGo(stage.name));
        node.appendChild(go);
      } else {
        node.appendChild(h('span', { class: 'olympus-link' }, label));
      }
    }
    if (!sel?.transient) {
      const clear = h(
        'button',
        {
          type: 'button',
          class: 'olympus-button olympus-clear',
          'data-olympus-action': 'clear'
        },
        'Clear'
      );
      clear.title = 'Clear the highlight (Escape)';
      clear.addEventListener('click', () => this.onClear());
      node.appendChild(clear);
    }
  }
}
