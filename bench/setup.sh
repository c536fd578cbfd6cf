#!/usr/bin/env bash
# Install the benchmark peers: Python barecat 0.3.1 (PyPI, in .venv), GNU tar,
# bsdtar, Info-ZIP zip/unzip, GNU time (for peak RSS); and build our release binaries.
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
command -v bsdtar >/dev/null || need+=(libarchive-tools)
command -v zip >/dev/null || need+=(zip)
command -v unzip >/dev/null || need+=(unzip)
[ -x /usr/bin/time ] || need+=(time)
if [ ${#need[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi
venv="$PWD/.venv"
if ! "$venv/bin/python" -c 'import importlib.metadata as m, sys; sys.exit(m.version("barecat") != "0.3.1")' 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet "barecat==0.3.1"
fi
cargo build --release --quiet
echo "peers ready: $("$venv/bin/barecat" --help >/dev/null && echo 'python barecat 0.3.1'), $(tar --version | head -1), $(bsdtar --version), $(zip -v | sed -n 2p | xargs)"
