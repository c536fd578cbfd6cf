#!/usr/bin/env bash
# Run one fuzz target for a while on one core, starting from the seed corpus
# (./seed-corpus.sh), and print libFuzzer's final statistics. Leak detection is
# off: LeakSanitizer's per-input check races the teardown of the importers'
# threads (Rust's thread handles are freed just after a scoped join returns) and
# reports it as a leak; memory growth is caught by -rss_limit_mb instead.
#   fuzz/run.sh TARGET SECONDS
set -euo pipefail
cd "$(dirname "$0")"
target=$1
secs=${2:-600}
[ -d corpus/$target ] || ./seed-corpus.sh
dict=()
max_len=20000
case $target in
    tar_import) dict=(-dict=dict/tar.dict) ;;
    zip_import) dict=(-dict=dict/zip.dict) ;;
    # ISO 9660 images put their volume descriptor at 32 KiB.
    archive_import) dict=(-dict=dict/formats.dict); max_len=72000 ;;
esac
mkdir -p artifacts/$target
mkdir -p /dev/shm/barecat-fuzz
export TMPDIR=/dev/shm/barecat-fuzz  # fsync is free on tmpfs
# The bundled SQLite trips AddressSanitizer's one-definition-rule check at
# start-up, before any input runs. For long runs of the slow import targets,
# ASAN_OPTIONS=detect_odr_violation=0:malloc_context_size=0:quarantine_size_mb=16
# makes them about 1.5 times faster (no allocation stack traces in reports).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_odr_violation=0}"
exec cargo +nightly fuzz run -O "$target" corpus/$target -- \
    -max_total_time="$secs" -max_len="$max_len" -timeout=20 \
    -rss_limit_mb=2048 -detect_leaks=0 -print_final_stats=1 "${dict[@]}" \
    -artifact_prefix=artifacts/$target/
