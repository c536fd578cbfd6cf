//! Build an archive from a directory tree with the library (used by the benchmarks
//! to make their archives).
//!
//! usage: build_archive OUT SRC_DIR [--prefix P] [-s SHARD_SIZE_LIMIT] [--part K/N]
//!
//! Every regular file below SRC_DIR is stored as P/<path relative to SRC_DIR> (P
//! defaults to the name of SRC_DIR), in sorted order; hidden files (such as the
//! datasets' `.complete` marker) are left out. With `--part K/N` only every N-th
//! file is taken, starting with the K-th (0-based). An existing OUT is replaced.

use std::path::PathBuf;

use barecat::{ArchiveWriter, CreateMode, Meta, WriterOptions};

fn usage() -> ! {
    eprintln!("usage: build_archive OUT SRC_DIR [--prefix P] [-s LIMIT] [--part K/N]");
    std::process::exit(2);
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut positional = Vec::new();
    let (mut prefix, mut limit, mut part) = (None, None, (0usize, 1usize));
    while let Some(a) = args.next() {
        match a.as_str() {
            "--prefix" => prefix = Some(args.next().unwrap_or_else(|| usage())),
            "-s" => {
                let s = args.next().unwrap_or_else(|| usage());
                limit = Some(barecat::core::size::parse_size(&s)?);
            }
            "--part" => {
                let s = args.next().unwrap_or_else(|| usage());
                let (k, n) = s.split_once('/').unwrap_or_else(|| usage());
                part = (k.parse()?, n.parse()?);
            }
            _ => positional.push(a),
        }
    }
    if positional.len() != 2 || part.1 == 0 {
        usage();
    }
    let out = PathBuf::from(&positional[0]);
    let src = PathBuf::from(&positional[1]);
    let prefix = prefix.unwrap_or_else(|| {
        src.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    });
    let mut w = ArchiveWriter::open(
        &out,
        WriterOptions {
            mode: CreateMode::Overwrite,
            shard_size_limit: limit,
            ..WriterOptions::default()
        },
    )?;
    let files = walkdir::WalkDir::new(&src)
        .sort_by_file_name()
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file() && !e.file_name().to_string_lossy().starts_with('.'));
    for (i, entry) in files.enumerate() {
        if i % part.1 != part.0 {
            continue;
        }
        let rel = entry.path().strip_prefix(&src)?;
        let name = format!("{prefix}/{}", rel.to_string_lossy());
        let data = std::fs::read(entry.path())?;
        w.add_file(&name, Meta::from_fs(&entry.metadata()?), &data, None)?;
    }
    let stats = w.finish()?;
    eprintln!(
        "{}: {} files, {} bytes",
        out.display(),
        stats.files,
        stats.bytes
    );
    Ok(())
}
