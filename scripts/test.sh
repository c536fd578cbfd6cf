#!/usr/bin/env bash
# Run the whole test suite on a fresh machine, installing what it needs first.
#
#   ./scripts/test.sh [CARGO TEST ARGS...]
#
# 1. Debian packages: every `apt` peer of tests/peers.txt whose program is missing,
#    and every `build` library pkg-config cannot find, is installed with apt-get
#    (through sudo when not root). Where that is impossible
#    (no apt-get, no root and no sudo, no network), a warning names what is missing
#    and the tests that need it are skipped, each with one line saying so.
# 2. Python: a venv (.venv, or $BARECAT_VENV) with every `pip` peer of
#    tests/peers.txt (Python barecat 0.3.1 from PyPI, ...). Reinstalled only when
#    tests/peers.txt changes.
# 3. The tests: cargo test of the library, tests/it and the examples.
# 4. The Python module barecat_rs (python/): built into the venv with maturin (again
#    only when its Rust sources changed), then its tests (pytest python/tests).
#
# Under CI=true a missing peer fails the tests that need it instead of skipping them.
set -euo pipefail
cd "$(dirname "$0")/.."

manifest=tests/peers.txt
warn() { echo "test.sh: $*" >&2; }

# --- 1. Debian packages ------------------------------------------------------------
missing=()
while read -r kind name install _; do
    [ "$kind" = apt ] || [ "$kind" = diag ] || continue
    command -v "$name" >/dev/null 2>&1 || missing+=("$install")
done < <(grep -v '^[[:space:]]*#' "$manifest" | grep -v '^[[:space:]]*$')
# `build` rows: libraries found with pkg-config (libarchive for the default build).
while read -r kind name install _; do
    [ "$kind" = build ] || continue
    { command -v pkg-config >/dev/null 2>&1 && pkg-config --exists "$name"; } ||
        missing+=("$install" pkg-config)
done < <(grep -v '^[[:space:]]*#' "$manifest" | grep -v '^[[:space:]]*$')
python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)

if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            sudo="sudo -n"
        else
            sudo=none
        fi
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        warn "no apt-get: cannot install ${missing[*]}; the tests that need them are skipped"
    elif [ "$sudo" = none ]; then
        warn "not root and no sudo: cannot install ${missing[*]}; the tests that need them are skipped"
    else
        warn "installing Debian packages: ${missing[*]}"
        if ! { $sudo apt-get update -qq &&
            $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }; then
            warn "apt-get failed: the tests that need ${missing[*]} are skipped"
        fi
    fi
fi

# --- 2. Python venv ----------------------------------------------------------------
venv="$(realpath -m "${BARECAT_VENV:-$PWD/.venv}")"
reqs=()
while read -r kind name install _; do
    [ "$kind" = pip ] && reqs+=("$install")
done < <(grep -v '^[[:space:]]*#' "$manifest" | grep -v '^[[:space:]]*$')
stamp="$venv/.peers-$(printf '%s\n' "${reqs[@]}" | sha256sum | cut -c1-16)"
if [ ! -e "$stamp" ]; then
    warn "setting up $venv with ${reqs[*]} from PyPI"
    if { [ -x "$venv/bin/python" ] || python3 -m venv "$venv"; } &&
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${reqs[@]}"; then
        rm -f "$venv"/.peers-*
        touch "$stamp"
    else
        warn "could not install ${reqs[*]} into $venv: the tests that need them are skipped"
    fi
fi
export BARECAT_PYTHON="$venv/bin/python"

# --- 3. The tests ------------------------------------------------------------------
ci=false
case "${CI:-}" in "" | 0 | false) ;; *) ci=true ;; esac
# A one-off build (CI) gains nothing from incremental artefacts but their disk space.
if [ "$ci" = true ]; then export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"; fi
# The library's unit tests, the one integration-test binary and the examples. The
# programs in src/bin only parse arguments into src/cli (tested through the library
# and by running them): building each of them again as a test harness would link the
# whole crate 43 more times for no test.
cargo test --lib --test '*' --examples "$@"

# --- 4. The Python module and its tests --------------------------------------------
if [ -x "$venv/bin/maturin" ] && "$venv/bin/python" -c 'import pytest' 2>/dev/null; then
    src_hash=$(find Cargo.toml Cargo.lock src python/Cargo.toml python/pyproject.toml python/src \
        -type f -print0 | sort -z | xargs -0 cat | sha256sum | cut -c1-16)
    built="$venv/.barecat_rs-$src_hash"
    if [ ! -e "$built" ] || ! "$venv/bin/python" -c 'import barecat_rs' 2>/dev/null; then
        echo "test.sh: building the Python module barecat_rs into $venv" >&2
        (cd python && VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" "$venv/bin/maturin" develop -q)
        rm -f "$venv"/.barecat_rs-*
        touch "$built"
    fi
    "$venv/bin/python" -m pytest -q python/tests
elif [ "$ci" = true ]; then
    echo "test.sh: maturin or pytest missing from $venv: CI must run the Python module's tests" >&2
    exit 1
else
    echo "skipped python/tests: maturin or pytest is not installed in $venv (run ./scripts/test.sh with network access)" >&2
fi
