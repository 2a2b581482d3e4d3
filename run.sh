#!/usr/bin/env bash
# Install Olympus, then open JupyterLab on the tour notebook
# (or, with --headless, write a standalone HTML report with the CLI).
set -euo pipefail
cd "$(dirname "$0")"
python -m pip install -q -e ".[lab]"
if [ "${1:-}" = "--headless" ]; then
    out="${2:-report.html}"
    python -m olympus_jupyter demo -o "$out"
    echo "Open $out in any browser, or run: python -m olympus_jupyter report MODULE:FUNCTION --arg 'f32[16,16]' -o report.html"
else
    root_flag=()
    [ "$(id -u)" = 0 ] && root_flag=(--allow-root)
    exec jupyter lab "${root_flag[@]}" notebooks/01_stages.ipynb
fi
