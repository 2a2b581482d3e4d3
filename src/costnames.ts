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
import { formatF, formatG, pythonNonFinite } from './pyformat';
import { BINARY_PREFIXES, SECOND_UNITS, SI_PREFIXES } from './viewtables';

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
// The units come from `viewtables.ts`, generated from the Python package's
// `olympus_jupyter/report/view_tables.py`; `formatCost` and `formatNumber` write what
// `format_value` and `_number` in `olympus_jupyter/report/cost_names.py` write, which
// tests/test_view_tables.py checks by running both; `pyformat.ts` writes numbers
// as Python does.

/** Python's `.3g`: `2` for 2.00, `1.23` for 1.234, `1.02e+03` for 1024. */
function g3(v: number): string {
  return formatG(v, 3);
}

/** `1234` → `1,234`; `0.5` → `0.5` (four significant digits); missing → `—`. */
export function formatNumber(v: number | null | undefined): string {
  if (v === null || v === undefined || Number.isNaN(v)) {
    return '—';
  }
  return Number.isInteger(v) ? formatF(v, 0, true) : formatG(v, 4, true);
}

function seconds(v: number): string {
  for (const [size, unit] of SECOND_UNITS) {
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
  if (typeof value !== 'number') {
    return String(value);
  }
  if (!Number.isFinite(value)) {
    return pythonNonFinite(value);
  }
  if (unit === 'seconds') {
    return seconds(value);
  }
  if (unit === 'bytes') {
    const step = BINARY_PREFIXES.find(([size]) => Math.abs(value) >= size);
    return step
      ? `${formatF(value / step[0], 1)} ${step[1]} (${formatNumber(value)} B)`
      : `${formatNumber(value)} B`;
  }
  if (unit === 'flops' || unit === 'ops') {
    const step =
      Math.abs(value) >= 1e6
        ? SI_PREFIXES.find(([size]) => Math.abs(value) >= size)
        : undefined;
    return `${formatNumber(value)} ${unit}${step ? ` (${g3(value / step[0])} ${step[1]})` : ''}`;
  }
  return formatNumber(value);
}
