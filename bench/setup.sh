#!/usr/bin/env bash
# Install the benchmark peers: Python barecat 0.3.1 (PyPI, in .venv), GNU tar,
# bsdtar, Info-ZIP zip/unzip, GNU time (for peak RSS), barecat-cython 0.0.2, curl, nginx,
# ratarmount with fsspec (bench/remote.py); and build our
# release binaries and the Python module barecat_rs (into .venv).
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
command -v bsdtar >/dev/null || need+=(libarchive-tools)
command -v zip >/dev/null || need+=(zip)
command -v unzip >/dev/null || need+=(unzip)
[ -x /usr/bin/time ] || need+=(time)
command -v curl >/dev/null || need+=(curl)         # bench/remote.py
command -v nginx >/dev/null || need+=(nginx-light)  # bench/remote.py: the loopback HTTP server
command -v fusermount3 >/dev/null || need+=(fuse3)  # bench/remote.py: ratarmount
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
# The Python module (release build) and the peers of bench/python.py.
"$venv/bin/pip" install --quiet "maturin>=1.16,<2"
"$venv/bin/pip" install --quiet "barecat-cython==0.0.2" ||
    echo "setup.sh: barecat-cython 0.0.2 does not install here; bench/python.py leaves it out" >&2
(cd python && VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" "$venv/bin/maturin" develop --release -q)
# The peer of bench/remote.py: ratarmount over fsspec HTTP.
"$venv/bin/pip" install --quiet "ratarmount>=1,<2" fsspec aiohttp ||
    echo "setup.sh: ratarmount does not install here; bench/remote.py leaves it out" >&2
echo "peers ready: $("$venv/bin/barecat" --help >/dev/null && echo 'python barecat 0.3.1'), $(tar --version | head -1), $(bsdtar --version), $(zip -v | sed -n 2p | xargs)"
