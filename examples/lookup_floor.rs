//! The floor of a read by path: SQLite finding each path's row, then one
//! positioned read of the file's bytes, and nothing else (no checksum, no Python
//! object, no checks), for bench/python_api.py's `bc[path]` row.
//!
//! usage: lookup_floor INDEX PATHS_FILE [--no-read]
//!
//! Opens INDEX read-only as any reader does (SQLite's default page cache) and its
//! shards, prepares `SELECT shard, offset, size FROM files WHERE path = ?1` once,
//! runs it for every line of PATHS_FILE in order inside one read transaction and
//! reads each file's bytes with `pread` into one buffer (not with `--no-read`).
//! Prints the seconds that took and the sum of the sizes found (the opening and
//! the reading of PATHS_FILE are not counted). A path that is not found is an
//! error.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::time::Instant;

use rusqlite::{Connection, OpenFlags};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let read = match args.get(3).map(String::as_str) {
        None => true,
        Some("--no-read") => false,
        Some(_) => {
            eprintln!("usage: lookup_floor INDEX PATHS_FILE [--no-read]");
            std::process::exit(2);
        }
    };
    if args.len() < 3 {
        eprintln!("usage: lookup_floor INDEX PATHS_FILE [--no-read]");
        std::process::exit(2);
    }
    let mut shards = Vec::new();
    while let Ok(f) = File::open(format!("{}-shard-{:05}", args[1], shards.len())) {
        shards.push(f);
    }
    let paths = match std::fs::read_to_string(&args[2]) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("lookup_floor: {}: {e}", args[2]);
            std::process::exit(1);
        }
    };
    let run = || -> Result<(f64, i64), Box<dyn std::error::Error>> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&args[1], flags)?;
        let mut stmt = conn.prepare("SELECT shard, offset, size FROM files WHERE path = ?1")?;
        // One read transaction for all of them, as a reader may hold one: no
        // lock and no change check per lookup.
        conn.execute_batch("BEGIN")?;
        let started = Instant::now();
        let mut total = 0i64;
        let mut buf = Vec::new();
        for p in paths.lines() {
            let (shard, offset, size) = stmt.query_row([p], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                ))
            })?;
            if read {
                buf.resize(usize::try_from(size)?, 0);
                shards
                    .get(usize::try_from(shard)?)
                    .ok_or("no such shard")?
                    .read_exact_at(&mut buf, u64::try_from(offset)?)?;
            }
            total += size;
        }
        let secs = started.elapsed().as_secs_f64();
        conn.execute_batch("COMMIT")?;
        Ok((secs, total))
    };
    match run() {
        Ok((secs, total)) => println!("{secs:.6} {total}"),
        Err(e) => {
            eprintln!("lookup_floor: {}: {e}", args[1]);
            std::process::exit(1);
        }
    }
}
