//! Every walk over the index costs SQL work in proportion to what it yields.
//!
//! A paged query that cannot seek past the previous page (`? IS NULL OR path > ?`,
//! or a second lower bound SQLite prefers to the key) starts every page from the
//! beginning: the walk is quadratic, which at 1M files made `ls -R` slower than
//! Python's. No timing assert can pin that down on a noisy machine; counting can.
//! The index connections count the virtual machine steps and statements SQLite
//! runs (`sqlite3_stmt_status`, through the library's test hook), pages are made
//! tiny so that a small archive spans many of them, and each walk runs over an
//! archive and one four times as large: the work per entry must not grow. The
//! counters are process-wide, so each measuring test runs alone in a child process
//! of the test binary.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use barecat::core::archive::walk::set_max_page;
use barecat::core::archive::{ChildOrder, WalkOptions};
use barecat::core::index::{work, ScanOrder, ScanSpec, Table};
use barecat::export::Selection;
use barecat::listing::{self, find, python, tree};
use barecat::maint::{csv, du, ncdu};
use barecat::{Archive, ArchiveWriter, FileOrder, Meta, WriterOptions};

/// Pages of this many rows in these tests.
const PAGE: usize = 16;

/// An archive of `n` files: a quarter in one flat directory (`flat/`), the rest in
/// a tree three levels deep with hidden files, and n/10 empty directories.
fn build(dir: &Path, n: usize) -> PathBuf {
    let p = dir.join(format!("w{n}.barecat"));
    let mut w = ArchiveWriter::open(&p, WriterOptions::default()).unwrap();
    let meta = Meta {
        mode: Some(0o100644),
        uid: Some(0),
        gid: Some(0),
        mtime_ns: Some(1_700_000_000_000_000_000),
    };
    for i in 0..n {
        let path = if i % 4 == 0 {
            format!("flat/f{i:06}.txt")
        } else {
            let hidden = if i % 7 == 0 { "." } else { "" };
            format!(
                "d{}/s{}/{hidden}g{i:06}.{}",
                i % 5,
                (i / 5) % 8,
                if i % 3 == 0 { "jpg" } else { "txt" }
            )
        };
        w.add_file(&path, meta, &[(i % 251) as u8; 3], None)
            .unwrap();
    }
    for k in 0..n / 10 {
        w.add_dir(&format!("empty/e{k:04}"), meta).unwrap();
    }
    w.finish().unwrap();
    p
}

