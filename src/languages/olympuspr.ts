/**
 * The olympuspr language (programs as `traced.olympuspr` prints them), as a
 * CodeMirror stream tokenizer. Token classes mirror `OlympusprLexer` in
 * olympus_jupyter/highlight/lexers.py: keywords `lambda`/`let`/`in`, primitives (op names),
 * variables (values) with their types, parameter names (attributes), numbers,
 * strings, and source information (`# f.py:2 (f)`) as comments.
 *
 *     { lambda ; a:f32[3]. let b:f32[3] = mul a 2.0:f32[] in (b,) }
 */
import {
  StreamLanguage,
  StreamParser,
  StringStream
} from '@codemirror/language';
import { TOKEN, matchNumber, matchString, atLineStart } from './tokens';

/** A primitive's name: `add`, `custom_jvp_call`, `scatter-add`. */
const PRIM = /^[a-zA-Z_][\w.]*(?:-[\w.]+)*/;
/** A value's type after `:`: `f32[3,4]`, `key<fry>[]`, `f32<host>[8@x]{V:x}`, `Ref{f32[3]}`, `Tok`. */
const TYPE =
  /^(?:[a-zA-Z_]\w*(?:<\w+>)?\[[^\]\n]*\](?:\{[^{}\n]*\})?|[A-Z]\w*\{[^{}\n]*\}|Tok\b)/;
/** NumPy dtype names, as parameters print them (`new_dtype=float32`). */
const DTYPE =
  /^(?:bool|u?int\d+|float\d+|bfloat16|complex\d+|float0|float\d+_e\w+)\b/;
const NOT_A_VARIABLE =
  /^(?:bool|u?int\d+|float\d+|bfloat16|complex\d+|float0|float\d+_e\w+|True|False|None|inf|nan|lambda|let|in)$/;
const NOT_A_PARAMETER =
  /^(?:bool|u?int\d+|float\d+|bfloat16|complex\d+|float0|float\d+_e\w+|True|False|None|inf|nan)$/;

type Context = 'params' | 'nested';

interface IState {
  /** Open parameter lists `[...]` and nested programs `{ lambda ... }`. */
  context: Context[];
  /** What the previous token promised: a type after `:`, a primitive after ` = `, a name after `let`. */
  expect: '' | 'type' | 'prim' | 'def';
}

function program(stream: StringStream, state: IState): string | null {
  if (stream.match(/^=(?=\s+[a-zA-Z_])/)) {
    state.expect = 'prim';
    return TOKEN.operator;
  }
  const word = stream.match(/^[a-zA-Z_]\w*/, false) as RegExpMatchArray | null;
  if (word) {
    const w = word[0];
    const before = stream.string.slice(0, stream.pos);
    const after = stream.string.slice(stream.pos + w.length);
    let keyword = false;
    if (w === 'lambda') {
      keyword = true;
    } else if (w === 'let') {
      keyword = /\. $/.test(before);
    } else if (w === 'in') {
      keyword = /^\s*\(/.test(after) || /\} $/.test(before);
    }
    stream.pos += w.length;
    if (keyword) {
      return TOKEN.keyword;
    }
    if (!NOT_A_VARIABLE.test(w)) {
      return TOKEN.variable;
    }
    if (DTYPE.test(w)) {
      return TOKEN.type;
    }
    if (w === 'True' || w === 'False' || w === 'None') {
      return TOKEN.constant;
    }
    if (w === 'inf' || w === 'nan') {
      return TOKEN.number;
    }
    return TOKEN.variable;
  }
  if (stream.eat(':')) {
    state.expect = 'type';
    return TOKEN.punctuation;
  }
  if (stream.eat('[')) {
    state.context.push('params');
    return TOKEN.punctuation;
  }
  const top = state.context[state.context.length - 1];
  if (top === 'nested' && stream.eat('}')) {
    state.context.pop();
    return TOKEN.punctuation;
  }
  if (stream.match(/^[{}\]().,;]+/)) {
    return TOKEN.punctuation;
  }
  const num = matchNumber(stream);
  if (num) {
    return num;
  }
  if (stream.eat(/[=*+-]/)) {
    return TOKEN.operator;
  }
  stream.next();
  return null;
}

function params(stream: StringStream, state: IState): string | null {
  if (stream.eat(']')) {
    state.context.pop();
    return TOKEN.punctuation;
  }
  const name = stream.match(
    /^[a-zA-Z_]\w*(?==)/,
    false
  ) as RegExpMatchArray | null;
  if (name && !NOT_A_PARAMETER.test(name[0])) {
    stream.pos += name[0].length;
    return TOKEN.attribute;
  }
  if (stream.match(/^\{(?=\s*lambda\b)/)) {
    state.context.push('nested');
    return TOKEN.punctuation;
  }
  if (stream.eat('[')) {
    state.context.push('params');
    return TOKEN.punctuation;
  }
  if (stream.eat(':')) {
    state.expect = 'type';
    return TOKEN.punctuation;
  }
  if (stream.match(/^[(){},;.@]+/)) {
    return TOKEN.punctuation;
  }
  const num = matchNumber(stream);
  if (num) {
    return num;
  }
  if (stream.match(DTYPE)) {
    return TOKEN.type;
  }
  if (stream.match(/^(?:True|False|None)\b/)) {
    return TOKEN.constant;
  }
  if (stream.match(/^[A-Z][A-Z0-9_]*\b/)) {
    return TOKEN.constant;
  }
  if (stream.match(/^[a-zA-Z_]\w*/)) {
    return null;
  }
  if (stream.eat(/[-+*/%<>=!?&|^~$\\`]/)) {
    return TOKEN.operator;
  }
  stream.next();
  return null;
}

export const olympusprParser: StreamParser<IState> = {
  name: 'olympuspr',
  startState: () => ({ context: [], expect: '' }),
  copyState: s => ({ context: s.context.slice(), expect: s.expect }),
  token(stream, state) {
    if (state.expect === 'type') {
      state.expect = '';
      if (stream.match(TYPE)) {
        return TOKEN.type;
      }
    }
    if (stream.eatSpace()) {
      return null;
    }
    const expect = state.expect;
    state.expect = '';
    if (expect === 'prim' && stream.match(PRIM)) {
      return TOKEN.op;
    }
    if (expect === 'def' && stream.match(PRIM)) {
      return TOKEN.function;
    }
    const top = state.context[state.context.length - 1];
    if (top !== 'params' && atLineStart(stream)) {
      // `let helper = { lambda ... } in` (a shared program), or the primitive of an
      // equation without outputs: `debug_print[...] a`.
      if (stream.match(/^let(?=\s+[a-zA-Z_][\w.]*(?:-[\w.]+)*\s+=)/)) {
        state.expect = 'def';
        return TOKEN.keyword;
      }
      if (stream.match(/^[a-zA-Z_][\w.]*(?:-[\w.]+)*(?=\[)/)) {
        return TOKEN.op;
      }
    }
    if (stream.match(/^#.*/)) {
      return TOKEN.comment;
    }
    if (matchString(stream)) {
      return TOKEN.string;
    }
    return top === 'params' ? params(stream, state) : program(stream, state);
  },
  languageData: { commentTokens: { line: '#' } }
};

export const olympuspr = StreamLanguage.define(olympusprParser);
