#!/usr/bin/env bash
# Run the whole test suite.
#
# Creates (once) a Python venv in .venv with barecat==0.3.1 from PyPI for the
# interop tests, then runs every test. Extra arguments go to `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."

venv="$(realpath -m "${BARECAT_VENV:-$PWD/.venv}")"
if ! "$venv/bin/python" -c 'import importlib.metadata as m, sys; sys.exit(m.version("barecat") != "0.3.1")' 2>/dev/null; then
    echo "setting up $venv with barecat==0.3.1 from PyPI" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet "barecat==0.3.1"
fi
export BARECAT_PYTHON="$venv/bin/python"

cargo test --all-targets "$@"
