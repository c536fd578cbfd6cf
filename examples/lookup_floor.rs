//! The floor of a read by path through the index: SQLite finding each path's row,
//! and nothing else (no shard read, no checksum, no Python object), for
//! bench/python_api.py's `bc[path]` row.
//!
//! usage: lookup_floor INDEX PATHS_FILE
//!
//! Opens INDEX read-only as any reader does, prepares `SELECT shard, offset, size,
//! crc32c FROM files WHERE path = ?1` once, runs it for every line of PATHS_FILE in
//! order inside one read transaction, and prints the seconds the lookups took and
//! the sum of the sizes found (the opening and the reading of PATHS_FILE are not
//! counted). A path that is not found is an error.

use std::time::Instant;

use rusqlite::{Connection, OpenFlags};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: lookup_floor INDEX PATHS_FILE");
        std::process::exit(2);
    }
    let paths = match std::fs::read_to_string(&args[2]) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("lookup_floor: {}: {e}", args[2]);
            std::process::exit(1);
        }
    };
    let run = || -> rusqlite::Result<(f64, i64)> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&args[1], flags)?;
        let mut stmt =
            conn.prepare("SELECT shard, offset, size, crc32c FROM files WHERE path = ?1")?;
        // One read transaction for all of them, as a reader may hold one: no
        // lock and no change check per lookup.
        conn.execute_batch("BEGIN")?;
        let started = Instant::now();
        let mut total = 0i64;
        for p in paths.lines() {
            total += stmt.query_row([p], |r| r.get::<_, i64>(2))?;
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
