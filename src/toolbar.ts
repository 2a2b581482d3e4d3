/**
 * The report's toolbar: the layout toggle (side by side or tabs, a real button
 * whose `aria-pressed` says "side by side"), a checkbox per stage to show or
 * hide it, and, when the report has costs by line, the heatmap's choice (off, or
 * the figure it colours lines by: `select[data-olympus-action=heat]`).
 */
import { h } from './dom';
import { Layout } from './prefs';

export interface IToolbarOptions {
  stages: { stage: string; label: string }[];
  layout: Layout;
  hidden: Set<string>;
  onLayout(layout: Layout): void;
  onToggle(stage: string, shown: boolean): void;
  /** The heatmap's choices (value, label, and why it cannot be chosen, if so); none: no heatmap. */
  heat?: {
    choices: ReadonlyArray<{
      value: string;
      label: string;
      unavailable?: string;
    }>;
    onHeat(value: string | null): void;
  };
}

export class Toolbar {
  readonly node: HTMLElement;

  constructor(private readonly o: IToolbarOptions) {
    this._layout = o.layout;
    this._button = h(
      'button',
      {
        type: 'button',
        class: 'olympus-button',
        'data-olympus-action': 'layout',
        title:
          'Show the stages side by side (pressed), or one at a time in tabs'
      },
      'Side by side'
    );
    this._button.addEventListener('click', () => {
      this.setLayout(this._layout === 'tabs' ? 'side-by-side' : 'tabs');
      this.o.onLayout(this._layout);
    });
    const toggles = h('div', {
      class: 'olympus-toggles',
      role: 'group',
      'aria-label': 'Stages shown'
    });
    for (const { stage, label } of o.stages) {
      const box = h('input', {
        type: 'checkbox',
        'data-olympus-toggle': stage,
        checked: !o.hidden.has(stage)
      });
      box.addEventListener('change', () => this.o.onToggle(stage, box.checked));
      toggles.appendChild(h('label', { class: 'olympus-toggle' }, box, label));
    }
    this.node = h(
      'div',
      {
        class: 'olympus-toolbar',
        role: 'toolbar',
        'aria-label': 'Report view'
      },
      this._button,
      toggles
    );
    if (o.heat) {
      this.node.appendChild(this._heatChoice(o.heat));
    }
    this.setLayout(this._layout);
  }

  /** The heatmap's `select`: `off`, then one option per figure. */
  private _heatChoice(heat: NonNullable<IToolbarOptions['heat']>): HTMLElement {
    const select = h(
      'select',
      {
        class: 'olympus-heat-select',
        'data-olympus-action': 'heat',
        title:
          'Colour each source line, and each op line of every stage, by its share of a cost ' +
          '(the share is written in the gutter; the figures on hover)'
      },
      h('option', { value: 'off' }, 'off'),
      ...heat.choices.map(c =>
        h(
          'option',
          {
            value: c.value,
            disabled: c.unavailable !== undefined,
            title: c.unavailable ?? null
          },
          c.label
        )
      )
    );
    select.addEventListener('change', () =>
      heat.onHeat(select.value === 'off' ? null : select.value)
    );
    return h('label', { class: 'olympus-heat-choice' }, 'Heatmap ', select);
  }

  setLayout(layout: Layout): void {
    this._layout = layout;
    const side = layout === 'side-by-side';
    this._button.setAttribute('aria-pressed', side ? 'true' : 'false');
  }

  private _layout: Layout;
  private _button: HTMLButtonElement;
}
