/**
 * Python's number formats in TypeScript: `format(v, '.3g')`, `format(v, ',.4g')`,
 * `format(v, '.1f')`, `format(v, ',')`, digit for digit (ties to even, `1e+03`,
 * `inf`), so that the view writes a figure as the text and static HTML of the same
 * report do (`olympus_jupyter/report/cost_names.py`; tests/test_view_tables.py runs
 * both on the same values). JavaScript's own (`toPrecision`, `toFixed`,
 * `toLocaleString`) round ties up and write `1000` and `Infinity`.
 *
 *     formatG(1234.5, 3)        // '1.23e+03'
 *     formatG(123.25, 4, true)  // '123.2'
 *     formatF(1.25, 1)          // '1.2'
 *     formatF(1234567, 0, true) // '1,234,567'
 */

/** `'inf'`, `'-inf'` or `'nan'` for a number that is not finite, as Python's `str`. */
export function pythonNonFinite(v: number): string {
  return Number.isNaN(v) ? 'nan' : v > 0 ? 'inf' : '-inf';
}

/**
 * The decimal digits of |v| rounded, ties to even, to `keep(exponent)` significant
 * digits (`exponent`: that of its first digit): `[digits, power]`, meaning
 * `digits × 10^power`. `toExponential(100)` gives |v|'s exact decimal expansion
 * as far as a tie can reach (a double on a tie has few digits).
 */
function rounded(
  v: number,
  keep: (exponent: number) => number
): [string, number] {
  const text = Math.abs(v).toExponential(100);
  const e = text.indexOf('e');
  let digits = text[0] + text.slice(2, e);
  let exponent = Number(text.slice(e + 1));
  let n = keep(exponent);
  if (n < 0) {
    digits = '0'.repeat(-n) + digits;
    exponent -= n;
    n = 0;
  }
  const kept = digits.slice(0, n);
  const rest = digits.slice(n);
  const power = exponent - n + 1;
  const beyond = /[1-9]/.test(rest.slice(1));
  const last = kept ? Number(kept[kept.length - 1]) : 0;
  const up = rest[0] > '5' || (rest[0] === '5' && (beyond || last % 2 === 1));
  return [up ? increment(kept) : kept || '0', power];
}

/** A string of decimal digits plus one: `'129'` → `'130'`, `'99'` → `'100'`, `''` → `'1'`. */
function increment(digits: string): string {
  const out = digits.split('');
  for (let k = out.length - 1; k >= 0; k--) {
    if (out[k] !== '9') {
      out[k] = String(Number(out[k]) + 1);
      return out.join('');
    }
    out[k] = '0';
  }
  return '1' + out.join('');
}

function sign(v: number): string {
  return v < 0 || Object.is(v, -0) ? '-' : '';
}

function grouped(integer: string): string {
  return integer.replace(/\B(?=(\d{3})+$)/g, ',');
}

/** `digits × 10^-decimals` written out: `('125', 1)` → `'12.5'`, `('5', 2)` → `'0.05'`. */
function fixed(digits: string, decimals: number, grouping: boolean): string {
  const padded = digits.padStart(decimals + 1, '0');
  const integer = padded.slice(0, padded.length - decimals);
  const fraction = padded.slice(padded.length - decimals);
  const whole = grouping ? grouped(integer) : integer;
  return decimals > 0 ? `${whole}.${fraction}` : whole;
}

/** Python's `format(v, f'.{decimals}f')` (with `grouping`: `',.{decimals}f'`). */
export function formatF(v: number, decimals: number, grouping = false): string {
  if (!Number.isFinite(v)) {
    return pythonNonFinite(v);
  }
  const [digits] = rounded(v, exponent => exponent + 1 + decimals);
  return sign(v) + fixed(digits, decimals, grouping);
}

/** Python's `format(v, f'.{precision}g')` (with `grouping`: `',.{precision}g'`). */
export function formatG(
  v: number,
  precision: number,
  grouping = false
): string {
  if (!Number.isFinite(v)) {
    return pythonNonFinite(v);
  }
  const p = Math.max(1, precision);
  if (v === 0) {
    return sign(v) + '0';
  }
  let [digits, power] = rounded(v, () => p);
  if (digits.length > p) {
    digits = digits.slice(0, p); // 9.995 → 10.0: one digit more, one power up
    power += 1;
  }
  const exponent = power + p - 1;
  if (-4 <= exponent && exponent < p) {
    const text = fixed(digits, p - 1 - exponent, grouping);
    return sign(v) + (text.includes('.') ? text.replace(/\.?0+$/, '') : text);
  }
  const mantissa = (digits[0] + '.' + digits.slice(1)).replace(/\.?0+$/, '');
  const e = String(Math.abs(exponent)).padStart(2, '0');
  return `${sign(v)}${mantissa}e${exponent < 0 ? '-' : '+'}${e}`;
}
