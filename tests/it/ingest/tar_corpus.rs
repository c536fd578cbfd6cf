//! Every tar and zip test archive of the Python installations on this machine
//! (CPython's `test/` and `test/archivetestdata/`: old, exotic and deliberately
//! broken archives collected for `tarfile` and `zipfile` over the years), imported
//! with `barecat-from-tar` / `barecat-from-zip` and compared member by member with
//! what Python's tarfile or zipfile (and, for tars, GNU tar and bsdtar) see: every
//! file is stored with identical bytes or reported on its own line, with the reason
//! this file's table expects; an archive no reference reader can read is refused
//! with one line.

use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::support::reference::*;
use crate::support::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Tar,
    Zip,
}

/// What importing a corpus archive must give.
enum Expect {
    /// Every file the reference readers see is stored identically, except those
    /// reported on a line holding one of these reasons, and those stored elsewhere.
    Members {
        reasons: &'static [&'static str],
        instead: &'static [(&'static [u8], Instead<'static>)],
    },
    /// No reference reader reads it: one line holding this reason, nothing stored.
    Refused(&'static str),
}

/// The archives known here, by file name. Others get the general promise only.
fn expected(name: &str) -> Option<Expect> {
    Some(match name {
        // Members with Latin-1 names (ustar and PAX with hdrcharset=BINARY) cannot
        // be stored as text paths; everything else, including the signed-checksum
        // members, the directory with a size and the sparse files, is stored.
        "testtar.tar" => Expect::Members {
            reasons: &["member name is not valid UTF-8; skipped"],
            instead: &[],
        },
        "testtar.tar.xz"
        | "zipdir.zip"
        | "zip_cp437_header.zip"
        | "exe_with_zip"
        | "exe_with_z64"
        | "ziptestdata.zip"
        | "missing_directory.zip"
        | "nested_portion1.zip"
        | "top_level_portion1.zip" => Expect::Members {
            reasons: &[],
            instead: &[],
        },
        n if n.ends_with(".whl") || n.ends_with(".egg") => Expect::Members {
            reasons: &[],
            instead: &[],
        },
        // Written on Windows: the backslashes are path separators (as unzip and
        // bsdtar extract them); zipfile keeps them in the names.
        "zipdir_backslash.zip" => Expect::Members {
            reasons: &[],
            instead: &[
                (b"a\\b\\c", Instead::File("a/b/c")),
                (b"d\\e\\", Instead::Dir("d/e")),
            ],
        },
        // A PAX header whose size runs past the end of the file.
        "recursion.tar" => Expect::Refused("inside an extended header"),
        // The first part of a split zip: no end of central directory.
        n if n.starts_with("sparse-zip64-") => Expect::Refused("not a zip file"),
        _ => return None,
    })
}

/// The `test` directories of the Python installations here.
fn python_test_dirs() -> Vec<PathBuf> {
    let mut bases: Vec<PathBuf> = ["/usr/lib", "/usr/local/lib", "/opt/python/lib"]
        .iter()
        .map(PathBuf::from)
        .collect();
    let mut pyenvs = vec![PathBuf::from("/root/.pyenv/versions")];
    if let Some(home) = std::env::var_os("HOME") {
        pyenvs.push(Path::new(&home).join(".pyenv/versions"));
    }
    for p in pyenvs {
        for v in fs::read_dir(&p).into_iter().flatten().flatten() {
            bases.push(v.path().join("lib"));
        }
    }
    // Wherever the test venv's Python keeps its standard library.
    if let Ok(o) = std::process::Command::new(python())
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['stdlib'])",
        ])
        .output_bounded()
    {
        let stdlib = String::from_utf8_lossy(&o.stdout).trim().to_string();
        if let Some(parent) = Path::new(&stdlib).parent() {
            bases.push(parent.to_path_buf());
        }
    }
    let mut dirs = Vec::new();
    for b in bases {
        for e in fs::read_dir(&b).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let test = e.path().join("test");
            if name.starts_with("python") && test.is_dir() {
                if let Ok(c) = test.canonicalize() {
                    if !dirs.contains(&c) {
                        dirs.push(c);
                    }
                }
            }
        }
    }
    dirs.sort();
    dirs
}

const TAR_NAMES: &[&str] = &[".tar", ".tgz", ".tar.gz", ".tar.bz2", ".tar.xz", ".tar.zst"];
const ZIP_NAMES: &[&str] = &[".zip", ".whl", ".egg", ".jar"];

/// A tar or zip by name or content: ustar magic, a zip signature at the start, or
/// (in archivetestdata/, where zips with something in front live) an end of
/// central directory near the end.
fn classify(path: &Path) -> Option<Kind> {
    let name = path.file_name()?.to_string_lossy().to_lowercase();
    let mut f = fs::File::open(path).ok()?;
    let mut head = vec![0u8; 600];
    let n = f.read(&mut head).ok()?;
    head.truncate(n);
    if TAR_NAMES.iter().any(|s| name.ends_with(s)) || head.get(257..262) == Some(b"ustar") {
        return Some(Kind::Tar);
    }
    if head.starts_with(b"PK\x03\x04")
        || head.starts_with(b"PK\x05\x06")
        || ZIP_NAMES.iter().any(|s| name.ends_with(s))
    {
        return Some(Kind::Zip);
    }
    let in_testdata = path
        .parent()
        .is_some_and(|p| p.ends_with("archivetestdata"));
    if in_testdata && !name.ends_with(".py") && !name.ends_with(".md") {
        let len = f.metadata().ok()?.len();
        let tail = len.min(66 << 10);
        f.seek(SeekFrom::Start(len - tail)).ok()?;
        let mut buf = Vec::new();
        f.read_to_end(&mut buf).ok()?;
        if buf.windows(4).any(|w| w == b"PK\x05\x06") {
            return Some(Kind::Zip);
        }
    }
    None
}

