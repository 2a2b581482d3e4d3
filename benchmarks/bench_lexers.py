"""Benchmark: the Pygments lexers of ``olympus_jupyter.highlight.lexers`` on a 24-layer MLP.

Highlighting the stage texts is part of building a report, so the lexers must be
fast. This stages a 24-layer MLP (width 512, tanh, bias) and times, per stage
text, lexing alone (``list(lexer.get_tokens(text))``), the whole
``pygments.highlight(text, lexer, HtmlFormatter(nowrap=True))``, and the report's
own highlighting (``olympus_jupyter.highlight.render``, without its cache), as medians.

    python benchmarks/bench_lexers.py [--repeats N] [--layers L] [--baseline PATH]

``--baseline PATH`` also times the lexers of another copy of ``lexers.py``
(say, the version before a change), interleaved round by round with the current
ones, and prints the speed-up.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time


def stage_texts(layers: int, width: int = 512, batch: int = 32) -> dict[str, tuple[str, str]]:
    """``{stage: (lexer alias, text)}`` for an MLP of ``layers`` layers."""
    import numpy as np

    import olympus
    import olympus.numpy as jnp

    def mlp(ps, x):
        for w, b in ps:
            x = jnp.tanh(x @ w + b)
        return x

    ps = [(np.ones((width, width), np.float32), np.ones(width, np.float32))] * layers
    x = np.ones((batch, width), np.float32)
    traced = olympus.jit(mlp).trace(ps, x)
    lowered = traced.lower()
    compiled = lowered.compile()
    return {
        "olympuspr": ("olympuspr", str(traced.olympuspr)),
        "stablehlo": ("stablehlo", lowered.as_text()),
        "hlo": ("hlo", lowered.as_text("hlo")),
        "compiled": ("hlo", compiled.as_text()),
    }


def load_lexers(path: str | None):
    """``{alias: lexer class}`` from ``olympus_jupyter.highlight.lexers`` or a file ``path``."""
    if path is None:
        from olympus_jupyter.highlight import lexers as module
    else:
        spec = importlib.util.spec_from_file_location("_baseline_lexers", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return {
        "olympuspr": module.OlympusprLexer,
        "stablehlo": module.StableHLOLexer,
        "hlo": module.HLOLexer,
    }


def _time(fn, number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--number", type=int, default=3, help="calls per timed round")
    parser.add_argument("--layers", type=int, default=24)
    parser.add_argument("--baseline", help="path of another lexers.py to compare with")
    opts = parser.parse_args(argv)

    from pygments import highlight
    from pygments.formatters import HtmlFormatter

    texts = stage_texts(opts.layers)
    variants = {"current": load_lexers(None)}
    if opts.baseline:
        variants["baseline"] = load_lexers(opts.baseline)

    def lex_fn(lexers, language, text):
        return lambda: list(lexers[language]().get_tokens(text))

    def html_fn(lexers, language, text):
        return lambda: highlight(text, lexers[language](), HtmlFormatter(nowrap=True))

    def report_fn(lexers, language, text):
        from olympus_jupyter.highlight import render as report_highlight

        def run():
            # The report's highlighter, with these lexers and without its caches.
            report_highlight.LEXERS.update(lexers)
            report_highlight._lexer.cache_clear()
            return report_highlight._highlight.__wrapped__(text, language)

        return run

    print(f"MLP: {opts.layers} layers; medians of {opts.repeats} rounds x {opts.number} calls")
    kinds = (("lex", lex_fn), ("html", html_fn), ("report", report_fn))
    totals = {(v, what): 0.0 for v in variants for what, _ in kinds}
    for stage, (language, text) in texts.items():
        for what, make in kinds:
            fns = {v: make(lexers, language, text) for v, lexers in variants.items()}
            for fn in fns.values():
                fn()  # warm up (regex compilation)
            samples = {v: [] for v in variants}
            for i in range(opts.repeats):
                order = list(fns) if i % 2 == 0 else list(fns)[::-1]
                for v in order:
                    samples[v].append(_time(fns[v], opts.number))
            medians = {v: statistics.median(s) for v, s in samples.items()}
            for v, m in medians.items():
                totals[v, what] += m
            line = (
                f"{stage:10s} {what:6s} ({len(text):7,d} chars): {medians['current'] * 1e3:7.2f} ms"
            )
            if "baseline" in medians:
                line += (
                    f"   baseline {medians['baseline'] * 1e3:7.2f} ms   "
                    f"speed-up {medians['baseline'] / medians['current']:.2f}x"
                )
            print(line)
    for what, _ in kinds:
        line = f"{'total':10s} {what:6s} {'':16s}: {totals['current', what] * 1e3:7.2f} ms"
        if opts.baseline:
            line += (
                f"   baseline {totals['baseline', what] * 1e3:7.2f} ms   speed-up "
                f"{totals['baseline', what] / totals['current', what]:.2f}x"
            )
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
