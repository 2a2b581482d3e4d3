/**
 * The JSON contract this extension renders: `application/vnd.olympus.stages+json`
 * (schema `olympus.stages`, version 3, see docs/report.md) with the provenance model
 * embedded (schema `olympus.provenance`, version 2, see docs/provenance.md), and
 * `application/vnd.olympus.diff+json` (two reports of one function). Version 1
 * documents (saved notebooks of earlier releases) are read into the version 2 shape.
 *
 * The stages, their order, titles, labels, kinds, views, languages and units come
 * from the report's `stage_table`: a stage the registry gains needs no change here,
 * and a new kind none either when it names a generic view (`kinds.ts`).
 *
 * Every report is first checked against the published schema (`schema.ts`); the
 * readers here check what the schema cannot express.
 *
 * Only types and small readers live here: no DOM, no CodeMirror.
 */
import { schemaProblem } from './schema';
import { formatF } from './pyformat';
import { SIZE_UNITS } from './viewtables';

export const STAGES_MIME = 'application/vnd.olympus.stages+json';
export const DIFF_MIME = 'application/vnd.olympus.diff+json';

/** The report versions this viewer reads (1 and 2 are read into the shape of 3). */
export const REPORT_VERSION = 3;

/**
 * Stages renamed since: former name → name (version 2 called the cost analysis
 * `cost`, too close to `costs`, the cost by line).
 */
const FORMER_NAMES: Readonly<Record<string, string>> = {
  cost: 'cost_analysis'
};

/** A stage's name now (a former name, from a report of an earlier version, renamed). */
function renamed(name: string): string {
  return Object.prototype.hasOwnProperty.call(FORMER_NAMES, name)
    ? FORMER_NAMES[name]
    : name;
}

/** The compilation steps, in the order they run (a stage's `step` is one of them). */
export const STEPS: ReadonlyArray<string> = ['trace', 'lower', 'compile'];

/**
 * One row of the report's stage table (from `olympus.stage_registry`): what the
 * stage is called and how it is shown.
 */
export interface IStageInfo {
  /** The stage's name; for a linked stage, also its provenance stage's name. */
  name: string;
  /** The panel's heading. */
  title: string;
  /** Short, for tabs and toggles. */
  label: string;
  /**
   * What the stage is: `source` (the user's code), `program` (a text with ops),
   * `analysis` (figures), `passes` (XLA's pass pipeline, the report's `passes`) or
   * `costs` (where the cost goes, by line: the report's `costs`).
   * A kind registered later is kept: its `view` says which view shows it.
   */
  kind: string;
  /**
   * Which view shows it (see `kinds.ts`): one of the kinds above, or a generic
   * view (`text`, `table`) whose schema its data (`data[name]`) follows. Bundles
   * before version 3 carry none: the kind is the view. A view this viewer does
   * not know: its panel says it cannot show it.
   */
  view: string;
  /** The compilation step that makes it (`trace`, `lower`, `compile`), or null. */
  step: string | null;
  /** The highlighter (`python`, `olympuspr`, `stablehlo`, `hlo`), or null. */
  language: string | null;
  /** What its ops (or lines) are called: `equations`, `instructions`, ... */
  unit: string;
  /** Whether its ops are in the provenance model, tied to source lines. */
  linked: boolean;
}

/**
 * The stage table of version 1 reports, which carried none: version 1 only. Newer
 * reports carry their own table; nothing else in this extension names stages.
 */
const V1_STAGE_TABLE: ReadonlyArray<IStageInfo> = [
  {
    name: 'source',
    title: 'Source',
    label: 'source',
    kind: 'source',
    view: 'source',
    step: null,
    language: 'python',
    unit: 'lines',
    linked: false
  },
  {
    name: 'olympuspr',
    title: 'olympuspr · traced program',
    label: 'olympuspr',
    kind: 'program',
    view: 'program',
    step: 'trace',
    language: 'olympuspr',
    unit: 'equations',
    linked: true
  },
  {
    name: 'stablehlo',
    title: 'StableHLO · lowered program',
    label: 'StableHLO',
    kind: 'program',
    view: 'program',
    step: 'lower',
    language: 'stablehlo',
    unit: 'ops',
    linked: true
  },
  {
    name: 'hlo',
    title: 'HLO · compiler input',
    label: 'HLO',
    kind: 'program',
    view: 'program',
    step: 'lower',
    language: 'hlo',
    unit: 'instructions',
    linked: false
  },
  {
    name: 'compiled',
    title: 'Compiled HLO · after optimization',
    label: 'compiled',
    kind: 'program',
    view: 'program',
    step: 'compile',
    language: 'hlo',
    unit: 'instructions',
    linked: true
  },
  {
    name: 'cost',
    title: 'Cost analysis',
    label: 'cost',
    kind: 'analysis',
    view: 'analysis',
    step: 'compile',
    language: null,
    unit: 'ops',
    linked: false
  },
  {
    name: 'memory',
    title: 'Memory analysis',
    label: 'memory',
    kind: 'analysis',
    view: 'analysis',
    step: 'compile',
    language: null,
    unit: 'ops',
    linked: false
  }
];

/** Provenance version 1 named some stages otherwise: version 1 name → version 2 name. */
const V1_PROVENANCE_NAMES: Readonly<Record<string, string>> = {
  hlo: 'compiled'
};

export type Span = [number, number];

/**
 * A dictionary-encoded column as JSON holds it: `codes` is one string of
 * comma-separated indices into `values`, one item per op; an empty item is the default.
 */
export interface IDictColumn {
  values: unknown[];
  codes: string;
}

/**
 * The ops of a stage as JSON holds them (docs/provenance.md): string columns
 * dictionary-encoded, integer columns and line spans as one comma-separated string
 * (`""` items are null; a span is `"a"` or `"a:b"`). Absent columns hold their
 * default for every op.
 */
export interface IOpColumnsData {
  count: number;
  name: IDictColumn;
  types?: IDictColumn;
  lines?: string;
  location?: string;
  name_stack?: IDictColumn;
  parent?: string;
  sharding?: IDictColumn;
  label?: IDictColumn;
  computation?: string;
  fusion?: string;
  collective?: IDictColumn;
}

