/**
 * Names for people of the keys of XLA's cost analysis (`flops`, `bytes accessed0{}`,
 * `utilization1{}`, `bytes accessedout{}`, ...): a label, a unit and what the figure
 * counts. The words are those of `olympus_jupyter/report/cost_names.py`, which writes
 * them into the bundle too (`analyses.cost.names`); the browser tests check that this
 * view shows the same labels and explanations as Python. A key neither knows is
 * shown as itself.
 *
 *     describeCost('bytes accessed0{}').label  // 'bytes read from operand 0'
 */

export interface ICostName {
  /** XLA's key, as it came. */
  key: string;
  /** The figure named for people (the key itself when unknown). */
  label: string;
  /** `flops`, `ops`, `bytes`, `seconds` or '' (a plain number). */
  unit: string;
  /** What it counts, in a sentence or two. */
  explanation: string;
  /** The label with `N` for the operand: the legend's entry. */
  family: string;
  known: boolean;
}

export const LOWERED_NOTE =
  "before optimization (lowered): XLA's estimate for the program as it was " +
  'lowered, before any of its optimization passes; every op is counted on ' +
  'its own, as if it read its inputs from memory and wrote its result back.';
export const COMPILED_NOTE =
  'after optimization (compiled): the same estimate for the program XLA ' +
  'compiled, after fusion, simplification and its other passes; ops fused ' +
  'into one kernel share their reads and writes, so bytes usually fall ' +
  'while flops stay about the same.';
const capitalized = (s: string) => s[0].toUpperCase() + s.slice(1);
export const STAGES_NOTE =
  "Both are XLA's static estimates (HloCostAnalysis), not measurements: each " +
  'figure is added over every instruction of the program. ' +
  capitalized(LOWERED_NOTE) +
  ' ' +
  capitalized(COMPILED_NOTE);

interface IFamily {
  label: string;
  unit: string;
  explanation: string;
}

const PER_INSTRUCTION = ' Added over all instructions of the program.';

const FIXED: { [key: string]: IFamily } = {
  flops: {
    label: 'floating-point operations',
    unit: 'flops',
    explanation:
      'Arithmetic operations on numbers: one per element of an elementwise op, two per ' +
      'multiply-add of a dot or convolution. Transcendental functions are counted apart.' +
      PER_INSTRUCTION
  },
  transcendentals: {
    label: 'transcendental operations',
    unit: 'ops',
    explanation:
      'Calls of exp, log, sin, cos, tanh, sqrt, power, erf and the like, one per element.' +
      PER_INSTRUCTION
  },
  'bytes accessed': {
    label: 'bytes accessed (read + written)',
    unit: 'bytes',
    explanation:
      'Memory traffic: the bytes each instruction reads from its operands plus the bytes it ' +
      'writes to its result.' +
      PER_INSTRUCTION
  },
  optimal_seconds: {
    label: 'optimal time',
    unit: 'seconds',
    explanation:
      'A lower bound on the running time: for each instruction, the slowest of its flops, ' +
      "transcendentals and bytes at the device's peak rates. Absent or zero where XLA has no " +
      'rates for the device (CPU).' +
      PER_INSTRUCTION
  },
  utilization: {
    label: 'utilization of results',
    unit: '',
    explanation:
      "How much of each instruction's result is used (1 = all of it); XLA fills it in for " +
      'instructions inside fusions.' +
      PER_INSTRUCTION
  },
  reserved0: {
    label: 'backend figure reserved0',
    unit: '',
    explanation:
      "A figure a backend's own cost model keeps under this spare key; XLA's GPU cost model " +
      'keeps the size of the generated code (IR) here.' +
      PER_INSTRUCTION
  },
  reserved1: {
    label: 'backend figure reserved1',
    unit: '',
    explanation:
      "A figure a backend's own cost model keeps under this spare key; XLA's GPU cost model " +
      'keeps the number of basic-block splits here.' +
      PER_INSTRUCTION
  }
};

