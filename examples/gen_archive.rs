//! Build an archive of generated files with the library, without any file on disk
//! (the scale benchmarks' archives of up to 10M files: bench/scale.py).
//!
//! usage: gen_archive OUT COUNT [--per-dir N] [--seed S] [-s SHARD_SIZE_LIMIT]
//!
//! File `i` (0-based) is `part_PPP/class_CC/item_IIIIIIII.txt`, where the files are
//! taken in groups of N (default 1000) consecutive ones per leaf directory and 100
//! leaf directories per part: a tree with COUNT/N leaf directories of N files each,
//! added in path order. Sizes are 400-1000 bytes of deterministic pseudo-random
//! bytes, whose first 8 bytes are `i` (so no two files are equal); mode 0o100644,
//! uid/gid of the caller, a fixed mtime. The same arguments give the same archive
//! contents. An existing OUT is replaced.

use std::path::PathBuf;

use barecat::{ArchiveWriter, CreateMode, Meta, WriterOptions};

fn usage() -> ! {
    eprintln!("usage: gen_archive OUT COUNT [--per-dir N] [--seed S] [-s LIMIT]");
    std::process::exit(2);
}

/// xorshift64*: cheap, deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut positional = Vec::new();
    let (mut per_dir, mut seed, mut limit) = (1000u64, 2u64, None);
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| usage());
        match a.as_str() {
            "--per-dir" => per_dir = value().parse()?,
            "--seed" => seed = value().parse()?,
            "-s" => limit = Some(barecat::core::size::parse_size(&value())?),
            _ => positional.push(a),
        }
    }
    if positional.len() != 2 || per_dir == 0 {
        usage();
    }
    let out = PathBuf::from(&positional[0]);
    let count: u64 = positional[1].parse()?;
    let mut w = ArchiveWriter::open(
        &out,
        WriterOptions {
            mode: CreateMode::Overwrite,
            shard_size_limit: limit,
            ..WriterOptions::default()
        },
    )?;
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let pool: Vec<u8> = (0..(1 << 20) / 8)
        .flat_map(|_| rng.next().to_le_bytes())
        .collect();
    let meta = Meta {
        mode: Some(0o100644),
        uid: Some(unsafe { libc::getuid() }),
        gid: Some(unsafe { libc::getgid() }),
        mtime_ns: Some(1_700_000_000_000_000_000),
    };
    let mut data = Vec::with_capacity(1000);
    for i in 0..count {
        let leaf = i / per_dir;
        let path = format!(
            "part_{:03}/class_{:02}/item_{i:08}.txt",
            leaf / 100,
            leaf % 100
        );
        let size = 400 + (rng.next() % 601) as usize;
        let start = (rng.next() % (pool.len() - size) as u64) as usize;
        data.clear();
        data.extend_from_slice(&i.to_le_bytes());
        data.extend_from_slice(&pool[start + 8..start + size]);
        w.add_file(&path, meta, &data, None)?;
        if i % 1_000_000 == 0 && i > 0 {
            eprintln!("  {i}/{count}");
        }
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
