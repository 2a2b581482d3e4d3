/**
 * XLA HLO text (`lowered.as_text('hlo')`, `compiled.as_text()`), as a CodeMirror
 * stream tokenizer. Token classes mirror `HLOLexer` in olympus_jupyter/highlight/lexers.py:
 * `HloModule`, `ENTRY`, `ROOT` and the source-table headings are keywords; opcodes
 * are op names; shapes with layouts (`f32[3,4]{1,0}`) are types; instructions
 * (`%add.1`) are values; computations (headers, `calls=`) are functions;
 * attribute names (`metadata`, `dimensions`) are attributes; `/*index=5*\/` is a
 * comment.
 *
 *     ROOT %add.1 = f32[3]{0} add(%x, %y), metadata={op_name="f"}
 */
import {
  StreamLanguage,
  StreamParser,
  StringStream
} from '@codemirror/language';
import { TOKEN, matchString } from './tokens';

/** Instruction and computation names: `add.1`, `get-tuple-element.3`, `%fused_computation`. */
const NAME = /^%?[a-zA-Z_][\w.]*(?:-[\w.]+)*/;
/**
 * A value an operand names: an instruction, or an element of the tuple one gives,
 * `%param#0` (the modules XLA from jaxlib 0.12 dumps after each pass print no
 * get-tuple-element); `#N` repeated too.
 */
const VALUE = /^%?[a-zA-Z_][\w.]*(?:-[\w.]+)*(?:#\d+)*/;
/** A shape: element type, dimensions, layout (`f32[3,4]{1,0:T(8,128)}`). */
const SHAPE =
  /^(?:pred|token|opaque|bf16|tf32|c64|c128|[suf]\d+(?:e\d+m\d+\w*)?)\[[^\]\n]*\](?:\{[^{}\n]*\})?/;
/** Attributes whose value names a computation. */
const CALLS =
  /^(?:to_apply|calls|condition|body|true_computation|false_computation|scatter|select|comparator)(?==)/;
const VALUE_WORD = /^(?:true|false|inf|nan)$/;

interface IState {
  /** Depth of the operand list `add(...)`. */
  operands: number;
  /** What the previous token promised: a computation name after `calls=`. */
  expect: '' | 'function' | 'functions' | 'brace' | 'operands' | 'colon';
  /** Inside `branch_computations={...}`. */
  computations: boolean;
}

