/**
 * The keys of XLA's cost analysis (`flops`, `bytes accessed0{}`, ...) as the report
 * names them: `olympus_jupyter/report/cost_names.py` writes each key's label, unit
 * and explanation, the legend and the notes on lowered and compiled figures into
 * the bundle (`analyses.cost`), and this view shows them; it names nothing itself.
 * A key the bundle does not name (an older bundle) is shown as itself.
 *
 *     costName(report, 'bytes accessed0{}').label  // 'bytes read from operand 0'
 */
import { ICostName, IReport } from './model';

/** The name of one key, from the bundle, or the key itself. */
export function costName(
  report: IReport,
  key: string
): ICostName & { key: string; known: boolean } {
  const name = report.analyses.cost.names.get(key);
  if (name) {
    return { ...name, key, known: name.label !== key };
  }
  return {
    key,
    label: key,
    unit: '',
    explanation: "A figure of XLA's cost analysis, under XLA's own key.",
    family: key,
    known: false
  };
}

/** The keys of both tables in the bundle's table order; keys it does not name last. */
export function costKeys(report: IReport): string[] {
  const { lowered, compiled, names } = report.analyses.cost;
  const keys = new Set([
    ...Object.keys(lowered ?? {}),
    ...Object.keys(compiled ?? {})
  ]);
  const named = [...names.keys()].filter(k => keys.has(k));
  const rest = [...keys].filter(k => !names.has(k)).sort();
  return [...named, ...rest];
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
