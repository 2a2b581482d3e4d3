/**
 * The cross-stage index of a report: which source line made which ops, the colour
 * of each source line, and for each stage text which line belongs to which op.
 *
 * Pure data, computed lazily: nothing here is built before a view asks for it, and
 * per-line tables are typed arrays filled in one pass over the ops (never over the
 * DOM), so a 100k-line stage costs a few milliseconds, once.
 *
 *     const links = new LinkIndex(report.provenance);
 *     links.colorOf(sourceKey(0, 3));           // palette slot of f.py line 3
 *     links.stage('compiled')?.linkedLines(key); // the compiled lines it became
 */
import {
  IProvenance,
  IProvenanceStage,
  baseName,
  decodeIndices
} from './model';
import { PALETTE_SIZE } from './viewtables';

/** Number of source colours (CSS classes `olympus-src-0` ...): from `viewtables.ts`. */
export { PALETTE_SIZE };

/** A source line, `"<file index>:<line>"`. */
export type SourceKey = string;

export function sourceKey(file: number, line: number): SourceKey {
  return `${file}:${line}`;
}

export function parseKey(key: SourceKey): { file: number; line: number } {
  const [file, line] = key.split(':').map(Number);
  return { file, line };
}

/** The lines of one stage text that a source line lights up. */
export interface ILinkedLines {
  /** Lines of the ops the source line made (sorted). */
  ops: number[];
  /** First lines of the fusions holding those ops (compiled HLO; sorted). */
  fusions: number[];
}

/**
 * The source lines that call the staged function (a notebook cell running the
 * magic, a script): ops made there belong to the function as a whole. A report
 * carries them (`callers`, found by `caller_lines` in
 * olympus_jupyter/report/html.py); for a bundle written before it did,
 * {@link callersOfOldBundles} finds them as the viewer of that time did.
 */
export function callerLines(prov: IProvenance): Set<SourceKey> {
  return prov.callers
    ? new Set(prov.callers.map(([file, line]) => sourceKey(file, line)))
    : callersOfOldBundles(prov);
}

/**
 * The caller lines of a bundle that does not carry them (written before reports
 * did), by the rule of that time: frames outside the function's own lines that
 * stand outer to one of its frames in some op's call stack. Frozen: it reads old
 * bundles as they were drawn; the rule lives in Python and comes in `callers`.
 */
export function callersOfOldBundles(prov: IProvenance): Set<SourceKey> {
  const callers = new Set<SourceKey>();
  const fn = prov.function;
  if (fn.file === null || fn.first_line === null) {
    return callers;
  }
  const first = fn.first_line;
  const last = fn.last_line ?? first;
  const inside = (file: number, line: number) =>
    file === fn.file && first <= line && line <= last;
  for (const loc of prov.locations) {
    let innermostInside = -1;
    for (let k = loc.length - 1; k >= 0; k--) {
      const fr = prov.frames[loc[k]];
      if (fr && inside(fr[0], fr[1])) {
        innermostInside = k;
        break;
      }
    }
    if (innermostInside < 0) {
      continue;
    }
    for (let k = innermostInside + 1; k < loc.length; k++) {
      const fr = prov.frames[loc[k]];
      if (fr && !inside(fr[0], fr[1])) {
        callers.add(sourceKey(fr[0], fr[1]));
      }
    }
  }
  return callers;
}

/** Everything a view needs to know about the report's source lines and ops. */
export class LinkIndex {
  constructor(readonly prov: IProvenance) {}

  /** The source lines that call the function: they get no colour and light up nothing. */
  get callers(): Set<SourceKey> {
    if (!this._callers) {
      this._callers = callerLines(this.prov);
    }
    return this._callers;
  }

  /** The palette slot of a source line that made ops, in source order. */
  colorOf(key: SourceKey): number | undefined {
    this._ensureLines();
    return this._colors!.get(key);
  }

  /** `{stage: [op index]}` made by a source line (none for caller lines). */
  opsOf(key: SourceKey): { [stage: string]: number[] } | undefined {
    this._ensureLines();
    let ops = this._opsByKey.get(key);
    if (ops === undefined) {
      const raw = this._byKey!.get(key);
      if (raw === undefined) {
        return undefined;
      }
      ops = {};
      for (const [stage, text] of Object.entries(raw)) {
        const st = this.prov.stages[stage];
        ops[stage] = st ? decodeIndices(text, st.ops.count) : [];
      }
      this._opsByKey.set(key, ops);
    }
    return ops;
  }

  /** The source lines that made ops (callers left out), in source order. */
  get sourceLines(): SourceKey[] {
    this._ensureLines();
    return [...this._colors!.keys()];
  }

  /** The index of one provenance stage (a linked report stage's name), or null when the report does not hold it. */
  stage(stage: string): StageIndex | null {
    let s = this._stages.get(stage);
    if (s === undefined) {
      const st = this.prov.stages[stage];
      s = st ? new StageIndex(this, stage, st) : null;
      this._stages.set(stage, s);
    }
    return s;
  }

