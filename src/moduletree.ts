/**
 * The cost by module and layer: the tree the module paths of the report's
 * `costs.modules` make (`Model/Block_0/Dense_0`), each node with the sums of the
 * figures of the paths beneath it, its own included. The same algorithms as
 * `olympus/module_paths.py` (`module_path`, `module_tree`) and `module_rows` in
 * `olympus_jupyter/report/costs_view.py` (`report.cost_by_module()`): depth-first,
 * children by flops biggest first (then by path), what no module made (`''`) last
 * at the top; the bytes live at the peak and the collectives of a module found
 * through the compiled program's ops (their labels and name stacks).
 *
 *     moduleTree(new Map([['A/B', { ...none, flops: 2 }], ['A/C', { ...none, flops: 1 }]]))
 *     // → A (3), A/B (2), A/C (1)
 *     modulePath('jit(step)/transpose(jvp(Model))/Block_0/Dense_0/dot_general')
 *     // → 'Model/Block_0/Dense_0'
 */
import { ICosts, StageOps } from './model';

/** The figures of a module path (its own), or of a node (its subtree's). */
export interface IModuleFigures {
  flops: number;
  transcendentals: number;
  bytes: number;
  /** Bytes live at the peak that its instructions made. */
  peak: number;
  /** How many collectives it runs. */
  collectives: number;
  /**
   * A target's report: its time (`costs.time`), in the figure's unit: the TPU
   * compiler's estimated cycles, or a roofline's seconds; 0 without.
   */
  time: number;
  /** Its modules' loop notes (`× 8 iterations`; '' for a module outside loops). */
  loops: string[];
}

/** One node of the module tree. */
export interface IModuleNode extends IModuleFigures {
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
  /** How its instructions inside loops are counted (`loopNote`); '' outside loops. */
  iterations: string;
}

/** Figures all 0. */
export function noFigures(): IModuleFigures {
  return {
    flops: 0,
    transcendentals: 0,
    bytes: 0,
    peak: 0,
    collectives: 0,
    time: 0,
    loops: []
  };
}

/**
 * How a node counts loops, from its modules' notes ('' for one outside loops): each
 * distinct part once, `once` first where some are outside loops and others in
 * one; '' where none is in a loop (`loop_note` in costs_view.py).
 *
 *     loopNote(['× 8 iterations', '']) // → 'once + × 8 iterations'
 */
export function loopNote(notes: readonly string[]): string {
  const parts = new Set<string>();
  for (const note of notes) {
    for (const part of note ? note.split(' + ') : ['once']) {
      parts.add(part);
    }
  }
  if (!parts.size || (parts.size === 1 && parts.has('once'))) {
    return '';
  }
  const ordered = [...parts];
  return [
    ...ordered.filter(p => p === 'once'),
    ...ordered.filter(p => p !== 'once')
  ].join(' + ');
}

// -- module paths from name stacks (olympus/module_paths.py) ----------------------

/** Scopes JAX's transformations and control flow push: not modules. */
const TRANSFORMS = new Set([
  'jit',
  'pjit',
  'jvp',
  'vjp',
  'transpose',
  'vmap',
  'pmap',
  'xmap',
  'remat',
  'checkpoint',
  'rematted_computation',
  'custom_jvp_call',
  'custom_vjp_call',
  'custom_vjp_call_jaxpr',
  'shard_map',
  'while',
  'body',
  'cond',
  'scan',
  'branch',
  'closed_call',
  'core_call',
  'remat2',
  'checkpoint_name',
  'named_call'
]);
const WRAPPED = /^([\p{L}\p{N}_.-]+)\((.*)\)$/u;
const BRANCH = /^branch_\d+(_fun)?$/;

/** The parts of a name stack split on the slashes outside parentheses. */
export function splitScopes(nameStack: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let k = 0; k < nameStack.length; k++) {
    const ch = nameStack[k];
    if (ch === '(') {
      depth++;
    } else if (ch === ')') {
      depth = Math.max(depth - 1, 0);
    } else if (ch === '/' && depth === 0) {
      parts.push(nameStack.slice(start, k));
      start = k + 1;
    }
  }
  parts.push(nameStack.slice(start));
  return parts.filter(p => p);
}

/** The module scopes a part of a name stack names (`jvp(M)` names `M`). */
function scopesOf(part: string): string[] {
  const m = WRAPPED.exec(part);
  if (m) {
    if (m[1] === 'jit' || m[1] === 'pjit') {
      return []; // a jitted function: a call, not a module
    }
    return splitScopes(m[2]).flatMap(scopesOf);
  }
  if (TRANSFORMS.has(part) || BRANCH.test(part) || part.includes('=')) {
    return [];
  }
  return [part];
}

