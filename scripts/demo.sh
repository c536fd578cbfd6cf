#!/usr/bin/env bash
# Build the tools and run the main job on the bundled sample (examples/sample, 25
# files): pack it into an archive with small shards, check the archive, look inside,
# unpack it, and compare the result with the original.
#
#   ./scripts/demo.sh [OUTDIR]        # default target/demo
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=target/release
out="${1:-target/demo}"
rm -rf "$out"
mkdir -p "$out"
set -x
"$bin/barecat-create" -s 16K "$out/sample.barecat" -C examples sample
"$bin/barecat-verify" "$out/sample.barecat"
"$bin/barecat-ls" -l "$out/sample.barecat" sample/train
"$bin/barecat-du" -H -d 2 "$out/sample.barecat"
"$bin/barecat-extract" "$out/sample.barecat" -C "$out/extracted"
diff -r examples/sample "$out/extracted/sample"
{ set +x; } 2>/dev/null
echo "demo: the archive holds examples/sample exactly; it is in $out"
