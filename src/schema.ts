/**
 * The check of a report bundle against the published schema
 * (`olympus_jupyter/report/bundle.schema.json`, JSON Schema draft-07: types, sizes
 * and the form of every string that is decoded), the one Python applies
 * (`olympus_jupyter.report.validate.check_bundle`). The schema is compiled to plain
 * functions at build time (`scripts/build-validator.mjs`): nothing is compiled or
 * evaluated when a report renders.
 *
 * What the schema cannot express (op indices against their stage, a stage table
 * against `stages`) is checked by the readers in `model.ts` after this.
 */
import validateBundle, { ISchemaError } from './bundle_validator';

/** No bundle Olympus writes nests deeper than this (as `validate.MAX_DEPTH` in Python). */
export const MAX_DEPTH = 32;

/** The longest JSON path or key quoted in a message. */
const QUOTE_AT_MOST = 120;

/**
 * Why `data` is not a bundle the schema allows, in one sentence naming the field by
 * its JSON path (`/stage_table/2/name: must match pattern ...`), or null when it is.
 * `at` is the path of the bundle in a larger document (`/before` in a diff).
 */
export function schemaProblem(data: unknown, at = ''): string | null {
  const deep = tooDeep(data);
  if (deep !== null) {
    return refusal(at + deep, `nested deeper than ${MAX_DEPTH} levels`);
  }
  if (validateBundle(data)) {
    return null;
  }
  const errors = validateBundle.errors ?? [];
  const error = mostTelling(errors);
  if (!error) {
    return refusal(at, 'it does not follow the schema');
  }
  // A key that breaks a `propertyNames` rule is named by that rule's error (or by
  // the error itself, where the rule was inlined).
  const key =
    error.propertyName ??
    errors.find(
      e =>
        e.keyword === 'propertyNames' && e.instancePath === error.instancePath
    )?.params.propertyName;
  const what = describe(error, data);
  return refusal(
    at + error.instancePath,
    typeof key === 'string'
      ? `property name ${JSON.stringify(shorten(key))} ${what}`
      : what
  );
}

function refusal(path: string, what: string): string {
  return `Not a readable Olympus report: ${shorten(path) || '(top level)'}: ${what}.`;
}

function shorten(text: string): string {
  return text.length > QUOTE_AT_MOST
    ? `${text.slice(0, QUOTE_AT_MOST)}…`
    : text;
}

/** The first container nested deeper than `MAX_DEPTH`, as a JSON path, or null. */
function tooDeep(data: unknown): string | null {
  const stack: Array<[unknown, number, string]> = [[data, 0, '']];
  while (stack.length) {
    const [node, depth, where] = stack.pop()!;
    if (depth > MAX_DEPTH) {
      return where;
    }
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const item = node[i];
        if (typeof item === 'object' && item !== null) {
          stack.push([item, depth + 1, `${where}/${i}`]);
        }
      }
    } else if (typeof node === 'object' && node !== null) {
      for (const [key, item] of Object.entries(node)) {
        if (typeof item === 'object' && item !== null) {
          stack.push([item, depth + 1, `${where}/${pointerKey(key)}`]);
        }
      }
    }
  }
  return null;
}

function pointerKey(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Rules that only say that one of their alternatives failed. */
const COMBINATORS = new Set(['oneOf', 'anyOf', 'propertyNames']);

/**
 * The error that says most about what is wrong: the deepest, and not the summary of
 * a `oneOf` nor the "must be null" of an optional field's null alternative.
 */
function mostTelling(errors: ISchemaError[]): ISchemaError | null {
  let best: ISchemaError | null = null;
  let bestScore = -Infinity;
  for (const e of errors) {
    const depth = e.instancePath.split('/').length;
    const summary = COMBINATORS.has(e.keyword) ? 1 : 0;
    const nullAlternative =
      e.keyword === 'type' && e.params.type === 'null' ? 1 : 0;
    const score = depth * 4 - summary * 2 - nullAlternative;
    if (score > bestScore) {
      best = e;
      bestScore = score;
    }
  }
  return best;
}

/** What the error says, in a few words, without the (maybe huge) value itself. */
function describe(error: ISchemaError, data: unknown): string {
  const p = error.params;
  switch (error.keyword) {
    case 'type':
      return `must be ${p.type} (got ${jsonType(valueAt(data, error.instancePath))})`;
    case 'enum':
      return `must be one of ${(p.allowedValues as unknown[]).map(v => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(p.allowedValue)}`;
    case 'propertyNames':
      return 'is not allowed here';
    default:
      return (
        error.message ??
        `breaks the schema's ${JSON.stringify(error.keyword)} rule`
      );
  }
}

function jsonType(v: unknown): string {
  if (v === null) {
    return 'null';
  }
  if (Array.isArray(v)) {
    return 'array';
  }
  if (typeof v === 'number') {
    return Number.isInteger(v) ? 'integer' : 'number';
  }
  return typeof v;
}

/** The value at a JSON Pointer in `data` (undefined when there is none). */
function valueAt(data: unknown, pointer: string): unknown {
  let node: unknown = data;
  for (const part of pointer.split('/').slice(1)) {
    if (typeof node !== 'object' || node === null) {
      return undefined;
    }
    const key = part.replace(/~1/g, '/').replace(/~0/g, '~');
    node = Object.prototype.hasOwnProperty.call(node, key)
      ? (node as Record<string, unknown>)[key]
      : undefined;
  }
  return node;
}