export type IntColumn = 'location' | 'parent' | 'computation' | 'fusion';
export type StringColumn =
  'name' | 'name_stack' | 'sharding' | 'label' | 'collective';

/** Line spans, one entry per op: `first[i]` is 0 when op `i` is not printed. */
export interface ISpans {
  first: Int32Array;
  last: Int32Array;
}

function splitColumn(text: string, count: number, key: string): string[] {
  const items = count ? text.split(',') : [];
  if (items.length !== count) {
    throw new ContractError(
      `The provenance column ${JSON.stringify(key)} has ${items.length} entries for ${count} ops.`
    );
  }
  return items;
}

/**
 * The ops of a stage, decoded column by column on first use (each column string is
 * split once); integer columns are `Int32Array`s with -1 for null.
 */
export class StageOps {
  readonly count: number;

  constructor(readonly data: IOpColumnsData) {
    this.count = Number(data.count) || 0;
  }

  /** Column `key` (-1 for null), or null when the column is absent (all null). */
  ints(key: IntColumn): Int32Array | null {
    let col = this._ints.get(key);
    if (col === undefined) {
      const text = this.data[key];
      col = null;
      if (typeof text === 'string') {
        const items = splitColumn(text, this.count, key);
        col = new Int32Array(this.count);
        for (let i = 0; i < items.length; i++) {
          const item = items[i];
          col[i] = item ? +item : -1;
        }
      }
      this._ints.set(key, col);
    }
    return col;
  }

  /** The value of integer column `key` for op `i`, or null. */
  int(key: IntColumn, i: number): number | null {
    const col = this.ints(key);
    const v = col && i >= 0 && i < col.length ? col[i] : -1;
    return v >= 0 ? v : null;
  }

  /** The line spans, or null when no op is printed. */
  spans(): ISpans | null {
    if (this._spans === undefined) {
      const text = this.data.lines;
      this._spans = null;
      if (typeof text === 'string') {
        const items = splitColumn(text, this.count, 'lines');
        const first = new Int32Array(this.count);
        const last = new Int32Array(this.count);
        for (let i = 0; i < items.length; i++) {
          const item = items[i];
          if (!item) {
            continue;
          }
          const colon = item.indexOf(':');
          if (colon < 0) {
            first[i] = last[i] = +item;
          } else {
            first[i] = +item.slice(0, colon);
            last[i] = +item.slice(colon + 1);
          }
        }
        this._spans = { first, last };
      }
    }
    return this._spans;
  }

  /** The span of op `i`, or null when it is not printed. */
  span(i: number): Span | null {
    const s = this.spans();
    return s && i >= 0 && i < this.count && s.first[i] > 0
      ? [s.first[i], s.last[i]]
      : null;
  }

  /** The value of string column `key` for op `i`, or null (`name_stack`: ''). */
  str(key: StringColumn, i: number): string | null {
    const col = this._dict(key);
    const c = col && i >= 0 && i < col.codes.length ? col.codes[i] : -1;
    return c >= 0
      ? (col!.values[c] as string)
      : key === 'name_stack'
        ? ''
        : null;
  }

  /** The name of op `i`. */
  name(i: number): string {
    return this.str('name', i) ?? '?';
  }

  /** The result types of op `i`. */
  types(i: number): string[] {
    const col = this._dict('types');
    const c = col && i >= 0 && i < col.codes.length ? col.codes[i] : -1;
    return c >= 0 ? (col!.values[c] as string[]) : [];
  }

  private _dict(
    key: StringColumn | 'types'
  ): { values: unknown[]; codes: Int32Array } | null {
    let col = this._dicts.get(key);
    if (col === undefined) {
      const data = this.data[key];
      col = null;
      if (
        data &&
        typeof data.codes === 'string' &&
        Array.isArray(data.values)
      ) {
        const items = splitColumn(data.codes, this.count, key);
        const codes = new Int32Array(this.count);
        for (let i = 0; i < items.length; i++) {
          const item = items[i];
          codes[i] = item ? +item : -1;
        }
        col = { values: data.values, codes };
      }
      this._dicts.set(key, col);
    }
    return col;
  }

  private _ints = new Map<IntColumn, Int32Array | null>();
  private _dicts = new Map<
    string,
    { values: unknown[]; codes: Int32Array } | null
  >();
  private _spans: ISpans | null | undefined = undefined;
}

/** Op indices as JSON holds them, `"0-4,7"` (runs as `start-end`) → `[0, 1, 2, 3, 4, 7]`. */
/**
 * Op indices written as runs (`"0-4,7"`). With `limit` (the number of ops they refer
 * to), an index outside `[0, limit)` is a contract error before any run is expanded:
 * a few characters of a saved notebook cannot make millions of numbers.
 */
export function decodeIndices(text: string, limit?: number): number[] {
  const out: number[] = [];
  for (const [first, last] of indexRuns(text, limit)) {
    for (let k = first; k <= last; k++) {
      out.push(k);
    }
  }
  return out;
}

/** The runs of `text` as `[first, last]` pairs, each checked against `limit`. */
function indexRuns(text: string, limit?: number): Array<[number, number]> {
  const runs: Array<[number, number]> = [];
  if (!text) {
    return runs;
  }
  for (const item of text.split(',')) {
    const dash = item.indexOf('-');
    const first = dash < 0 ? +item : +item.slice(0, dash);
    const last = dash < 0 ? first : +item.slice(dash + 1);
    if (
      !Number.isInteger(first) ||
      !Number.isInteger(last) ||
      first < 0 ||
      last < first ||
      (limit !== undefined && last >= limit)
    ) {
      throw new ContractError(
        `The report refers to op ${JSON.stringify(item.slice(0, 40))}, out of range for a stage of ${limit ?? '?'} ops.`
      );
    }
    runs.push([first, last]);
  }
  return runs;
}

