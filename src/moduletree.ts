/**
 * The cost by module and layer: the tree the module paths of the report's
 * `costs.modules` make (`Model/Block_0/Dense_0`), each node with the sums of the
 * figures of the paths beneath it, its own included. The same algorithm as
 * `module_tree` in `olympus/module_paths.py` (`report.cost_by_module()`):
 * depth-first, children by flops biggest first (then by path), what no module
 * made (`''`) last at the top.
 *
 *     moduleTree([{ path: 'A/B', flops: 2, ... }, { path: 'A/C', flops: 1, ... }])
 *     // → A (3), A/B (2), A/C (1)
 */
import { ICostModule } from './model';

/** The figures a node adds up. */
export type ModuleFigure = 'flops' | 'transcendentals' | 'bytes';

/** One node of the module tree. */
export interface IModuleNode {
  /** `Model/Block_0` ('' for what no module made). */
  path: string;
  /** The last part of the path (`Block_0`; '' for no module). */
  name: string;
  /** 0 at the top level. */
  depth: number;
  /** Index of its parent in the tree's list, -1 at the top level. */
  parent: number;
  /** How many nodes are directly beneath it. */
  children: number;
  flops: number;
  transcendentals: number;
  bytes: number;
}

/** Code-unit order, as Python orders strings (but for characters past U+FFFF). */
function byText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The nodes of the module tree in depth-first order (see the module's doc). */
export function moduleTree(modules: ReadonlyArray<ICostModule>): IModuleNode[] {
  const sums = new Map<
    string,
    { flops: number; transcendentals: number; bytes: number }
  >();
  const children = new Map<string | null, string[]>();
  for (const m of modules) {
    const parts = m.path ? m.path.split('/') : [];
    const prefixes = parts.length
      ? parts.map((_, k) => parts.slice(0, k + 1).join('/'))
      : [''];
    prefixes.forEach((prefix, k) => {
      let node = sums.get(prefix);
      if (!node) {
        node = { flops: 0, transcendentals: 0, bytes: 0 };
        sums.set(prefix, node);
        const parent = k ? prefixes[k - 1] : null;
        const list = children.get(parent);
        if (list) {
          list.push(prefix);
        } else {
          children.set(parent, [prefix]);
        }
      }
      node.flops += m.flops;
      node.transcendentals += m.transcendentals;
      node.bytes += m.bytes;
    });
  }
  const flops = (p: string) => sums.get(p)!.flops;
  const out: IModuleNode[] = [];
  // Iterative depth-first walk: a deep path cannot overflow the stack.
  const stack: Array<{ path: string; depth: number; parent: number }> = [];
  const push = (kids: string[], depth: number, parent: number) => {
    for (let k = kids.length - 1; k >= 0; k--) {
      stack.push({ path: kids[k], depth, parent });
    }
  };
  const top = [...(children.get(null) ?? [])].sort(
    (a, b) =>
      Number(a === '') - Number(b === '') || flops(b) - flops(a) || byText(a, b)
  );
  push(top, 0, -1);
  while (stack.length) {
    const { path, depth, parent } = stack.pop()!;
    const kids = [...(children.get(path) ?? [])].sort(
      (a, b) => flops(b) - flops(a) || byText(a, b)
    );
    const index = out.length;
    out.push({
      path,
      name: path.slice(path.lastIndexOf('/') + 1),
      depth,
      parent,
      children: kids.length,
      ...sums.get(path)!
    });
    push(kids, depth + 1, index);
  }
  return out;
}
