// Generated from olympus_jupyter/report/view_tables.py by
// `python -m olympus_jupyter.report.view_tables`: do not edit (the test
// tests/test_view_tables.py fails when this file differs from what it makes).

/** How many source colours there are (`olympus-src-0` ...). */
export const PALETTE_SIZE = 10;

/** Units of a size in short form, each 1024 of the one before. */
export const SIZE_UNITS: ReadonlyArray<string> = ['B', 'KiB', 'MiB', 'GiB'];

/** Binary prefixes of a size written out in full, largest first. */
export const BINARY_PREFIXES: ReadonlyArray<readonly [number, string]> = [
  [1099511627776, 'TiB'],
  [1073741824, 'GiB'],
  [1048576, 'MiB'],
  [1024, 'KiB']
];

/** Decimal prefixes of a count, largest first. */
export const SI_PREFIXES: ReadonlyArray<readonly [number, string]> = [
  [1000000000000000, 'P'],
  [1000000000000, 'T'],
  [1000000000, 'G'],
  [1000000, 'M'],
  [1000, 'k']
];

/** Units of a time in seconds, largest first. */
export const SECOND_UNITS: ReadonlyArray<readonly [number, string]> = [
  [1, 's'],
  [0.001, 'ms'],
  [1e-6, 'µs'],
  [1e-9, 'ns']
];
