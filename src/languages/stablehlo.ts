/**
 * StableHLO, the MLIR text `lowered.as_text()` prints, as a CodeMirror stream
 * tokenizer. Token classes mirror `StableHLOLexer` in olympus_jupyter/highlight/lexers.py:
 * structure words are keywords; operations (`stablehlo.add`, `"stablehlo.case"`,
 * `sdy.sharding_constraint`) are op names; `tensor<3x4xf32>`, `i32`,
 * `!stablehlo.token` are types; `%0`, `%arg0` are values; `@main` is a function;
 * attribute names and `#sdy.sharding<...>` are attributes; `LT` is a constant;
 * `loc(...)` and `#loc12 = loc(...)` are comments.
 *
 *     %1 = stablehlo.add %0, %arg0 : tensor<3xf32> loc(#loc3)
 */
import { StreamLanguage, StreamParser } from '@codemirror/language';
import { TOKEN, matchString } from './tokens';

const KEYWORDS =
  /^(?:attributes|public|private|nested|return|cond|do|applies|across|init|reducer|dense|dense_resource|array|sparse|unit)\b/;
const SCALAR_TYPE = /^(?:[su]?i\d+|f\d+|bf16|tf32|f\d+E\w+|index|none)\b/;
/** Words an operation's pattern would take that are something else. */
const NOT_AN_OP =
  /^(?:module|func\.func|attributes|public|private|nested|return|cond|do|applies|across|init|reducer|dense|dense_resource|array|sparse|unit|true|false|x|call|[su]?i\d+|f\d+|bf16|tf32|f\d+E\w+|index|none)$/;
const SUFFIX = /^[\w$.-]+/;

interface IState {
  /** Depth of `<...>` inside a type (`tensor<4x!quant.uniform<...>>`). */
  type: number;
  /** Depth of `(...)` inside `loc(...)`. */
  loc: number;
}

export const stablehloParser: StreamParser<IState> = {
  name: 'stablehlo',
  startState: () => ({ type: 0, loc: 0 }),
  copyState: s => ({ type: s.type, loc: s.loc }),
  token(stream, state) {
    if (state.loc > 0) {
      if (stream.match(/^[^()"]+/) || matchString(stream, false)) {
        return TOKEN.comment;
      }
      if (stream.eat(')')) {
        state.loc--;
      } else if (stream.eat('(')) {
        state.loc++;
      } else {
        stream.next();
      }
      return TOKEN.comment;
    }
    if (state.type > 0) {
      if (!stream.match(/^[^<>]+/)) {
        if (stream.eat('>')) {
          state.type--;
        } else {
          stream.next();
          state.type++;
        }
      }
      return TOKEN.type;
    }
    if (stream.eatSpace()) {
      return null;
    }
    if (stream.match(/^%[\w$.-]+(?:#\d+)?/)) {
      return TOKEN.variable;
    }
    if (stream.match(/^#loc\w*\s*=\s*loc\(/) || stream.match(/^loc\(/)) {
      state.loc = 1;
      return TOKEN.comment;
    }
    if (stream.match(/^#loc\w*/)) {
      return TOKEN.comment;
    }
    if (stream.match(/^(?:\{-#|#-\})/)) {
      return TOKEN.meta;
    }
    if (stream.match(/^\/\/.*/)) {
      return TOKEN.comment;
    }
    if (matchString(stream, false)) {
      // The generic form of an operation: `"stablehlo.case"(%0)`.
      return stream.peek() === '(' ? TOKEN.op : TOKEN.string;
    }
    if (stream.match(/^(?:tensor|memref|vector|tuple|complex)<[^<>]*>/)) {
      return TOKEN.type;
    }
    if (stream.match(/^(?:tensor|memref|vector|tuple|complex)</)) {
      state.type = 1;
      return TOKEN.type;
    }
    if (stream.match(/^(?:module|func\.func)\b/)) {
      return TOKEN.keyword;
    }
    // Attribute names: `dims = [0]`, `olympus.result_info = "..."`.
    if (stream.match(/^[a-zA-Z_][\w$]*(?:\.\w+)*(?=\s*=(?!=))/)) {
      return TOKEN.attribute;
    }
    const op = stream.match(
      /^[a-z_]\w*(?:\.\w+)+/,
      false
    ) as RegExpMatchArray | null;
    if (op && !NOT_AN_OP.test(op[0])) {
      stream.pos += op[0].length;
      return TOKEN.op;
    }
    if (stream.match(KEYWORDS)) {
      return TOKEN.keyword;
    }
    if (stream.match(/^(?:true|false)\b/)) {
      return TOKEN.constant;
    }
    if (
      stream.match(SCALAR_TYPE) ||
      stream.match(/^![a-zA-Z_][\w$]*(?:\.\w+)*/)
    ) {
      return TOKEN.type;
    }
    if (stream.eat('@')) {
      if (!matchString(stream, false)) {
        stream.match(SUFFIX);
      }
      return TOKEN.function;
    }
    if (stream.match(/^\^[\w$.-]+/)) {
      return TOKEN.label;
    }
    if (stream.match(/^#[a-zA-Z_][\w$]*(?:\.\w+)*/)) {
      return TOKEN.attribute;
    }
    if (stream.match(/^[A-Z][A-Z0-9_]*\b/)) {
      return TOKEN.constant;
    }
    // `contracting_dims = [1] x [0]`
    if (stream.match(/^x\b/)) {
      return TOKEN.operator;
    }
    if (
      stream.match(/^-?0[xX][0-9a-fA-F]+\b/) ||
      stream.match(/^-?(?:\d+\.\d*(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+)/) ||
      stream.match(/^-?\d+\b/)
    ) {
      return TOKEN.number;
    }
    if (stream.match(/^call\b/)) {
      return TOKEN.op;
    }
    if (stream.match(/^[a-zA-Z_][\w$]*/)) {
      return null;
    }
    if (stream.match(/^(?:->|<=|>=|[=:*+?-])/)) {
      return TOKEN.operator;
    }
    if (stream.match(/^[(){}[\]<>,.]/)) {
      return TOKEN.punctuation;
    }
    stream.next();
    return null;
  },
  languageData: { commentTokens: { line: '//' } }
};

export const stablehlo = StreamLanguage.define(stablehloParser);
