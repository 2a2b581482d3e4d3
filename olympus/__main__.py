"""``python -m olympus demo``: each stage of the spec's example, printed in the terminal."""

import argparse
import sys

import olympus


def demo() -> None:
    def f(x, y):
        return 2 * x + y

    traced = olympus.jit(f).trace(3, 4)
    lowered = traced.lower()
    compiled = lowered.compile()
    sections = [
        ("1. trace: olympuspr", str(traced.olympuspr)),
        ("2. lower: StableHLO", lowered.as_text()),
        ("3. compile: optimized HLO", compiled.as_text()),
        ("   cost", repr(compiled.cost_analysis())),
        ("   memory", repr(compiled.memory_analysis())),
        ("4. execute: compiled(3, 4)", repr(compiled(3, 4))),
    ]
    for title, body in sections:
        print(f"== {title}\n{body.rstrip()}\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m olympus", description="Olympus command line.")
    parser.add_argument("command", choices=["demo"], help="demo: print each stage of an example")
    parser.parse_args(argv)
    demo()
    return 0


if __name__ == "__main__":
    sys.exit(main())