/** Checks op-index runs against their stage's op count without expanding them. */
export function checkIndices(text: string, limit: number): void {
  indexRuns(text, limit);
}

export interface IComputation {
  name: string;
  lines: Span;
  entry: boolean;
  caller: number | null;
  fusion: number | null;
}

export interface IProvenanceStage {
  text: string;
  /** Read from the JSON's `ops` (an `IOpColumnsData`) by `readReport`. */
  ops: StageOps;
  computations?: IComputation[];
  arg_shardings?: (string | null)[] | null;
  result_shardings?: (string | null)[] | null;
  collectives?: number[];
  notes?: string[];
}

export interface ISourceFile {
  path: string;
  complete: boolean;
  chunks: [number, string][];
  /** Not the user's own code (an installed package): ops are charged to the
   *  user's line that calls into it. */
  library?: boolean;
}

/** `[file, line, column, end_line, end_column, function]`. */
export type Frame = [
  number,
  number,
  number | null,
  number | null,
  number | null,
  string
];

export interface ISourceLine {
  file: number;
  line: number;
  /** `{stage: op indices}`, each as JSON holds it (`"0-4,7"`, see `decodeIndices`). */
  ops: { [stage: string]: string };
}

export interface IProvenance {
  schema: 'olympus.provenance';
  version: number;
  function: {
    name: string;
    file: number | null;
    first_line: number | null;
    last_line: number | null;
  };
  platforms: string[];
  files: ISourceFile[];
  frames: Frame[];
  locations: number[][];
  /** By version 2 name (a version 1 model's `hlo` is read as `compiled`). */
  stages: { [stage: string]: IProvenanceStage };
  /** Stage → why it does not exist for this program (version 2; `{}` for version 1). */
  unavailable: { [stage: string]: string };
  lines: ISourceLine[];
  /**
   * The source lines that call the function, `[file, line]`, from the report's
   * `callers` (found by `caller_lines` in `olympus_jupyter/report/html.py`); null
   * for a bundle written before reports carried them.
   */
  callers?: Array<[number, number]> | null;
}

export interface IFailure {
  stage: string;
  type: string;
  message: string;
  frames: {
    file: string;
    line: number;
    function: string;
    code: string | null;
  }[];
}

/** A cost figure named for people (from the bundle: `analyses.cost.names`). */
export interface ICostName {
  /** The figure named for people. */
  label: string;
  /** `flops`, `ops`, `bytes`, `seconds` or '' (a plain number). */
  unit: string;
  /** What it counts, in a sentence or two. */
  explanation: string;
  /** The label with `N` for the operand: the legend's entry. */
  family: string;
}

export interface IReport {
  schema: 'olympus.stages';
  /** The version the document was written in (1 is read into the shape of 2). */
  version: number;
  name: string;
  platforms: string[];
  /** The stages to show, in order: one row per stage the user asked for. */
  stage_table: IStageInfo[];
  debug_info: boolean;
  timings: { [step: string]: number };
  failure: IFailure | null;
  unavailable: { [stage: string]: string };
  /** What the reader should know about what is shown (e.g. the output was capped). */
  notes: string[];
  /**
   * The hardware compiled for without having it, as the header writes it (its
   * name, then the lines of `target.lines`: the devices and mesh, "will it fit");
   * null for this machine's devices.
   */
  target: { name: string; lines: string[] } | null;
  /** Stage → text, for program stages that are not linked (`hlo`). */
  texts: { [stage: string]: string };
  analyses: {
    cost: {
      lowered: { [metric: string]: number } | null;
      compiled: { [metric: string]: number } | null;
      /** Each key named for people, in table order (empty for older bundles). */
      names: Map<string, ICostName>;
      /** `[family, explanation]` per kind of figure shown. */
      legend: [string, string][];
      /** What the lowered and compiled figures are ('' for older bundles). */
      note: string;
      columns: { lowered: string; compiled: string };
      /**
       * The figures that are no figures (negative: XLA's -1s for what it cannot
       * cost; not finite), by table and key: what each is, to show beside it.
       */
      marks: {
        lowered: { [metric: string]: string };
        compiled: { [metric: string]: string };
      };
    };
    memory: { [key: string]: number } | null;
  };
  provenance: IProvenance | null;
  /** XLA's passes (the `passes` stage), when the report made them. */
  passes: IPasses | null;
  /** Where the cost goes (the `costs` stage), when the report made it; read by `readCosts`. */
  costs: ICosts | null;
  /**
   * Where the output was capped in a kernel that keeps the report: its token and
   * the lists it cut, which a live view fetches (`livekernel.ts`); else null.
   */
  live: ILive | null;
  /**
   * The data of stages of kinds registered in Python, by stage name (version 3):
   * each follows the schema of a generic view (`text_view`, `table_view`), which
   * the bundle's schema checks; the view its stage names shows it (`kinds.ts`).
   */
  data: { [stage: string]: unknown };
}

/** An instruction that carries a source line's work (a journey's start or end). */
export interface IPassCarrier {
  label: string;
  opcode: string;
  /** The fusion holding it, or null. */
  fusion: string | null;
  fusion_kind: string | null;
}

/** One row of the pass table: a pipeline's start, or a pass. */
export interface IPassRow {
  /** The dumped step that shows it (index into `deltas`), or null (no module dumped). */
  step: number | null;
  pipeline: string;
  pass: string;
  kind: 'start' | 'changed' | 'unchanged' | 'context';
  instructions_before: number;
  instructions: number;
  added: number;
  removed: number;
}

/** What one pass did to one source line's instructions. */
export interface IPassEvent {
  /** The row of the pass table (index into `rows`). */
  row: number;
  pass: string;
  pipeline: string;
  kind: string;
  /** Instruction labels it names (the first is the one to look for). */
  labels: string[];
  detail: string;
}

/** Where a source line's instructions went through the passes. */
export interface IJourney {
  /** Index into `provenance.files`. */
  file: number;
  line: number;
  start: IPassCarrier[];
  end: IPassCarrier[];
  events: IPassEvent[];
}

