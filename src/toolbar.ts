/**
 * The report's toolbar: the layout toggle (side by side or tabs, a real button
 * whose `aria-pressed` says "side by side") and a checkbox per stage to show or
 * hide it.
 */
import { h } from './dom';
import { Layout } from './prefs';

export interface IToolbarOptions {
  stages: { stage: string; label: string }[];
  layout: Layout;
  hidden: Set<string>;
  onLayout(layout: Layout): void;
  onToggle(stage: string, shown: boolean): void;
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
    this.setLayout(this._layout);
  }

  setLayout(layout: Layout): void {
    this._layout = layout;
    const side = layout === 'side-by-side';
    this._button.setAttribute('aria-pressed', side ? 'true' : 'false');
  }

  private _layout: Layout;
  private _button: HTMLButtonElement;
}