/**
 * The module path of an op's name stack: its scopes without the transformations
 * around them, '' for none. `primitive`: the last part is the op's own name (as in
 * HLO metadata's `op_name`), left out.
 */
export function modulePath(nameStack: string, primitive = true): string {
  // XLA joins the names of instructions it merged with ';': the first is taken.
  let parts = splitScopes(nameStack.split(';')[0]);
  if (primitive && parts.length) {
    parts = parts.slice(0, -1);
  }
  if (
    parts.length &&
    WRAPPED.test(parts[0]) &&
    (parts[0].startsWith('jit(') || parts[0].startsWith('pjit('))
  ) {
    parts = parts.slice(1); // the staged function itself
  }
  // A transformation's scope names the module it wraps, whose own scope follows
  // (`transpose(jvp(Decoder))/Decoder/...`): one module, named once.
  const scopes: string[] = [];
  for (const s of parts.flatMap(scopesOf)) {
    if (!scopes.length || scopes[scopes.length - 1] !== s) {
      scopes.push(s);
    }
  }
  return scopes.join('/');
}

// -- the leaves and the tree --------------------------------------------------------

/**
 * Each module path's own figures: `costs.modules`' flops, transcendentals and
 * bytes; with the compiled program's ops (`compiled`), the bytes of the
 * temporaries and outputs live at the peak and the collectives, each charged to
 * the module path of the instruction that made it (by its label).
 */
export function moduleLeaves(
  costs: ICosts,
  compiled: StageOps | null
): Map<string, IModuleFigures> {
  const leaves = new Map<string, IModuleFigures>();
  const leaf = (path: string) => {
    let l = leaves.get(path);
    if (!l) {
      l = noFigures();
      leaves.set(path, l);
    }
    return l;
  };
  for (const m of costs.modules) {
    const l = leaf(m.path);
    l.flops += m.flops;
    l.transcendentals += m.transcendentals;
    l.bytes += m.bytes;
    l.time += (costs.time?.figure === 'cycles' ? m.cycles : m.seconds) ?? 0;
    l.loops.push(m.iterations);
  }
  if (!compiled) {
    return leaves;
  }
  const paths = new Map<string, string>();
  for (let i = 0; i < compiled.count; i++) {
    const label = compiled.str('label', i);
    if (label) {
      paths.set(label, modulePath(compiled.str('name_stack', i) ?? ''));
    }
  }
  for (const b of costs.buffers) {
    if (b.kind === 'temporary' || b.kind === 'output') {
      const path = paths.get(b.label);
      if (path !== undefined) {
        leaf(path).peak += b.counted ?? b.size;
      }
    }
  }
  for (const c of costs.collectives) {
    leaf(paths.get(c.label) ?? modulePath(c.op_name)).collectives += 1;
  }
  return leaves;
}

/** Code-unit order, as Python orders strings (but for characters past U+FFFF). */
function byText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The nodes of the module tree of `leaves` in depth-first order (see the module's doc). */
export function moduleTree(
  leaves: ReadonlyMap<string, IModuleFigures>
): IModuleNode[] {
  const sums = new Map<string, IModuleFigures>();
  const children = new Map<string | null, string[]>();
  for (const [path, figures] of leaves) {
    const parts = path ? path.split('/') : [];
    const prefixes = parts.length
      ? parts.map((_, k) => parts.slice(0, k + 1).join('/'))
      : [''];
    prefixes.forEach((prefix, k) => {
      let node = sums.get(prefix);
      if (!node) {
        node = noFigures();
        sums.set(prefix, node);
        const parent = k ? prefixes[k - 1] : null;
        const list = children.get(parent);
        if (list) {
          list.push(prefix);
        } else {
          children.set(parent, [prefix]);
        }
      }
      node.flops += figures.flops;
      node.transcendentals += figures.transcendentals;
      node.bytes += figures.bytes;
      node.peak += figures.peak;
      node.collectives += figures.collectives;
      node.time += figures.time;
      node.loops.push(...figures.loops);
    });
  }
  const flops = (p: string) => sums.get(p)!.flops;
  const out: IModuleNode[] = [];
  // Depth-first with a stack of its own: a deep path cannot overflow the call stack.
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
      ...sums.get(path)!,
      path,
      name: path.slice(path.lastIndexOf('/') + 1),
      depth,
      parent,
      children: kids.length,
      iterations: loopNote(sums.get(path)!.loops)
    });
    push(kids, depth + 1, index);
  }
  return out;
}
