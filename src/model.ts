/**
 * The JSON contract this extension renders: `application/vnd.olympus.stages+json`
 * (schema `olympus.stages`, version 1, see docs/report.md) with the provenance model
 * embedded (schema `olympus.provenance`, version 1, see docs/provenance.md), and
 * `application/vnd.olympus.diff+json` (two reports of one function).
 *
 * Only types and small readers live here: no DOM, no CodeMirror.
 */

export const STAGES_MIME = 'application/vnd.olympus.stages+json';
export const DIFF_MIME = 'application/vnd.olympus.diff+json';

/** Report stages, in the order a report lists them. */
export type ReportStage =
  'source' | 'olympuspr' | 'stablehlo' | 'hlo' | 'compiled' | 'cost' | 'memory';

export const ALL_STAGES: ReadonlyArray<ReportStage> = [
  'source',
  'olympuspr',
  'stablehlo',
  'hlo',
  'compiled',
  'cost',
  'memory'
];

/** Report stages that show a text. */
export type TextStage = 'olympuspr' | 'stablehlo' | 'hlo' | 'compiled';

/** Report stages that are views of a provenance stage (`compiled` is provenance `hlo`). */
export type LinkedStage = 'olympuspr' | 'stablehlo' | 'compiled';

export const LINKED_STAGES: ReadonlyArray<LinkedStage> = [
  'olympuspr',
  'stablehlo',
  'compiled'
];

/** The provenance stage a report stage shows. */
export const PROVENANCE_STAGE: Record<LinkedStage, string> = {
  olympuspr: 'olympuspr',
  stablehlo: 'stablehlo',
  compiled: 'hlo'
};

export const STAGE_TITLES: Record<ReportStage, string> = {
  source: 'Source',
  olympuspr: 'olympuspr · traced program',
  stablehlo: 'StableHLO · lowered program',
  hlo: 'HLO · compiler input',
  compiled: 'Compiled HLO · after optimization',
  cost: 'Cost analysis',
  memory: 'Memory analysis'
};