/**
 * Where the instructions that came from some ops of olympuspr and StableHLO went
 * (each op's own: matched on XLA's op name and call stack), with the ids of those
 * ops (`'stablehlo:3'`).
 */
export interface IOpJourney {
  ops: string[];
  start: IPassCarrier[];
  end: IPassCarrier[];
  events: IPassEvent[];
}

/** A module as a delta of the one before: `[i, j]` keeps lines i..j-1; a string is a new line. */
export type PassDelta = Array<string | [number, number]>;

/**
 * The report's `passes` (the `passes` stage; see
 * `olympus_jupyter/report/passes_view.py`): the pass table, the module before the
 * first pass and after each dumped step, and each source line's journey.
 */
export interface IPasses {
  pass_re: string;
  module: string;
  before: string;
  rows: IPassRow[];
  /** The module after each dumped step, as a delta of the one before (null: left out). */
  deltas: Array<PassDelta | null>;
  journeys: IJourney[];
  /** The ops' journeys (absent in older bundles, or left out past a size cap). */
  op_journeys?: IOpJourney[];
  note: string | null;
}

/** A list the output cut: it shows its first `shown` items of `total`. */
export interface ILivePart {
  kind: 'costs' | 'passes' | 'stage';
  part: string;
  shown: number;
  total: number;
}

/** The report's `live`: the kernel's token for it and the lists it cut. */
export interface ILive {
  report: string;
  parts: ILivePart[];
}

const LIVE_KINDS = new Set(['costs', 'passes', 'stage']);

function isLiveCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0;
}

/** The bundle's `live`, checked (null where absent or not understood). */
export function readLive(v: unknown): ILive | null {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    return null;
  }
  const o = v as Record<string, unknown>;
  if (typeof o.report !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(o.report)) {
    return null;
  }
  const parts = (Array.isArray(o.parts) ? o.parts.slice(0, 32) : [])
    .filter(
      (p): p is ILivePart =>
        typeof p === 'object' &&
        p !== null &&
        LIVE_KINDS.has((p as ILivePart).kind) &&
        typeof (p as ILivePart).part === 'string' &&
        isLiveCount((p as ILivePart).shown) &&
        isLiveCount((p as ILivePart).total)
    )
    .map(p => ({ kind: p.kind, part: p.part, shown: p.shown, total: p.total }));
  return { report: o.report, parts };
}

/** One row of the costs by line: a source line, or what no line made. */
export interface ICostLine {
  /** `line` (a source line), `compiler-made` or `arguments`. */
  what: 'line' | 'compiler-made' | 'arguments';
  /** Index into `provenance.files` (checked), or null. */
  file: number | null;
  /** The path of a line in a file the report does not hold (`file` is null), or null. */
  path: string | null;
  /** 1-based line number in its file, or null (not a line). */
  line: number | null;
  flops: number;
  transcendentals: number;
  /** Bytes accessed. */
  bytes: number;
  /** Bytes live at the peak that this line made. */
  peak: number;
  /** Compiled instructions (capped). */
  instructions: string[];
  /** Its buffers live at the peak (capped). */
  buffers: string[];
  /** How its instructions inside loops are counted (`× 8 iterations`); '' outside loops. */
  iterations: string;
  /** A target's report: its part of the TPU compiler's estimated cycles (null: none, a roofline). */
  cycles: number | null;
  /** A target's report: its time in seconds (null: none, or the chip's clock not known). */
  seconds: number | null;
  /** A roofline row's: which of its flops and bytes set its time (null: none). */
  bound: 'flops' | 'bytes' | null;
  /**
   * The library lines beneath it (flax, optax...: the frames inside the libraries
   * its ops were made in), each with the part of its figures made there; [] when
   * none (or an older bundle).
   */
  via: ICostVia[];
}

/** A library line beneath a user's line (`ICostLine.via`): its part of the line's figures. */
export interface ICostVia {
  /** Index into `provenance.files` (checked), or null. */
  file: number | null;
  /** The path of a file the report does not hold (`file` is null), or null. */
  path: string | null;
  line: number | null;
  /** The function the line is in (`Dense.__call__`), or ''. */
  function: string;
  flops: number;
  transcendentals: number;
  bytes: number;
  /** A target's report: its part of the line's time (null: none). */
  cycles: number | null;
  seconds: number | null;
}

/**
 * One module path's own figures (`Model/Block_0/Dense_0`; '' for what no module
 * made): the module tree adds them up the path's prefixes (`moduletree.ts`).
 */
export interface ICostModule {
  path: string;
  flops: number;
  transcendentals: number;
  bytes: number;
  /** How its instructions inside loops are counted (`× 8 iterations`); '' outside. */
  iterations: string;
  /** A target's report: its own time (null: none). */
  cycles: number | null;
  seconds: number | null;
}

/**
 * A target's report's time column (`costs.time`; `olympus_jupyter/report/time_view.py`):
 * each line's time before any run, on a TPU the compiler's estimate of cycles, on a
 * GPU a roofline from its peak FLOP/s and memory bandwidth. `what` names the figure
 * as every form says it; `cycles` and `seconds` are what the rows add up to.
 */
export interface ICostTime {
  figure: 'cycles' | 'roofline';
  what: string;
  label: string;
  chip: string;
  clock_hz: number | null;
  peak_flops: number | null;
  hbm_bandwidth: number | null;
  cycles: number | null;
  seconds: number | null;
  notes: string[];
}

/** A buffer live at the peak. */
export interface ICostBuffer {
  label: string;
  index: string;
  size: number;
  /** Its size × the trips of the loops it is made in, or null (outside loops, older bundles). */
  counted: number | null;
  kind: string;
  shape: string;
  /** Index into `provenance.files` (checked), or null. */
  file: number | null;
  /** The path of a file the report does not hold (`file` is null), or null. */
  path: string | null;
  line: number | null;
  /** The argument whose buffer it reuses, or null. */
  aliased_argument: string | null;
  /**
   * The pytree name of the argument it is (or, an output, reuses), keys joined
   * with `/` (`params/Dense_0/kernel`), or null.
   */
  argument: string | null;
}

