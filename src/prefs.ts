/**
 * The user's view choices, remembered across notebooks in the browser's
 * localStorage: the layout (`olympus:layout`) and the stages hidden
 * (`olympus:hidden`). Storage that is unavailable (private windows, sandboxed
 * frames) just means nothing is remembered.
 */
export type Layout = 'tabs' | 'side-by-side';

export const LAYOUT_KEY = 'olympus:layout';
export const HIDDEN_KEY = 'olympus:hidden';

function read(key: string): string | null {
  try {
    return window.localStorage.getItem(key);
  } catch {
    return null;
  }
}

function write(key: string, value: string): void {
  try {
    window.localStorage.setItem(key, value);
  } catch {
    // not remembered
  }
}

export function loadLayout(): Layout {
  return read(LAYOUT_KEY) === 'side-by-side' ? 'side-by-side' : 'tabs';
}

export function saveLayout(layout: Layout): void {
  write(LAYOUT_KEY, layout);
}

/** The names of the stages hidden (any name: a report shows those it has). */
export function loadHidden(): Set<string> {
  try {
    const value = JSON.parse(read(HIDDEN_KEY) ?? '[]');
    return new Set(
      (Array.isArray(value) ? value : []).filter(
        (s: unknown): s is string => typeof s === 'string'
      )
    );
  } catch {
    return new Set();
  }
}

export function saveHidden(hidden: Set<string>): void {
  write(HIDDEN_KEY, JSON.stringify([...hidden]));
}
