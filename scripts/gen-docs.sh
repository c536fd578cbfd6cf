#!/usr/bin/env bash
# Regenerate the man pages (man/) and shell completions (completions/) from the clap
# definitions. Run it after changing any command's options or help; the test suite
# (tests/it/docs/man.rs) fails when the committed files are out of date.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --quiet --bin barecat -- --generate-docs .