  /** `model.py:3 (f)` for a frame index. */
  describeFrame(frame: number): string {
    const fr = this.prov.frames[frame];
    if (!fr) {
      return '';
    }
    const file = this.prov.files[fr[0]];
    const where = `${file ? baseName(file.path) : '?'}:${fr[1]}`;
    return fr[5] ? `${where} (${fr[5]})` : where;
  }

  /** The text of a source line, when the report holds it. */
  sourceText(key: SourceKey): string | null {
    const { file, line } = parseKey(key);
    const f = this.prov.files[file];
    if (!f) {
      return null;
    }
    for (const [first, text] of f.chunks) {
      if (line < first) {
        break;
      }
      const lines = text.split('\n');
      if (line - first < lines.length) {
        return lines[line - first];
      }
    }
    return null;
  }

  private _ensureLines(): void {
    if (this._colors) {
      return;
    }
    const callers = this.callers;
    this._colors = new Map();
    this._byKey = new Map();
    let k = 0;
    for (const entry of this.prov.lines) {
      const key = sourceKey(entry.file, entry.line);
      if (callers.has(key)) {
        continue;
      }
      this._colors.set(key, k++ % PALETTE_SIZE);
      this._byKey.set(key, entry.ops);
    }
  }

  private _callers: Set<SourceKey> | null = null;
  private _colors: Map<SourceKey, number> | null = null;
  private _byKey: Map<SourceKey, { [stage: string]: string }> | null = null;
  private _opsByKey = new Map<SourceKey, { [stage: string]: number[] }>();
  private _stages = new Map<string, StageIndex | null>();
}

/** One stage text: which op owns each line, its colour, its folds, what a source line lights up. */
function lineCount(text: string): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) {
    n++;
  }
  return n;
}

export class StageIndex {
  constructor(
    readonly links: LinkIndex,
    readonly stage: string,
    readonly data: IProvenanceStage
  ) {}

  get opCount(): number {
    return this.data.ops.count;
  }

  /** The source line op `i` is charged to (`opFrame`), or null. */
  opSource(i: number): SourceKey | null {
    const frame = this.opFrame(i);
    if (frame === null) {
      return null;
    }
    const fr = this.links.prov.frames[frame];
    return fr ? sourceKey(fr[0], fr[1]) : null;
  }

  /** The source lines op `i` is tied to: its location's frames, innermost first. */
  opSources(i: number): SourceKey[] {
    const loc = this.data.ops.int('location', i);
    const frames = loc === null ? undefined : this.links.prov.locations[loc];
    const out: SourceKey[] = [];
    for (const f of frames ?? []) {
      const fr = this.links.prov.frames[f];
      if (fr) {
        out.push(sourceKey(fr[0], fr[1]));
      }
    }
    return out;
  }

  /** The frame index op `i` is charged to, or null: its innermost frame of the
   *  user's own code (a file not marked `library`), else its innermost frame. The
   *  rule of `charged_frame` in olympus/provenance/sources.py. */
  opFrame(i: number): number | null {
    const loc = this.data.ops.int('location', i);
    if (loc === null) {
      return null;
    }
    const frames = this.links.prov.locations[loc];
    if (!frames || !frames.length) {
      return null;
    }
    for (const f of frames) {
      const fr = this.links.prov.frames[f];
      if (fr && !this.links.prov.files[fr[0]]?.library) {
        return f;
      }
    }
    return frames[0];
  }

  /** The op a text line belongs to (1-based line), or -1. */
  lineOp(line: number): number {
    const owners = this._ensureOwners();
    return line > 0 && line < owners.length ? owners[line] : -1;
  }

  /** The palette slot of a text line, or -1 (no op, or an op of the caller). */
  lineColor(line: number): number {
    const op = this.lineOp(line);
    if (op < 0) {
      return -1;
    }
    const key = this.opSource(op);
    const color = key === null ? undefined : this.links.colorOf(key);
    return color === undefined ? -1 : color;
  }

  /** The lines a source line lights up in this stage. */
  linkedLines(key: SourceKey): ILinkedLines {
    const cached = this._linked.get(key);
    if (cached) {
      return cached;
    }
    const ops = this.links.opsOf(key)?.[this.stage] ?? [];
    const parents = this._ensureParents();
    const lines = new Set<number>();
    const fusions = new Set<number>();
    const spans = this.data.ops.spans();
    const fusionCol = this.data.ops.ints('fusion');
    const n = this.opCount;
    for (const i of ops) {
      if (i < 0 || i >= n) {
        continue;
      }
      if (spans && spans.first[i] > 0) {
        const last = parents[i] ? spans.first[i] : spans.last[i];
        for (let l = spans.first[i]; l <= last; l++) {
          lines.add(l);
        }
      }
      const fusion = fusionCol ? fusionCol[i] : -1;
      if (spans && fusion >= 0 && fusion < n && spans.first[fusion] > 0) {
        fusions.add(spans.first[fusion]);
      }
    }
    const result = {
      ops: [...lines].sort((a, b) => a - b),
      fusions: [...fusions].sort((a, b) => a - b)
    };
    this._linked.set(key, result);
    return result;
  }