const OPERAND_BYTES: IFamily = {
  label: 'bytes read from operand {n}{part}',
  unit: 'bytes',
  explanation:
    'Bytes each instruction reads from its operand {n}{part_of}, its input number {n} ' +
    'counting from 0: operand {n} of every instruction, not argument {n} of the function.' +
    PER_INSTRUCTION
};
const OUTPUT_BYTES: IFamily = {
  label: 'bytes written to results{part}',
  unit: 'bytes',
  explanation:
    'Bytes each instruction writes to its result{part_of}; what the program returns is a ' +
    'part of it.' +
    PER_INSTRUCTION
};
const UTILIZATION: IFamily = {
  label: 'utilization of operand {n}{part}',
  unit: '',
  explanation:
    'How much of its operand {n}{part_of} each instruction uses when all of its result is used: ' +
    '1 = all of it, less for a slice, more where an input is read more than once. Added over ' +
    'all instructions of the program, so about the number of instructions that read all of ' +
    'their operand {n}.'
};

// XLA writes an operand's key as "bytes accessed" + n + shape index ("bytes
// accessed0{}", "utilization2{1,0}"); some releases wrote "bytes accessed operand 0
// {}". The output's is "bytes accessedout{}" ("bytes accessed output {}").
const INDEX = '\\{(\\d+(?:, ?\\d+)*)?\\}';
const OPERAND_KEY = new RegExp(
  `^(bytes accessed|utilization)(?: operand )?(\\d{1,9}) ?${INDEX}$`
);
const OUTPUT_KEY = new RegExp(`^bytes accessed ?out(?:put)? ?${INDEX}$`);

/** Table order: headline figures, then per-operand ones by number. */
const RANK = [
  'flops',
  'transcendentals',
  'bytes accessed',
  'optimal_seconds',
  'output',
  'operand bytes',
  'utilization',
  'operand utilization',
  'reserved0',
  'reserved1'
];

interface IParsed {
  rank: string;
  family: IFamily;
  n: number | null;
  index: number[];
}

function parse(key: string): IParsed | null {
  if (Object.prototype.hasOwnProperty.call(FIXED, key)) {
    return { rank: key, family: FIXED[key], n: null, index: [] };
  }
  let m = OPERAND_KEY.exec(key);
  if (m) {
    const bytes = m[1] === 'bytes accessed';
    return {
      rank: bytes ? 'operand bytes' : 'operand utilization',
      family: bytes ? OPERAND_BYTES : UTILIZATION,
      n: Number(m[2]),
      index: shapeIndex(m[3])
    };
  }
  m = OUTPUT_KEY.exec(key);
  if (m) {
    return {
      rank: 'output',
      family: OUTPUT_BYTES,
      n: null,
      index: shapeIndex(m[1])
    };
  }
  return null;
}

function shapeIndex(text: string | undefined): number[] {
  return text ? text.split(',').map(Number) : [];
}

function fill(
  family: IFamily,
  n: number | string | null,
  index: number[]
): [string, string] {
  const where = `{${index.join(',')}}`;
  const fields: { [k: string]: string } = {
    n: String(n),
    part: index.length ? `, tuple element ${where}` : '',
    part_of: index.length ? ` (tuple element ${where})` : ''
  };
  const put = (template: string) =>
    template.replace(
      /\{(n|part|part_of)\}/g,
      (_, name: string) => fields[name]
    );
  return [put(family.label), put(family.explanation)];
}

/** The name of one key of a cost analysis (any string: an unknown key names itself). */
export function describeCost(key: string): ICostName {
  const parsed = parse(key);
  if (!parsed) {
    return {
      key,
      label: key,
      unit: '',
      explanation:
        "A figure of XLA's cost analysis that Olympus has no name for; it is shown under " +
        "XLA's own key.",
      family: key,
      known: false
    };
  }
  const [label, explanation] = fill(parsed.family, parsed.n, parsed.index);
  return {
    key,
    label,
    unit: parsed.family.unit,
    explanation,
    family: fill(parsed.family, 'N', [])[0],
    known: true
  };
}

