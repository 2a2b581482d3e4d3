/**
 * A row of tabs (WAI-ARIA tabs pattern): `role=tablist` of `role=tab` buttons that
 * control `role=tabpanel`s; the arrow keys, Home and End move between tabs and
 * select them; only the selected tab is in the Tab order.
 */
import { h } from './dom';

export interface ITabItem {
  /** The value of `data-stage`. */
  stage: string;
  label: string;
  /** Id of the panel the tab controls. */
  controls: string;
  /** Id for the tab itself. */
  id: string;
}

export interface ITabListOptions {
  label: string;
  items: ITabItem[];
  /** A tab was selected (by click or key). */
  onSelect(stage: string): void;
}

export class TabList {
  readonly node: HTMLElement;

  constructor(private readonly o: ITabListOptions) {
    this.node = h('div', {
      class: 'olympus-tabs',
      role: 'tablist',
      'aria-label': o.label
    });
    for (const item of o.items) {
      const tab = h(
        'button',
        {
          type: 'button',
          class: 'olympus-tab',
          role: 'tab',
          id: item.id,
          'data-stage': item.stage,
          'aria-controls': item.controls,
          'aria-selected': 'false',
          tabindex: -1
        },
        item.label
      );
      tab.addEventListener('click', () => this._choose(item.stage, false));
      this._tabs.set(item.stage, tab);
      this.node.appendChild(tab);
    }
    this.node.addEventListener('keydown', e => this._onKey(e));
  }

  get selected(): string | null {
    return this._selected;
  }

  /** The tabs that can be chosen (not hidden), in order. */
  get visible(): string[] {
    return this.o.items
      .map(i => i.stage)
      .filter(s => !this._tabs.get(s)!.hidden);
  }

  /** Marks a tab selected (does not call `onSelect`). */
  select(stage: string): void {
    this._selected = stage;
    for (const [s, tab] of this._tabs) {
      const on = s === stage;
      tab.setAttribute('aria-selected', on ? 'true' : 'false');
      tab.tabIndex = on ? 0 : -1;
    }
  }

  setHidden(stage: string, hidden: boolean): void {
    const tab = this._tabs.get(stage);
    if (tab) {
      tab.hidden = hidden;
    }
  }

  /** Puts a mark on a tab (e.g. "it holds lit ops"), or removes it. */
  setMarked(stage: string, marked: boolean): void {
    this._tabs.get(stage)?.classList.toggle('olympus-tab-marked', marked);
  }

  focus(): void {
    if (this._selected) {
      this._tabs.get(this._selected)?.focus();
    }
  }

  private _choose(stage: string, focus: boolean): void {
    this.select(stage);
    if (focus) {
      this._tabs.get(stage)?.focus();
    }
    this.o.onSelect(stage);
  }

  private _onKey(e: KeyboardEvent): void {
    const visible = this.visible;
    if (!visible.length) {
      return;
    }
    const at = Math.max(0, visible.indexOf(this._selected ?? visible[0]));
    let to: number;
    switch (e.key) {
      case 'ArrowRight':
      case 'ArrowDown':
        to = (at + 1) % visible.length;
        break;
      case 'ArrowLeft':
      case 'ArrowUp':
        to = (at - 1 + visible.length) % visible.length;
        break;
      case 'Home':
        to = 0;
        break;
      case 'End':
        to = visible.length - 1;
        break;
      default:
        return;
    }
    e.preventDefault();
    e.stopPropagation();
    this._choose(visible[to], true);
  }

  private _tabs = new Map<string, HTMLButtonElement>();
  private _selected: string | null = null;
}