type Walk = (&'static str, fn(&Archive) -> u64);

/// Run a walk and return (entries it yielded, work it cost).
fn measure(a: &Archive, walk: fn(&Archive) -> u64) -> (u64, work::Work) {
    let before = work::snapshot();
    let n = walk(a);
    (n, work::snapshot() - before)
}

/// A writer that counts lines (NUL-terminated ones too).
struct Lines(u64);

impl Write for Lines {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0 += b.iter().filter(|&&c| c == b'\n' || c == 0).count() as u64;
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn lines(f: impl FnOnce(&mut Lines)) -> u64 {
    let mut l = Lines(0);
    f(&mut l);
    l.0
}

fn ls(a: &Archive, paths: &[&str], opts: listing::ListOptions) -> u64 {
    let paths: Vec<String> = paths.iter().map(|s| s.to_string()).collect();
    lines(|out| {
        let problems = listing::list(a, &paths, opts, out).unwrap();
        assert!(problems.is_empty(), "{problems:?}");
    })
}

fn pylist(a: &Archive, paths: &[&str], opts: python::Options) -> u64 {
    let paths: Vec<String> = paths.iter().map(|s| s.to_string()).collect();
    lines(|out| {
        let missing = python::list(a, &paths, opts, out).unwrap();
        assert!(missing.is_empty(), "{missing:?}");
    })
}

fn findw(a: &Archive, start: &str, opts: find::FindOptions) -> u64 {
    lines(|out| find::find(a, start, &opts, out).unwrap())
}

const RECURSIVE: listing::ListOptions = listing::ListOptions {
    long: false,
    recursive: true,
    json: false,
    jsonl: false,
};
const PY_RECURSIVE: python::Options = python::Options {
    long: false,
    recursive: true,
    jsonl: false,
};

fn walks() -> Vec<Walk> {
    vec![
        ("ls -R", |a| ls(a, &[], RECURSIVE)),
        ("ls -R --json", |a| {
            ls(
                a,
                &[],
                listing::ListOptions {
                    json: true,
                    ..RECURSIVE
                },
            )
        }),
        ("ls -R --jsonl d1", |a| {
            ls(
                a,
                &["d1"],
                listing::ListOptions {
                    jsonl: true,
                    ..RECURSIVE
                },
            )
        }),
        ("ls -l flat", |a| {
            ls(
                a,
                &["flat"],
                listing::ListOptions {
                    long: true,
                    ..Default::default()
                },
            )
        }),
        ("ls empty", |a| ls(a, &["empty"], Default::default())),
        ("ls glob **/*.txt", |a| {
            ls(a, &["**/*.txt"], Default::default())
        }),
        ("ls glob d*/s1/*", |a| {
            ls(a, &["d*/s1/*"], Default::default())
        }),
        ("list -R", |a| pylist(a, &[], PY_RECURSIVE)),
        ("list -R --jsonl d2", |a| {
            pylist(
                a,
                &["d2"],
                python::Options {
                    jsonl: true,
                    ..PY_RECURSIVE
                },
            )
        }),
        ("list -l flat", |a| {
            pylist(
                a,
                &["flat"],
                python::Options {
                    long: true,
                    ..Default::default()
                },
            )
        }),
        ("list **", |a| pylist(a, &["**"], Default::default())),
        ("list **/*.jpg", |a| {
            pylist(a, &["**/*.jpg"], Default::default())
        }),
        ("list d3/**/*.txt", |a| {
            pylist(a, &["d3/**/*.txt"], Default::default())
        }),
        ("list flat/", |a| pylist(a, &["flat/"], Default::default())),
        ("list flat/*", |a| {
            pylist(a, &["flat/*"], Default::default())
        }),
        ("list */s2/g*", |a| {
            pylist(a, &["*/s2/g*"], Default::default())
        }),
        ("list d[12]/**/g*", |a| {
            pylist(a, &["d[12]/**/g*"], Default::default())
        }),
        ("list **/s[3-5]/**", |a| {
            pylist(a, &["**/s[3-5]/**"], Default::default())
        }),
        ("find", |a| findw(a, "", Default::default())),
        ("find d4 -print0", |a| {
            findw(
                a,
                "d4",
                find::FindOptions {
                    print0: true,
                    ..Default::default()
                },
            )
        }),
        ("find -name *.jpg -type f", |a| {
            findw(
                a,
                "",
                find::FindOptions {
                    name: Some("*.jpg".into()),
                    kind: Some(find::EntryKind::File),
                    ..Default::default()
                },
            )
        }),
        ("find -path d1/*", |a| {
            findw(
                a,
                "",
                find::FindOptions {
                    path: Some("d1/*".into()),
                    ..Default::default()
                },
            )
        }),
        ("find flat -maxdepth 1 -size -9", |a| {
            findw(
                a,
                "flat",
                find::FindOptions {
                    max_depth: Some(1),
                    size: Some((barecat::core::index::Cmp::Less, 9)),
                    ..Default::default()
                },
            )
        }),
        ("tree", |a| {
            lines(|out| {
                tree::tree(a, "", Default::default(), out).unwrap();
            })
        }),
        ("tree -L 2", |a| {
            lines(|out| {
                tree::tree(
                    a,
                    "",
                    tree::TreeOptions {
                        level: Some(2),
                        dirs_only: false,
                    },
                    out,
                )
                .unwrap();
            })
        }),
        ("to-ncdu-json", |a| {
            lines(|out| ncdu::write_ncdu(a, out).unwrap()) + a.root().unwrap().num_files_tree as u64
        }),
        ("du -a", |a| {
            lines(|out| {
                du::du(
                    a,
                    "",
                    &du::DuOptions {
                        all: true,
                        ..Default::default()
                    },
                    out,
                )
                .unwrap()
            })
        }),
        ("index-to-csv", |a| {
            lines(|out| csv::write_csv(a, out).unwrap())
        }),
        ("files by path", |a| {
            a.files(FileOrder::Path, "")
                .inspect(|f| assert!(f.is_ok()))
                .count() as u64
        }),
        ("files by address", |a| {
            a.files(FileOrder::Address, "")
                .inspect(|f| assert!(f.is_ok()))
                .count() as u64
        }),
        ("files by row id below d0", |a| {
            a.files(FileOrder::Insertion, "d0")
                .inspect(|f| assert!(f.is_ok()))
                .count() as u64
        }),
        ("dirs", |a| a.dirs("").unwrap().len() as u64),
        ("walk by name", |a| {
            a.walk("", WalkOptions::default()).unwrap().count() as u64
        }),
        ("walk by row id", |a| {
            let o = WalkOptions {
                order: ChildOrder::Rowid,
                ..Default::default()
            };
            a.walk("", o).unwrap().count() as u64
        }),
        ("files_page (Python module)", |a| {
            let spec = ScanSpec::new(Table::Files, ScanOrder::Path);
            let mut cur = None;
            let mut n = 0;
            loop {
                let page = a
                    .with_index(|i| i.scan_page(&spec, cur.as_ref(), PAGE))
                    .unwrap();
                n += page.rows.len() as u64;
                match page.last {
                    Some(k) => cur = Some(k),
                    None => return n,
                }
            }
        }),
        ("dirs_page (Python module)", |a| {
            let spec = ScanSpec::new(Table::Dirs, ScanOrder::Path);
            let mut cur = None;
            let mut n = 0;
            loop {
                let page = a
                    .with_index(|i| i.scan_page(&spec, cur.as_ref(), PAGE))
                    .unwrap();
                n += page.rows.len() as u64;
                match page.last {
                    Some(k) => cur = Some(k),
                    None => return n,
                }
            }
        }),
        ("export rows of d2 by address", |a| {
            let (sel, _) = Selection::resolve(a, &["d2".to_string()]).unwrap();
            sel.file_rows(a, FileOrder::Address).count() as u64
        }),
        ("export rows of everything by path", |a| {
            Selection::all().file_rows(a, FileOrder::Path).count() as u64
        }),
    ]
}

/// The counters are the process's: the tests of this file take turns, or each would
/// count the other's queries (as it did when the machine was busy).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn walks_cost_in_proportion_to_what_they_yield() {
    crate::support::run_isolated("library::scale_walks::walks_counted_alone");
}

/// The body of `walks_cost_in_proportion_to_what_they_yield`, run alone in a child
/// process: the counters are process-wide.
#[test]
#[ignore = "run alone by walks_cost_in_proportion_to_what_they_yield"]
fn walks_counted_alone() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    work::enable();
    set_max_page(PAGE);
    let dir = tempfile::tempdir().unwrap();
    let (small, large) = (build(dir.path(), 2_000), build(dir.path(), 8_000));
    let (small, large) = (
        Archive::open(&small).unwrap(),
        Archive::open(&large).unwrap(),
    );
    let mut report = String::new();
    let mut bad = Vec::new();
    for (name, walk) in walks() {
        let (n1, w1) = measure(&small, walk);
        let (n2, w2) = measure(&large, walk);
        assert!(n1 > 0 && n2 > 3 * n1, "{name}: {n1} then {n2} entries");
        // Per entry; a constant part (opening statements, lookups) is allowed for.
        let per = |w: u64, n: u64| (w as f64) / (n as f64 + 50.0);
        let steps = per(w2.vm_steps, n2) / per(w1.vm_steps, n1);
        let stmts = per(w2.statements, n2) / per(w1.statements, n1).max(1e-9);
        report += &format!(
            "{name:<34} {n1:>6} {n2:>6} entries, VM steps/entry {:>7.1} {:>7.1} (x{steps:.2}), \
             statements/entry {:.3} {:.3}\n",
            per(w1.vm_steps, n1),
            per(w2.vm_steps, n2),
            per(w1.statements, n1),
            per(w2.statements, n2),
        );
        if steps > 1.35 || (w2.statements > 10 && stmts > 1.35) {
            bad.push(name);
        }
    }
    eprintln!("{report}");
    assert!(
        bad.is_empty(),
        "the work per entry grows with the archive for: {bad:?}\n{report}"
    );
}