/** Compares keys in table order (unknown keys last, by name). */
export function compareCostKeys(a: string, b: string): number {
  const pa = parse(a);
  const pb = parse(b);
  const rank = (p: IParsed | null) => (p ? RANK.indexOf(p.rank) : RANK.length);
  const num = (p: IParsed | null) => (p && p.n !== null ? p.n : -1);
  const byIndex = (x: number[], y: number[]) => {
    for (let i = 0; i < Math.min(x.length, y.length); i++) {
      if (x[i] !== y[i]) {
        return x[i] - y[i];
      }
    }
    return x.length - y.length;
  };
  return (
    rank(pa) - rank(pb) ||
    num(pa) - num(pb) ||
    byIndex(pa?.index ?? [], pb?.index ?? []) ||
    (a < b ? -1 : a > b ? 1 : 0)
  );
}

/**
 * `[family, explanation]` once per kind of key among `keys`, in table order: the
 * legend under the table (that figures are added over all instructions is said once,
 * in `STAGES_NOTE`).
 */
export function costLegend(keys: string[]): [string, string][] {
  const seen = new Map<string, string>();
  for (const key of [...keys].sort(compareCostKeys)) {
    const parsed = parse(key);
    if (parsed) {
      const [label, explanation] = fill(parsed.family, 'N', []);
      if (!seen.has(label)) {
        seen.set(
          label,
          explanation.endsWith(PER_INSTRUCTION)
            ? explanation.slice(0, -PER_INSTRUCTION.length)
            : explanation
        );
      }
    }
  }
  return [...seen];
}

// -- values with units -----------------------------------------------------------

const SI: [number, string][] = [
  [1e15, 'P'],
  [1e12, 'T'],
  [1e9, 'G'],
  [1e6, 'M'],
  [1e3, 'k']
];
const BINARY: [number, string][] = [
  [2 ** 40, 'TiB'],
  [2 ** 30, 'GiB'],
  [2 ** 20, 'MiB'],
  [2 ** 10, 'KiB']
];

/** Like Python's `.3g`: `2` for 2.00, `1.23` for 1.234. */
function g3(v: number): string {
  return String(Number(v.toPrecision(3)));
}

function plain(v: number): string {
  return Number.isInteger(v)
    ? v.toLocaleString('en-US')
    : v.toLocaleString('en-US', { maximumSignificantDigits: 4 });
}

function seconds(v: number): string {
  const steps: [number, string][] = [
    [1, 's'],
    [1e-3, 'ms'],
    [1e-6, 'µs'],
    [1e-9, 'ns']
  ];
  for (const [size, unit] of steps) {
    if (Math.abs(v) >= size) {
      return `${g3(v / size)} ${unit}`;
    }
  }
  return v === 0 ? '0 s' : `${g3(v)} s`;
}

/**
 * A figure with its unit, large ones also in short form: `1.2 MiB (1,258,291 B)`,
 * `192 flops`, `3.2 µs`; `—` for none.
 */
export function formatCost(
  value: number | null | undefined,
  unit: string
): string {
  if (value === null || value === undefined) {
    return '—';
  }
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    return String(value);
  }
  if (unit === 'seconds') {
    return seconds(value);
  }
  if (unit === 'bytes') {
    const step = BINARY.find(([size]) => Math.abs(value) >= size);
    return step
      ? `${(value / step[0]).toFixed(1)} ${step[1]} (${plain(value)} B)`
      : `${plain(value)} B`;
  }
  if (unit === 'flops' || unit === 'ops') {
    const step =
      Math.abs(value) >= 1e6
        ? SI.find(([size]) => Math.abs(value) >= size)
        : undefined;
    return `${plain(value)} ${unit}${step ? ` (${g3(value / step[0])} ${step[1]})` : ''}`;
  }
  return plain(value);
}
