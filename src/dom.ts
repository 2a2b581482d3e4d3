/**
 * DOM building with text only: every string from a report goes in through
 * `textContent` or an attribute value, never through HTML parsing.
 *
 *     h('p', { class: 'olympus-note' }, 'Not available: ', reason)
 */

export type Child = Node | string | null | undefined | false;

export interface IAttrs {
  [name: string]: string | number | boolean | null | undefined;
}

function fill(el: Element, attrs: IAttrs | null, children: Child[]): void {
  if (attrs) {
    for (const [name, value] of Object.entries(attrs)) {
      if (value === null || value === undefined || value === false) {
        continue;
      }
      el.setAttribute(name, value === true ? '' : String(value));
    }
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) {
      continue;
    }
    el.appendChild(
      typeof child === 'string' ? el.ownerDocument.createTextNode(child) : child
    );
  }
}

/** An HTML element with attributes and text or element children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: IAttrs | null = null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  fill(el, attrs, children);
  return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** An SVG element (created in the SVG namespace). */
export function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: IAttrs | null = null,
  ...children: Child[]
): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG_NS, tag) as SVGElementTagNameMap[K];
  fill(el, attrs, children);
  return el;
}