#[test]
fn the_counter_sees_a_quadratic_walk() {
    crate::support::run_isolated("library::scale_walks::quadratic_walk_counted_alone");
}

/// The body of `the_counter_sees_a_quadratic_walk`, run alone in a child process.
#[test]
#[ignore = "run alone by the_counter_sees_a_quadratic_walk"]
fn quadratic_walk_counted_alone() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // The same measure applied to the walk that was quadratic (a paged query whose
    // key condition cannot seek) must fail, or the test above proves nothing.
    work::enable();
    let dir = tempfile::tempdir().unwrap();
    let (small, large) = (build(dir.path(), 1_000), build(dir.path(), 4_000));
    let quadratic = |p: &Path| {
        let a = Archive::open(p).unwrap();
        let before = work::snapshot();
        let mut last: Option<String> = None;
        let mut n = 0u64;
        loop {
            let page: Vec<String> = a
                .with_index(|i| {
                    let mut s = i
                        .conn()
                        .prepare(
                            "SELECT path FROM files WHERE (?1 IS NULL OR path > ?1) \
                             ORDER BY path LIMIT 16",
                        )
                        .unwrap();
                    let rows = s
                        .query_map([&last], |r| r.get::<_, String>(0))
                        .unwrap()
                        .map(|r| r.unwrap())
                        .collect();
                    Ok(rows)
                })
                .unwrap();
            n += page.len() as u64;
            if page.len() < 16 {
                break;
            }
            last = page.last().cloned();
        }
        (work::snapshot() - before).vm_steps as f64 / n as f64
    };
    let ratio = quadratic(&large) / quadratic(&small);
    assert!(ratio > 2.0, "a quadratic walk went unnoticed: x{ratio:.2}");
}