/** A collective the compiled program runs. */
export interface ICollective {
  label: string;
  opcode: string;
  /** `inserted` (by the partitioner) or as written. */
  kind: string;
  replica_groups: string;
  group_size: number | null;
  /** Bytes of its result, per device. */
  result_bytes: number;
  /** Bytes each device sends or receives, or null when not known. */
  moved_bytes: number | null;
  op_name: string;
  /** `[file, line]` pairs (file checked: null when it is not one of the report's). */
  lines: Array<[number | null, number]>;
  shardings: string[];
  /** The pytree names of the arguments it moves. */
  arguments: string[];
  /** The pytree leaves whose outputs its result feeds (a gradient's parameter). */
  parameters: string[];
  text: string;
}

/** The live-range peak of the compiled program. */
export interface ICostPeak {
  bytes: number;
  at: string | null;
  memory_analysis_peak: number | null;
  difference: string;
  by_kind: { [kind: string]: number };
}

/**
 * The report's `costs` (the `costs` stage; see
 * `olympus_jupyter/report/costs_view.py`): XLA's figures by source line, the
 * buffers live at the peak, the collectives and the shardings. Read by `readCosts`,
 * which checks every field: numbers are finite and not negative, file indices are
 * within `provenance.files`, strings are strings.
 */
/** What the compiled instructions that came from one op cost. */
export interface ICostOp {
  /** `'<stage>:<index>'`, e.g. `'stablehlo:3'`. */
  op: string;
  flops: number;
  transcendentals: number;
  bytes: number;
}

export interface ICosts {
  /** Devices the program runs on (figures are per device). */
  devices: number;
  /** XLA's totals (`cost_analysis()`: each loop body counted once). */
  totals: { flops: number; transcendentals: number; bytes: number };
  /**
   * The totals with each loop body counted × its trip count (what the rows add up
   * to, and what shares are of), or null where no loop runs its body more than once.
   */
  counted: { flops: number; transcendentals: number; bytes: number } | null;
  peak: ICostPeak | null;
  lines: ICostLine[];
  /** Each module path's own figures ([] in older bundles). */
  modules: ICostModule[];
  /** What each op of olympuspr and StableHLO costs, by op id ([] in older bundles). */
  ops: ICostOp[];
  buffers: ICostBuffer[];
  collectives: ICollective[];
  /** Each input's and output's sharding, with its pytree name (null: not known). */
  shardings: {
    inputs: string[];
    outputs: string[];
    input_names: (string | null)[];
    output_names: (string | null)[];
  };
  notes: string[];
  unavailable: { [part: string]: string };
  /** A target's report's time column, or null (this machine's devices, older bundles). */
  time: ICostTime | null;
}

export interface IDiff {
  schema: 'olympus.diff';
  version: number;
  labels: [string, string];
  before: IReport;
  after: IReport;
}

/** Raised for data this reader does not understand; its message is shown to the user. */
export class ContractError extends Error {}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The string values of an object (others left out). */
function stringMap(v: unknown): { [key: string]: string } {
  const out: { [key: string]: string } = {};
  if (isObject(v)) {
    for (const [k, item] of Object.entries(v)) {
      if (typeof item === 'string') {
        out[k] = item;
      }
    }
  }
  return out;
}

/** One row of a version 2 stage table, checked field by field. */
function readStageInfo(row: unknown, at: number): IStageInfo {
  const where = `The report's stage table is malformed: entry ${at}`;
  if (!isObject(row)) {
    throw new ContractError(`${where} is not an object.`);
  }
  const text = (key: string): string => {
    const v = row[key];
    if (typeof v !== 'string' || !v) {
      throw new ContractError(
        `${where} has no ${JSON.stringify(key)} string (got ${JSON.stringify(v)}).`
      );
    }
    return v;
  };
  const orNull = (key: string): string | null => {
    const v = row[key];
    if (v === null || v === undefined) {
      return null;
    }
    if (typeof v !== 'string') {
      throw new ContractError(
        `${where} has a ${JSON.stringify(key)} that is neither a string nor null (got ${JSON.stringify(v)}).`
      );
    }
    return v;
  };
  const name = text('name');
  const linked = row.linked ?? false;
  if (typeof linked !== 'boolean') {
    throw new ContractError(
      `${where} (${JSON.stringify(name)}) has a "linked" that is not true or false (got ${JSON.stringify(linked)}).`
    );
  }
  const kind = text('kind');
  return {
    name,
    title: text('title'),
    label: text('label'),
    kind,
    view: orNull('view') ?? kind,
    step: orNull('step'),
    language: orNull('language'),
    unit: orNull('unit') ?? 'ops',
    linked
  };
}

/** The stage table of a version 2 report: one row per entry of `stages`, in its order. */
function readStageTable(data: Record<string, unknown>): IStageInfo[] {
  const table = data.stage_table;
  if (!Array.isArray(table)) {
    throw new ContractError(
      'The report has no stage table ("stage_table" should be a list, one entry per stage).'
    );
  }
  const rows = table.map((row, i) => readStageInfo(row, i));
  const seen = new Set<string>();
  for (const row of rows) {
    if (seen.has(row.name)) {
      throw new ContractError(
        `The stage table lists stage ${JSON.stringify(row.name)} twice.`
      );
    }
    seen.add(row.name);
  }
  if (data.stages !== undefined) {
    const stages = Array.isArray(data.stages) ? data.stages : null;
    if (
      !stages ||
      stages.length !== rows.length ||
      stages.some((s, i) => s !== rows[i].name)
    ) {
      throw new ContractError(
        `The stage table (${rows.map(r => r.name).join(', ')}) does not match the stages ` +
          `of the report (${JSON.stringify(data.stages)}).`
      );
    }
  }
  return rows;
}

