#!/usr/bin/env bash
# make-venv.sh DIR PYTHON: a virtual environment with pip at DIR, made with PYTHON,
# once. Debian and Ubuntu leave Python's ensurepip out of python3 (it is in the
# python3-venv package), so `python3 -m venv` fails there: then the environment is
# made without pip and pip is fetched from PyPI (its wheel, checked against PyPI's
# SHA-256, installs itself), so that a stock system needs nothing installed by hand. Nothing outside DIR is changed.
set -euo pipefail
dir=$1 python=${2:-}
say() { printf '== %s\n' "$*" >&2; }

if [ -x "$dir/bin/python" ] && "$dir/bin/python" -m pip --version >/dev/null 2>&1; then
    exit 0
fi
if [ -z "$python" ]; then
    echo "run.sh: no python3 found; install Python 3.11 or later." >&2
    exit 1
fi
say "creating $dir with $("$python" --version 2>&1)"
error=$(mktemp)
trap 'rm -f "$error"' EXIT
if ! "$python" -m venv "$dir" >/dev/null 2>"$error"; then
    rm -rf "$dir"
    if ! "$python" -m venv --without-pip "$dir" >&2; then
        cat "$error" >&2
        echo "run.sh: $python cannot make a virtual environment (above: why)." >&2
        exit 1
    fi
    say "this Python has no ensurepip (Debian/Ubuntu without python3-venv): fetching pip's wheel from PyPI"
    "$dir/bin/python" - <<'PY' >&2
# The newest pip wheel from PyPI, checked against PyPI's SHA-256, then pip installs
# itself from it (a wheel of pip runs as `python pip.whl/pip`).
import hashlib, json, os, subprocess, sys, tempfile, urllib.parse, urllib.request
INDEX = "https://pypi.org/pypi/pip/json"
try:
    with urllib.request.urlopen(INDEX, timeout=60) as r:
        files = json.load(r)["urls"]
    wheel = next(f for f in files if f["filename"].endswith("-py3-none-any.whl"))
    with urllib.request.urlopen(urllib.parse.urljoin(INDEX, wheel["url"]), timeout=120) as r:
        data = r.read()
except (OSError, ValueError, KeyError, StopIteration) as e:
    sys.exit(f"run.sh: could not fetch pip from PyPI ({e}); install python3-venv "
             f"(apt-get install python3-venv), or make a virtual environment and "
             f"activate it, then run ./run.sh again.")
if hashlib.sha256(data).hexdigest() != wheel["digests"]["sha256"]:
    sys.exit(f"run.sh: {wheel['filename']} from PyPI does not match its SHA-256; not installed.")
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, wheel["filename"])
    with open(path, "wb") as f:
        f.write(data)
    subprocess.run([sys.executable, os.path.join(path, "pip"), "install", "-q",
                    "--no-index", "--no-warn-script-location", path], check=True)
PY
fi
"$dir/bin/python" -m pip install -q --upgrade pip >&2