/** Short names for tabs and toggles. */
export const STAGE_LABELS: Record<ReportStage, string> = {
  source: 'source',
  olympuspr: 'olympuspr',
  stablehlo: 'StableHLO',
  hlo: 'HLO',
  compiled: 'compiled',
  cost: 'cost',
  memory: 'memory'
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
export function decodeIndices(text: string): number[] {
  const out: number[] = [];
  if (!text) {
    return out;
  }
  for (const item of text.split(',')) {
    const dash = item.indexOf('-');
    if (dash < 0) {
      out.push(+item);
    } else {
      const end = +item.slice(dash + 1);
      for (let k = +item.slice(0, dash); k <= end; k++) {
        out.push(k);
      }
    }
  }
  return out;
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
  stages: { [stage: string]: IProvenanceStage };
  lines: ISourceLine[];
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

export interface IReport {
  schema: 'olympus.stages';
  version: number;
  name: string;
  platforms: string[];
  stages: string[];
  debug_info: boolean;
  timings: { [step: string]: number };
  failure: IFailure | null;
  unavailable: { [stage: string]: string };
  hlo_text: string | null;
  analyses: {
    cost: {
      lowered: { [metric: string]: number } | null;
      compiled: { [metric: string]: number } | null;
    };
    memory: { [key: string]: number } | null;
  };
  provenance: IProvenance | null;
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

/**
 * Checks the parts of a report the views rely on, and fills in what older or
 * partial documents leave out. Raises `ContractError` for another schema or version.
 */
export function readReport(data: unknown): IReport {
  if (!isObject(data)) {
    throw new ContractError('Not an Olympus report: expected a JSON object.');
  }
  if (data.schema !== 'olympus.stages') {
    throw new ContractError(
      `Not an Olympus report: schema is ${JSON.stringify(data.schema)}, expected "olympus.stages".`
    );
  }
  if (data.version !== 1) {
    throw new ContractError(
      `Report version ${JSON.stringify(data.version)} is not supported; this viewer reads version 1. ` +
        'Update the olympus package (which ships this viewer) to read it.'
    );
  }
  const prov = data.provenance;
  if (prov !== null && prov !== undefined) {
    if (
      !isObject(prov) ||
      prov.schema !== 'olympus.provenance' ||
      prov.version !== 1
    ) {
      throw new ContractError(
        'The report embeds a provenance model this viewer cannot read (expected schema "olympus.provenance", version 1).'
      );
    }
  }
  const analyses = isObject(data.analyses) ? data.analyses : {};
  const cost = isObject(analyses.cost) ? analyses.cost : {};
  return {
    schema: 'olympus.stages',
    version: 1,
    name: String(data.name ?? '?'),
    platforms: Array.isArray(data.platforms) ? data.platforms.map(String) : [],
    stages: Array.isArray(data.stages)
      ? data.stages.map(String)
      : [...ALL_STAGES],
    debug_info: data.debug_info !== false,
    timings: isObject(data.timings) ? (data.timings as IReport['timings']) : {},
    failure: isObject(data.failure)
      ? (data.failure as unknown as IFailure)
      : null,
    unavailable: isObject(data.unavailable)
      ? (data.unavailable as IReport['unavailable'])
      : {},
    hlo_text: typeof data.hlo_text === 'string' ? data.hlo_text : null,
    analyses: {
      cost: {
        lowered: isObject(cost.lowered) ? (cost.lowered as any) : null,
        compiled: isObject(cost.compiled) ? (cost.compiled as any) : null
      },
      memory: isObject(analyses.memory) ? (analyses.memory as any) : null
    },
    provenance: prov ? readProvenance(prov as Record<string, unknown>) : null
  };
}

/** The provenance model with each stage's op columns wrapped in a `StageOps` (the data is not copied). */
function readProvenance(prov: Record<string, unknown>): IProvenance {
  const stages: { [stage: string]: IProvenanceStage } = {};
  const given = isObject(prov.stages) ? prov.stages : {};
  for (const [name, st] of Object.entries(given)) {
    if (!isObject(st) || !isObject(st.ops)) {
      continue;
    }
    stages[name] = {
      ...(st as unknown as IProvenanceStage),
      ops: new StageOps(st.ops as unknown as IOpColumnsData)
    };
  }
  return { ...(prov as unknown as IProvenance), stages };
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
    before: readReport(data.before),
    after: readReport(data.after)
  };
}

/** The text a report stage shows, or null when the report has none. */
export function stageText(report: IReport, stage: TextStage): string | null {
  if (stage === 'hlo') {
    return report.hlo_text;
  }
  const st = report.provenance?.stages[PROVENANCE_STAGE[stage]];
  return st ? st.text : null;
}

/** Why a stage the user asked for has nothing to show, or null when it has. */
export function unavailableReason(
  report: IReport,
  stage: ReportStage
): string | null {
  const given = report.unavailable[stage];
  switch (stage) {
    case 'source': {
      const prov = report.provenance;
      if (!prov || !prov.files.some(f => f.chunks && f.chunks.length)) {
        return given ?? 'the source of this function could not be read';
      }
      return null;
    }
    case 'olympuspr':
    case 'stablehlo':
    case 'compiled':
      return report.provenance?.stages[PROVENANCE_STAGE[stage]]
        ? null
        : (given ?? 'not made');
    case 'hlo':
      return report.hlo_text !== null ? null : (given ?? 'not lowered');
    case 'cost': {
      const c = report.analyses.cost;
      return c.lowered || c.compiled
        ? null
        : (given ?? 'this backend reports no cost analysis');
    }
    case 'memory':
      return report.analyses.memory
        ? null
        : (given ?? 'this backend reports no memory analysis');
  }
  return given ?? null;
}

/** The report stages to show, in order: the ones the user asked for that this viewer knows. */
export function reportStages(report: IReport): ReportStage[] {
  const asked = new Set(report.stages);
  return ALL_STAGES.filter(s => asked.has(s));
}

/** `1536` → `1.5 KiB` (as the text report prints it). */
export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let v = n;
  for (const unit of units) {
    if (Math.abs(v) < 1024 || unit === 'GiB') {
      return unit === 'B'
        ? `${Math.round(v)} ${unit}`
        : `${v.toFixed(1)} ${unit}`;
    }
    v /= 1024;
  }
  return `${n} B`;
}

/** Seconds → `12.3 ms`. */
export function formatMs(seconds: number): string {
  return `${(seconds * 1e3).toFixed(1)} ms`;
}

/** The base name of a path. */
export function baseName(path: string): string {
  const parts = path.split(/[\\/]/);
  return parts[parts.length - 1] || path;
}
