/**
 * The event hub of one report view: views never call each other, they tell the
 * hub what the user pointed at and follow what the hub says is selected (the way
 * Compiler Explorer's panes talk through its event hub).
 *
 * A selection is a source line (and, when the user picked an op line, that line
 * too). Hovering shows a selection for as long as the pointer stays; clicking or
 * pressing Enter pins one; Escape clears it.
 */
import { Signal, ISignal } from '@lumino/signaling';
import { SourceKey } from './links';

export interface ISelection {
  /** The source line whose ops light up, or null. */
  readonly source: SourceKey | null;
  /** The op line the user picked, if any (it is marked active in its stage). */
  readonly origin: {
    readonly stage: string;
    readonly line: number;
  } | null;
  /** Whether views should scroll to what lights up. */
  readonly reveal: boolean;
  /** Whether this is a passing hover (not pinned). */
  readonly transient: boolean;
}

export const NO_SELECTION: ISelection = {
  source: null,
  origin: null,
  reveal: false,
  transient: false
};

export class LinkHub {
  /** The selection the views should show changed. */
  get changed(): ISignal<this, ISelection> {
    return this._changed;
  }

  /** A view asks for a stage to be shown (tabs layout switches to it). */
  get showRequested(): ISignal<this, string> {
    return this._showRequested;
  }

  /** What the views show now: the hovered line if any, else the pinned selection. */
  get current(): ISelection {
    return this._hover ?? this._pinned;
  }

  /** The pointer is over a source line (or left it: `null`). */
  hover(source: SourceKey | null): void {
    const next: ISelection | null =
      source === null
        ? null
        : { source, origin: null, reveal: true, transient: true };
    if ((next?.source ?? null) === (this._hover?.source ?? null)) {
      return;
    }
    this._hover = next;
    this._changed.emit(next ?? { ...this._pinned, reveal: false });
  }

  /** The user picked a source line or an op line. */
  select(source: SourceKey | null, origin: ISelection['origin'] = null): void {
    this._hover = null;
    this._pinned = { source, origin, reveal: true, transient: false };
    this._changed.emit(this._pinned);
  }

  /** Escape: nothing selected. */
  clear(): void {
    this._hover = null;
    this._pinned = NO_SELECTION;
    this._changed.emit(NO_SELECTION);
  }

  /** Asks the layout to show a stage. */
  requestShow(stage: string): void {
    this._showRequested.emit(stage);
  }

  private _hover: ISelection | null = null;
  private _pinned: ISelection = NO_SELECTION;
  private _changed = new Signal<this, ISelection>(this);
  private _showRequested = new Signal<this, string>(this);
}