  /** The first text line of op `i`, or null when it is not printed. */
  opLine(i: number): number | null {
    const span = this.data.ops.span(i);
    return span ? span[0] : null;
  }

  /**
   * What an op line says beside its code: `model.py:3 (f) · in fusion.2`
   * (the source line, and for compiled HLO the fusion holding it).
   */
  describeOp(i: number): string {
    const parts: string[] = [];
    const frame = this.opFrame(i);
    const key = this.opSource(i);
    if (frame !== null && key !== null) {
      parts.push(
        this.links.callers.has(key)
          ? 'whole function (called from ' +
              this.links.describeFrame(frame) +
              ')'
          : this.links.describeFrame(frame)
      );
    }
    const fusion = this.data.ops.int('fusion', i);
    if (fusion !== null) {
      const label =
        this.data.ops.str('label', fusion) ?? this.data.ops.name(fusion);
      parts.push(`in ${label}`);
    }
    return parts.join(' · ');
  }

  /** Multi-line ops and computations: first line → last line (the widest per line). */
  foldEnds(): Map<number, number> {
    if (!this._folds) {
      const folds = new Map<number, number>();
      const add = (a: number, b: number) => {
        if (b > a && (folds.get(a) ?? 0) < b) {
          folds.set(a, b);
        }
      };
      const spans = this.data.ops.spans();
      if (spans) {
        for (let i = 0; i < spans.first.length; i++) {
          if (spans.first[i] > 0) {
            add(spans.first[i], spans.last[i]);
          }
        }
      }
      for (const c of this.data.computations ?? []) {
        add(c.lines[0], c.lines[1]);
      }
      this._folds = folds;
    }
    return this._folds;
  }

  private _ensureParents(): Uint8Array {
    if (!this._parents) {
      const parents = new Uint8Array(this.opCount);
      const col = this.data.ops.ints('parent');
      if (col) {
        for (let i = 0; i < col.length; i++) {
          const p = col[i];
          if (p >= 0 && p < parents.length) {
            parents[p] = 1;
          }
        }
      }
      this._parents = parents;
    }
    return this._parents;
  }

  /**
   * Which op each text line belongs to. In text order, an op with a known source
   * claims its lines (an op holding others, only its first line); the first claim
   * of a line wins, as in the static HTML report.
   */
  private _ensureOwners(): Int32Array {
    if (!this._owners) {
      const spans = this.data.ops.spans();
      const locs = this.data.ops.ints('location');
      let max = 0;
      if (spans) {
        for (let i = 0; i < spans.last.length; i++) {
          if (spans.first[i] > 0 && spans.last[i] > max) {
            max = spans.last[i];
          }
        }
      }
      // A line number from the data cannot size the table past the text it is of.
      max = Math.min(max, lineCount(this.data.text));
      const owners = new Int32Array(max + 2).fill(-1);
      if (spans && locs) {
        const parents = this._ensureParents();
        for (let i = 0; i < spans.first.length; i++) {
          const first = spans.first[i];
          if (first <= 0 || locs[i] < 0) {
            continue;
          }
          const last = Math.min(parents[i] ? first : spans.last[i], max);
          for (let l = first; l <= last; l++) {
            if (owners[l] < 0) {
              owners[l] = i;
            }
          }
        }
      }
      this._owners = owners;
    }
    return this._owners;
  }

  private _owners: Int32Array | null = null;
  private _parents: Uint8Array | null = null;
  private _folds: Map<number, number> | null = null;
  private _linked = new Map<SourceKey, ILinkedLines>();
}

/** An op of a stage, as the Python side names it: its id and its name. */
export interface IOpRef {
  /** `'<stage>:<index>'`, e.g. `'stablehlo:3'`. */
  id: string;
  /** `dot_general`, `stablehlo.multiply`... */
  name: string;
}

/** The stages whose ops have a journey and a cost share of their own. */
export const OP_STAGES = ['olympuspr', 'stablehlo'];

/**
 * The op of olympuspr or StableHLO the user picked (the op line of a selection's
 * `origin`), or null: none picked, another stage, or a line of no op.
 */
export function pickedOp(
  links: LinkIndex | null,
  origin: { readonly stage: string; readonly line: number } | null
): IOpRef | null {
  if (!links || !origin || !OP_STAGES.includes(origin.stage)) {
    return null;
  }
  const index = links.stage(origin.stage);
  const op = index ? index.lineOp(origin.line) : -1;
  if (!index || op < 0) {
    return null;
  }
  return { id: `${origin.stage}:${op}`, name: index.data.ops.name(op) };
}