/** The stage table of a version 1 report, which carried none: its known stages, in its order. */
function v1StageTable(stages: unknown): IStageInfo[] {
  const asked = Array.isArray(stages)
    ? stages.map(String)
    : V1_STAGE_TABLE.map(r => r.name);
  const rows: IStageInfo[] = [];
  for (const name of asked) {
    const row = V1_STAGE_TABLE.find(
      r => r.name === name || renamed(r.name) === name
    );
    if (row && !rows.includes(row)) {
      rows.push({ ...row });
    }
  }
  return rows;
}

/** The names the bundle gives the cost figures (`analyses.cost`): text only. */
function readCostNames(
  cost: Record<string, unknown>
): Pick<
  IReport['analyses']['cost'],
  'names' | 'legend' | 'note' | 'columns' | 'marks'
> {
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  const names = new Map<string, ICostName>();
  if (isObject(cost.names)) {
    for (const [key, n] of Object.entries(cost.names)) {
      if (isObject(n)) {
        names.set(key, {
          label: text(n.label) || key,
          unit: text(n.unit),
          explanation: text(n.explanation),
          family: text(n.family) || key
        });
      }
    }
  }
  const legend = Array.isArray(cost.legend)
    ? cost.legend
        .filter(e => Array.isArray(e) && e.length === 2)
        .map(e => [text(e[0]), text(e[1])] as [string, string])
    : [];
  // Table order: the bundle's `order` (JSON object keys may have been sorted).
  if (Array.isArray(cost.order)) {
    const ordered = new Map<string, ICostName>();
    for (const key of cost.order) {
      const name = typeof key === 'string' ? names.get(key) : undefined;
      if (name) {
        ordered.set(key as string, name);
      }
    }
    for (const [key, name] of names) {
      if (!ordered.has(key)) {
        ordered.set(key, name);
      }
    }
    names.clear();
    ordered.forEach((v, k) => names.set(k, v));
  }
  const columns = isObject(cost.columns) ? cost.columns : {};
  const marks = isObject(cost.marks) ? cost.marks : {};
  const notes = (v: unknown) => {
    const out: { [metric: string]: string } = {};
    if (isObject(v)) {
      for (const [key, note] of Object.entries(v)) {
        if (typeof note === 'string') {
          out[key] = note;
        }
      }
    }
    return out;
  };
  return {
    names,
    legend,
    note: text(cost.note),
    columns: {
      lowered: text(columns.lowered),
      compiled: text(columns.compiled)
    },
    marks: { lowered: notes(marks.lowered), compiled: notes(marks.compiled) }
  };
}

/**
 * Checks a report against the published schema, then what the schema cannot
 * express (the stage table against `stages`, op indices against their stage), and
 * fills in what older documents leave out; a version 1 report is read into the
 * shape of version 2. Raises `ContractError` for another schema, an unknown
 * version, data the schema refuses (naming the field by its JSON path, prefixed
 * with `at` for a report inside a larger document) or a malformed stage table. The
 * data is not changed.
 */
/** Figures by name, as the bundle's analyses hold them. */
type Figures = { [name: string]: number };

export function readReport(data: unknown, at = ''): IReport {
  if (!isObject(data)) {
    throw new ContractError('Not an Olympus report: expected a JSON object.');
  }
  if (data.schema !== 'olympus.stages') {
    throw new ContractError(
      `Not an Olympus report: schema is ${JSON.stringify(data.schema)}, expected "olympus.stages".`
    );
  }
  const version = data.version;
  if (version !== 1 && version !== 2 && version !== REPORT_VERSION) {
    throw new ContractError(
      `Report version ${JSON.stringify(version)} is not supported; this viewer reads versions 1 to ${REPORT_VERSION}. ` +
        'Update the olympus package (which ships this viewer) to read it.'
    );
  }
  const prov = data.provenance;
  if (prov !== null && prov !== undefined) {
    if (
      !isObject(prov) ||
      prov.schema !== 'olympus.provenance' ||
      (prov.version !== 1 && prov.version !== 2)
    ) {
      throw new ContractError(
        'The report embeds a provenance model this viewer cannot read (expected schema "olympus.provenance", version 1 or 2).'
      );
    }
  }
  const problem = schemaProblem(data, at);
  if (problem !== null) {
    throw new ContractError(problem);
  }
  const texts = version === 1 ? {} : stringMap(data.texts);
  if (version === 1 && typeof data.hlo_text === 'string') {
    texts.hlo = data.hlo_text; // version 1 held the compiler's input HLO alone
  }
  const analyses = isObject(data.analyses) ? data.analyses : {};
  const cost = isObject(analyses.cost) ? analyses.cost : {};
  // Stages by their names now (a report before version 3 calls some otherwise).
  const stageTable = (
    version === 1 ? v1StageTable(data.stages) : readStageTable(data)
  ).map(row => ({ ...row, name: renamed(row.name) }));
  const unavailable: { [stage: string]: string } = {};
  for (const [name, reason] of Object.entries(stringMap(data.unavailable))) {
    unavailable[renamed(name)] = reason;
  }
  const failure = isObject(data.failure)
    ? (data.failure as unknown as IFailure)
    : null;
  return {
    schema: 'olympus.stages',
    version,
    name: String(data.name ?? '?'),
    platforms: Array.isArray(data.platforms) ? data.platforms.map(String) : [],
    stage_table: stageTable,
    debug_info: data.debug_info !== false,
    timings: isObject(data.timings) ? (data.timings as IReport['timings']) : {},
    failure:
      failure && typeof failure.stage === 'string'
        ? { ...failure, stage: renamed(failure.stage) }
        : failure,
    unavailable,
    notes: Array.isArray(data.notes) ? data.notes.map(String) : [],
    target: isObject(data.target)
      ? {
          name: String(data.target.name),
          lines: Array.isArray(data.target.lines)
            ? data.target.lines.map(String)
            : []
        }
      : null,
    live: readLive(data.live),
    texts,
    analyses: {
      cost: {
        lowered: isObject(cost.lowered) ? (cost.lowered as Figures) : null,
        compiled: isObject(cost.compiled) ? (cost.compiled as Figures) : null,
        ...readCostNames(cost)
      },
      memory: isObject(analyses.memory) ? (analyses.memory as Figures) : null
    },
    provenance: prov
      ? {
          ...readProvenance(prov as Record<string, unknown>),
          callers: Array.isArray(data.callers)
            ? (data.callers as Array<[number, number]>)
            : null
        }
      : null,
    passes: isObject(data.passes) ? (data.passes as unknown as IPasses) : null,
    costs: readCosts(data.costs, isObject(prov) ? prov.files : null),
    data: isObject(data.data) ? { ...data.data } : {}
  };
}