function number(stream: StringStream): boolean {
  return !!(
    stream.match(/^\d+(?:_\d+)?(?:x\d+(?:_\d+)?)+\b/) ||
    stream.match(/^\d+_\d+\b/) ||
    stream.match(/^-?0[xX][0-9a-fA-F]+\b/) ||
    stream.match(/^-?(?:\d+\.\d*(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+)/) ||
    stream.match(/^-?(?:inf|nan)\b/) ||
    stream.match(/^-?\d+\b/)
  );
}

export const hloParser: StreamParser<IState> = {
  name: 'hlo',
  startState: () => ({ operands: 0, expect: '', computations: false }),
  copyState: s => ({ ...s }),
  token(stream, state) {
    if (stream.sol()) {
      state.operands = 0;
      state.expect = '';
      // Headers and instructions start lines: `ENTRY %main`, `%fused (p: f32[]) -> f32[] {`.
      if (
        stream.match(/^(?:FileNames|FunctionNames|FileLocations|StackFrames)\b/)
      ) {
        return TOKEN.keyword;
      }
      if (stream.match(/^(?:HloModule|ENTRY)\b/)) {
        state.expect = 'function';
        return TOKEN.keyword;
      }
      if (stream.match(/^%?[a-zA-Z_][\w.]*(?:-[\w.]+)*(?=\s+[({])/)) {
        return TOKEN.function;
      }
    }
    if (stream.eatSpace()) {
      return null;
    }
    if (state.expect === 'function' && stream.match(NAME)) {
      state.expect = '';
      return TOKEN.function;
    }
    if (state.expect === 'colon' && stream.eat(':')) {
      state.expect = '';
      return TOKEN.punctuation;
    }
    if (stream.match(/^\/\*.*?\*\//) || stream.match(/^\/\/.*/)) {
      return TOKEN.comment;
    }
    if (state.computations) {
      if (stream.eat('}')) {
        state.computations = false;
        return TOKEN.punctuation;
      }
      if (stream.match(NAME)) {
        return TOKEN.function;
      }
      stream.next();
      return TOKEN.punctuation;
    }
    if (stream.match(/^ROOT\b/)) {
      return TOKEN.keyword;
    }
    if (matchString(stream)) {
      return TOKEN.string;
    }
    if (stream.match(SHAPE)) {
      return TOKEN.type;
    }
    if (state.operands > 0) {
      if (stream.eat(')')) {
        state.operands--;
        return TOKEN.punctuation;
      }
      if (stream.eat('(')) {
        state.operands++;
        return TOKEN.punctuation;
      }
      if (number(stream)) {
        return TOKEN.number;
      }
      const operand = stream.match(VALUE, false) as RegExpMatchArray | null;
      if (operand && !VALUE_WORD.test(operand[0])) {
        stream.pos += operand[0].length;
        return TOKEN.variable;
      }
    }
    // `%add.1 = ...` and `add.1 = ...` name instructions; `name=value` is an attribute.
    const name = stream.match(
      /^%?[a-zA-Z_][\w.]*(?:-[\w.]+)*(?=\s*=(?!=))/,
      false
    ) as RegExpMatchArray | null;
    if (name) {
      const w = name[0];
      stream.pos += w.length;
      const before = stream.string.slice(0, stream.start);
      if (/^\s*(?:ROOT\s+)?$/.test(before) || w.startsWith('%')) {
        return TOKEN.variable; // an instruction's name, at the start of its line
      }
      if (/^\s+=/.test(stream.string.slice(stream.pos))) {
        return null; // `{index = 0}`, `{mesh = #sdy.mesh<...>}`
      }
      if (CALLS.test(w + '=')) {
        state.expect = 'function';
      } else if (/^(?:branch|called)_computations$/.test(w)) {
        state.expect = 'functions';
      } else if (VALUE_WORD.test(w)) {
        return TOKEN.constant;
      }
      return TOKEN.attribute;
    }
    if (stream.eat('=')) {
      if (state.expect === 'functions') {
        state.expect = 'brace';
      }
      return TOKEN.operator;
    }
    if (state.expect === 'brace' && stream.eat('{')) {
      state.expect = '';
      state.computations = true;
      return TOKEN.punctuation;
    }
    // An opcode and its operands: `add(%x, %y)`, `get-tuple-element(%t)`.
    if (stream.match(/^[a-z][\w.]*(?:-[\w.]+)*(?=\()/)) {
      state.expect = 'operands';
      return TOKEN.op;
    }
    if (stream.eat('(')) {
      if (state.expect === 'operands') {
        state.expect = '';
        state.operands = 1;
      }
      return TOKEN.punctuation;
    }
    if (stream.match(/^%[a-zA-Z_][\w.]*(?:-[\w.]+)*(?:#\d+)*/)) {
      return TOKEN.variable;
    }
    if (stream.match(/^k[A-Z]\w*/)) {
      return TOKEN.constant;
    }
    // Parameters in a computation's header: `(param_0: f32[3])`.
    if (stream.match(/^[a-zA-Z_][\w.]*(?:-[\w.]+)*(?=:)/)) {
      state.expect = 'colon';
      return TOKEN.variable;
    }
    if (stream.match(/^(?:true|false)\b/)) {
      return TOKEN.constant;
    }
    if (number(stream)) {
      return TOKEN.number;
    }
    if (stream.match(/^[A-Z][A-Z0-9_]+\b/)) {
      return TOKEN.constant;
    }
    if (stream.match(/^@[\w.-]+/)) {
      return TOKEN.function;
    }
    if (stream.match(/^#[a-zA-Z_][\w.]*/)) {
      return TOKEN.attribute;
    }
    if (stream.match(/^(?:->|<=|[:*+?-])/)) {
      return TOKEN.operator;
    }
    if (stream.match(/^[(){}[\]<>,.]/)) {
      return TOKEN.punctuation;
    }
    if (stream.match(/^[a-zA-Z_][\w.]*(?:-[\w.]+)*/)) {
      return null;
    }
    stream.next();
    return null;
  },
  languageData: { commentTokens: { block: { open: '/*', close: '*/' } } }
};

export const hlo = StreamLanguage.define(hloParser);