/// Every tar and zip under the test directories, one per content.
fn corpus(dirs: &[PathBuf]) -> Vec<(PathBuf, Kind)> {
    let mut seen: BTreeMap<(u64, u32), PathBuf> = BTreeMap::new();
    let mut out = Vec::new();
    for d in dirs {
        let walk = walkdir::WalkDir::new(d)
            .follow_links(false)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|e| e.file_name() != "__pycache__");
        for e in walk.flatten() {
            if !e.file_type().is_file() {
                continue;
            }
            let Some(kind) = classify(e.path()) else {
                continue;
            };
            let bytes = fs::read(e.path()).unwrap();
            let key = (bytes.len() as u64, crc32fast::hash(&bytes));
            if seen.insert(key, e.path().to_path_buf()).is_none() {
                out.push((e.path().to_path_buf(), kind));
            }
        }
    }
    out
}

#[test]
fn every_python_test_archive_is_stored_or_reported() {
    need!("tar", "bsdtar", "barecat");
    let dirs = python_test_dirs();
    let archives = corpus(&dirs);
    if archives.is_empty() {
        eprintln!(
            "skipped every_python_test_archive_is_stored_or_reported: no CPython test \
             archives on this machine (looked for test/ under the Python installations in \
             /usr/lib, /usr/local/lib, ~/.pyenv/versions and the test venv's)"
        );
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut summary = Vec::new();
    for (i, (path, kind)) in archives.iter().enumerate() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let arch = tmp.path().join(format!("{i}.barecat"));
        let (command, views) = match kind {
            Kind::Tar => (
                "barecat-from-tar",
                vec![
                    py_view("tarfile", path),
                    tar_view("tar", path),
                    tar_view("bsdtar", path),
                ],
            ),
            Kind::Zip => ("barecat-from-zip", vec![py_view("zipfile", path)]),
        };
        let imp = import(command, path, &arch, &[]);
        let ctx = path.display().to_string();
        let expect = expected(&name);
        if expect.is_none() {
            eprintln!("{ctx}: not in this test's table; checked against the promise only");
        }
        match expect {
            Some(Expect::Refused(reason)) => {
                for v in &views {
                    if v.error.is_none() || !v.files.is_empty() {
                        failures.push(format!("{ctx}: {} reads it: {v:?}", v.reader));
                    }
                }
                let lines: Vec<&str> = imp.stderr.lines().collect();
                if imp.code != 1
                    || lines.len() != 1
                    || !lines[0].contains(reason)
                    || barecat::Layout::exists(&arch).unwrap()
                {
                    failures.push(format!(
                        "{ctx}: expected one line with {reason:?}, exit 1 and no archive; \
                         got exit {}: {}",
                        imp.code, imp.stderr
                    ));
                }
                summary.push(format!("{name}: refused as expected"));
            }
            expect => {
                let (reasons, instead) = match expect {
                    Some(Expect::Members { reasons, instead }) => (Some(reasons), instead),
                    _ => (None, &[][..]),
                };
                let mut files = 0;
                let mut reported = Vec::new();
                for (k, v) in views.iter().enumerate() {
                    // The first view is Python's.
                    if k == 0 {
                        files = v.files.len();
                        if let (Some(e), Some(_)) = (&v.error, reasons) {
                            failures.push(format!("{ctx}: {} cannot read it: {e}", v.reader));
                        }
                    }
                    failures.extend(
                        violations(v, &imp, instead, false, &mut reported)
                            .into_iter()
                            .map(|f| format!("{ctx}: {f}")),
                    );
                }
                if let Some(reasons) = reasons {
                    for (n, line) in &reported {
                        if !reasons.iter().any(|r| line.contains(r)) {
                            failures.push(format!(
                                "{ctx}: {} reported for an unexpected reason: {line}",
                                barecat::core::path::printable(n)
                            ));
                        }
                    }
                    if reasons.is_empty() && instead.is_empty() && imp.code != 0 {
                        failures.push(format!("{ctx}: exit {}: {}", imp.code, imp.stderr));
                    }
                }
                reported.sort();
                reported.dedup_by(|a, b| a.0 == b.0);
                summary.push(format!(
                    "{name}: {files} files seen by {}, {} stored, {} reported",
                    views[0].reader,
                    imp.stored.len(),
                    reported.len()
                ));
            }
        }
        if barecat::Layout::exists(&arch).unwrap() {
            crate::support::ingest::check(&arch);
        }
    }
    eprintln!(
        "{} archives from {} test directories:\n  {}",
        archives.len(),
        dirs.len(),
        summary.join("\n  ")
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