/** The most rows of each list of `costs` read (the bundle caps them lower). */
const MAX_COST_ROWS = 100_000;

/** A figure: a finite number, not negative (anything else is 0). */
function figure(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0;
}

/** A figure, or null when there is none (anything not a figure is none). */
function figureOrNull(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null;
}

/** A line number: a positive integer, or null. */
function lineNumber(v: unknown): number | null {
  return typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : null;
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function strOrNull(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

function strings(v: unknown): string[] {
  return Array.isArray(v)
    ? v.slice(0, MAX_COST_ROWS).filter(s => typeof s === 'string')
    : [];
}

/** Strings or nulls, each in its place (what is not a string reads as null). */
function namesInPlace(v: unknown): (string | null)[] {
  return Array.isArray(v)
    ? v.slice(0, MAX_COST_ROWS).map(s => (typeof s === 'string' ? s : null))
    : [];
}

function rows(v: unknown): Record<string, unknown>[] {
  return Array.isArray(v) ? v.slice(0, MAX_COST_ROWS).filter(isObject) : [];
}

/**
 * The report's `costs`, checked field by field (tolerant, as `passes`: what is not
 * an object is no costs; a field of the wrong type reads as empty). A file index is
 * kept only when it names one of `files` (the provenance model's), else it is null.
 */
export function readCosts(data: unknown, files: unknown): ICosts | null {
  if (!isObject(data)) {
    return null;
  }
  const nFiles = Array.isArray(files) ? files.length : 0;
  const file = (v: unknown): number | null =>
    typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < nFiles
      ? v
      : null;
  const totals = isObject(data.totals) ? data.totals : {};
  const peak = isObject(data.peak) ? data.peak : null;
  const byKind: { [kind: string]: number } = {};
  if (peak && isObject(peak.by_kind)) {
    for (const [k, v] of Object.entries(peak.by_kind)) {
      byKind[k] = figure(v);
    }
  }
  const shardings = isObject(data.shardings) ? data.shardings : {};
  const devices = data.devices;
  return {
    devices:
      typeof devices === 'number' && Number.isInteger(devices) && devices > 0
        ? devices
        : 1,
    totals: {
      flops: figure(totals.flops),
      transcendentals: figure(totals.transcendentals),
      bytes: figure(totals['bytes accessed'])
    },
    counted: isObject(data.counted_totals)
      ? {
          flops: figure(data.counted_totals.flops),
          transcendentals: figure(data.counted_totals.transcendentals),
          bytes: figure(data.counted_totals['bytes accessed'])
        }
      : null,
    peak: peak
      ? {
          bytes: figure(peak.bytes),
          at: strOrNull(peak.at),
          memory_analysis_peak: figureOrNull(peak.memory_analysis_peak),
          difference: str(peak.difference),
          by_kind: byKind
        }
      : null,
    lines: rows(data.lines).map(r => {
      const what =
        r.what === 'compiler-made' || r.what === 'arguments' ? r.what : 'line';
      return {
        what,
        file: file(r.file),
        path: strOrNull(r.path),
        line: lineNumber(r.line),
        flops: figure(r.flops),
        transcendentals: figure(r.transcendentals),
        bytes: figure(r.bytes),
        peak: figure(r.peak),
        instructions: strings(r.instructions),
        buffers: strings(r.buffers),
        iterations: str(r.iterations),
        cycles: figureOrNull(r.cycles),
        seconds: figureOrNull(r.seconds),
        bound: r.bound === 'flops' || r.bound === 'bytes' ? r.bound : null,
        via: rows(r.via).map(v => ({
          file: file(v.file),
          path: strOrNull(v.path),
          line: lineNumber(v.line),
          function: str(v.function),
          flops: figure(v.flops),
          transcendentals: figure(v.transcendentals),
          bytes: figure(v.bytes),
          cycles: figureOrNull(v.cycles),
          seconds: figureOrNull(v.seconds)
        }))
      };
    }),
    modules: rows(data.modules)
      .filter(m => typeof m.path === 'string')
      .map(m => ({
        path: m.path as string,
        flops: figure(m.flops),
        transcendentals: figure(m.transcendentals),
        bytes: figure(m.bytes),
        iterations: str(m.iterations),
        cycles: figureOrNull(m.cycles),
        seconds: figureOrNull(m.seconds)
      })),
    ops: rows(data.ops)
      .filter(o => typeof o.op === 'string')
      .map(o => ({
        op: o.op as string,
        flops: figure(o.flops),
        transcendentals: figure(o.transcendentals),
        bytes: figure(o.bytes)
      })),
    buffers: rows(data.buffers).map(b => ({
      label: str(b.label),
      index: str(b.index),
      size: figure(b.size),
      counted: figureOrNull(b.counted),
      kind: str(b.kind),
      shape: str(b.shape),
      file: file(b.file),
      path: strOrNull(b.path),
      line: lineNumber(b.line),
      aliased_argument:
        b.aliased_argument === null || b.aliased_argument === undefined
          ? null
          : String(b.aliased_argument).slice(0, 200),
      argument: strOrNull(b.argument)
    })),
    collectives: rows(data.collectives).map(c => ({
      label: str(c.label),
      opcode: str(c.opcode),
      kind: str(c.kind),
      replica_groups: str(c.replica_groups),
      group_size:
        typeof c.group_size === 'number' && Number.isInteger(c.group_size)
          ? c.group_size
          : null,
      result_bytes: figure(c.result_bytes),
      moved_bytes: figureOrNull(c.moved_bytes),
      op_name: str(c.op_name),
      lines: (Array.isArray(c.lines) ? c.lines.slice(0, MAX_COST_ROWS) : [])
        .filter(
          (l): l is unknown[] =>
            Array.isArray(l) && l.length === 2 && lineNumber(l[1]) !== null
        )
        .map(l => [file(l[0]), l[1] as number] as [number | null, number]),
      shardings: strings(c.shardings),
      arguments: strings(c.arguments),
      parameters: strings(c.parameters),
      text: str(c.text)
    })),
    shardings: {
      inputs: strings(shardings.inputs),
      outputs: strings(shardings.outputs),
      input_names: namesInPlace(shardings.input_names),
      output_names: namesInPlace(shardings.output_names)
    },
    notes: strings(data.notes),
    unavailable: stringMap(data.unavailable),
    time: readTime(data.time)
  };
}

/** `costs.time`, checked (null: not an object, or a figure it does not know). */
function readTime(data: unknown): ICostTime | null {
  if (
    !isObject(data) ||
    (data.figure !== 'cycles' && data.figure !== 'roofline')
  ) {
    return null;
  }
  return {
    figure: data.figure,
    what: str(data.what),
    label: str(data.label) || 'time',
    chip: str(data.chip),
    clock_hz: figureOrNull(data.clock_hz),
    peak_flops: figureOrNull(data.peak_flops),
    hbm_bandwidth: figureOrNull(data.hbm_bandwidth),
    cycles: figureOrNull(data.cycles),
    seconds: figureOrNull(data.seconds),
    notes: strings(data.notes)
  };
}

/**
 * The provenance model with each stage's op columns wrapped in a `StageOps` (the
 * op data is not copied); a version 1 model's stage names are read as version 2's.
 */
function readProvenance(prov: Record<string, unknown>): IProvenance {
  const renamed: Readonly<Record<string, string>> =
    prov.version === 1 ? V1_PROVENANCE_NAMES : {};
  const rename = (name: string) => renamed[name] ?? name;
  const stages: { [stage: string]: IProvenanceStage } = {};
  const given = isObject(prov.stages) ? prov.stages : {};
  for (const [name, st] of Object.entries(given)) {
    if (!isObject(st) || !isObject(st.ops)) {
      continue;
    }
    stages[rename(name)] = {
      ...(st as unknown as IProvenanceStage),
      ops: new StageOps(st.ops as unknown as IOpColumnsData)
    };
  }
  let lines = Array.isArray(prov.lines) ? (prov.lines as ISourceLine[]) : [];
  if (prov.version === 1) {
    lines = lines.map(entry => {
      const ops: { [stage: string]: string } = {};
      for (const [name, indices] of Object.entries(entry.ops ?? {})) {
        ops[rename(name)] = indices;
      }
      return { ...entry, ops };
    });
  }
  for (const entry of lines) {
    for (const [name, indices] of Object.entries(entry.ops ?? {})) {
      checkIndices(String(indices), stages[name]?.ops.count ?? 0);
    }
  }
  const unavailable: { [stage: string]: string } = {};
  for (const [name, reason] of Object.entries(stringMap(prov.unavailable))) {
    unavailable[rename(name)] = reason;
  }
  return {
    ...(prov as unknown as IProvenance),
    stages,
    unavailable,
    lines
  };
}

/** Reads an `olympus.diff` bundle (two reports of one function). */
export function readDiff(data: unknown): IDiff {
  if (!isObject(data) || data.schema !== 'olympus.diff') {
    throw new ContractError(
      `Not an Olympus diff: schema is ${JSON.stringify(isObject(data) ? data.schema : data)}, expected "olympus.diff".`
    );
  }
  if (data.version !== 1) {
    throw new ContractError(
      `Diff version ${JSON.stringify(data.version)} is not supported; this viewer reads version 1.`
    );
  }
  const labels = Array.isArray(data.labels) ? data.labels.map(String) : [];
  return {
    schema: 'olympus.diff',
    version: 1,
    labels: [labels[0] ?? 'before', labels[1] ?? 'after'],
    before: readReport(data.before, '/before'),
    after: readReport(data.after, '/after')
  };
}

/** The row of stage `name` in a report's table, or null. */
export function stageInfo(report: IReport, name: string): IStageInfo | null {
  return report.stage_table.find(s => s.name === name) ?? null;
}

/** The report's linked program stages (their ops tied to source), in order. */
export function linkedStages(report: IReport): IStageInfo[] {
  return report.stage_table.filter(s => s.kind === 'program' && s.linked);
}

/** The name of the report's source stage, or null when it shows none. */
export function sourceStage(report: IReport): string | null {
  return report.stage_table.find(s => s.kind === 'source')?.name ?? null;
}

/**
 * The text a program stage shows, or null when the report has none: a linked
 * stage's from the provenance model, another's from `texts`.
 */
export function stageText(report: IReport, stage: IStageInfo): string | null {
  if (stage.kind !== 'program') {
    return null;
  }
  const st = stage.linked ? report.provenance?.stages[stage.name] : undefined;
  return st ? st.text : (report.texts[stage.name] ?? null);
}

/**
 * `1536` → `1.5 KiB`, as the text report prints it (`format_bytes` in
 * `olympus_jupyter/report/cost_names.py`; tests/test_view_tables.py runs both).
 */
export function formatBytes(n: number): string {
  let v = n;
  for (const unit of SIZE_UNITS) {
    if (Math.abs(v) < 1024 || unit === SIZE_UNITS[SIZE_UNITS.length - 1]) {
      return `${formatF(v, unit === SIZE_UNITS[0] ? 0 : 1)} ${unit}`;
    }
    v /= 1024;
  }
  return `${n} B`;
}

/** Seconds → `12.3 ms` (`format_ms` in `olympus_jupyter/report/cost_names.py`). */
export function formatMs(seconds: number): string {
  return `${formatF(seconds * 1e3, 1)} ms`;
}

/** The base name of a path. */
export function baseName(path: string): string {
  const parts = path.split(/[\\/]/);
  return parts[parts.length - 1] || path;
}
