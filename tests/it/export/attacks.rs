//! The known attack classes against extractors, each against `barecat-extract`
//! (and, where it applies, `barecat-to-zip` / `barecat-to-tar`). Every test checks
//! that nothing outside the extraction directory changed, that the problem is
//! reported, and that the exit status is 1.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use crate::support::export::*;
use crate::support::*;
use barecat::{ArchiveWriter, Meta, WriterOptions};

/// A playground: `root/dest` is the extraction directory, `root/outside` holds
/// things an attack would like to change.
struct Ground {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    dest: PathBuf,
    outside: PathBuf,
}

impl Ground {
    fn new() -> Ground {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_path_buf();
        let dest = root.join("dest");
        let outside = root.join("outside");
        fs::create_dir_all(&dest).unwrap();
        fs::create_dir_all(&outside).unwrap();
        fs::write(outside.join("target.txt"), b"precious").unwrap();
        Ground {
            _tmp: tmp,
            root,
            dest,
            outside,
        }
    }

    fn arch(&self) -> PathBuf {
        self.root.join("evil.barecat")
    }

    /// Run extract into `dest` and check: exit 1, the message reported, nothing
    /// outside `dest` changed. Returns stderr.
    fn extract_refused(&self, extra: &[&str], expect: &str) -> String {
        let before = snapshot(&self.root, &self.dest);
        let mut args: Vec<&std::ffi::OsStr> = vec![
            self.arch().into_os_string().leak(),
            "-C".as_ref(),
            self.dest.as_os_str(),
        ];
        args.extend(extra.iter().map(std::ffi::OsStr::new));
        let o = run(bin("barecat-extract"), &args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains(expect), "expected {expect:?} in: {err}");
        assert!(
            !err.contains("panicked") && !err.contains("internal error"),
            "{err}"
        );
        let after = snapshot(&self.root, &self.dest);
        assert_eq!(before, after, "something outside the destination changed");
        err
    }
}

fn py_put(arch: &Path, path: &str, data: &[u8]) {
    let hex: String = data.iter().map(|b| format!("{b:02x}")).collect();
    py(
        "pyfs.py",
        [
            "put".as_ref(),
            arch.as_os_str(),
            path.as_ref(),
            hex.as_ref(),
        ],
    );
}

#[test]
fn path_traversal_is_refused_not_rewritten() {
    need!("bsdtar", "barecat");
    // Python barecat stores "../x" as given (docs/FORMAT.md §6); a zip-slip in barecat form.
    let g = Ground::new();
    py_put(&g.arch(), "ok.txt", b"fine");
    py_put(&g.arch(), "../outside/target.txt", b"pwned");
    py_put(&g.arch(), "../../escape.txt", b"pwned");
    let err = g.extract_refused(&[], "invalid archive path");
    assert!(err.contains("\"../outside/target.txt\""), "{err}");
    assert!(err.contains("\"../../escape.txt\""), "{err}");
    // Refused, not rewritten into something inside the destination.
    assert_eq!(tree(&g.dest), vec!["ok.txt"]);
    assert_eq!(fs::read(g.outside.join("target.txt")).unwrap(), b"precious");
    assert!(!g.root.parent().unwrap().join("escape.txt").exists());
    // Selecting the bad member explicitly does not help.
    g.extract_refused(&["../outside/target.txt"], "invalid archive path");
    // Zip and tar exports leave such members out (and say so).
    for (bin_name, out) in [("barecat-to-zip", "x.zip"), ("barecat-to-tar", "x.tar")] {
        let out = g.root.join(out);
        let o = run(bin(bin_name), [g.arch().as_os_str(), out.as_os_str()]);
        assert_eq!(o.status.code(), Some(1), "{bin_name}");
        assert!(
            stderr(&o).contains("invalid archive path"),
            "{}",
            stderr(&o)
        );
        let listing = run_ok("bsdtar", ["-tf".as_ref(), out.as_os_str()]);
        assert_eq!(listing.trim(), "ok.txt", "{bin_name}");
    }
}

#[test]
fn absolute_paths_are_refused() {
    let g = Ground::new();
    let mut w = ArchiveWriter::open(g.arch(), WriterOptions::default()).unwrap();
    w.add_file("ok.txt", Meta::default(), b"fine", None)
        .unwrap();
    w.finish().unwrap();
    // Another tool wrote an absolute path pointing at a file outside.
    let abs = g.outside.join("target.txt");
    let conn = raw_index(&g.arch());
    conn.execute(
        "INSERT INTO files (path, shard, offset, size, crc32c) SELECT ?1, shard, offset, size, crc32c \
         FROM files WHERE path = 'ok.txt'",
        [abs.to_str().unwrap()],
    )
    .unwrap();
    conn.execute(
        "INSERT INTO files (path, shard, offset, size) VALUES ('/abs.txt', 0, 0, 4)",
        [],
    )
    .unwrap();
    drop(conn);
    let err = g.extract_refused(&[], "absolute paths are not stored");
    assert!(err.contains("/abs.txt"), "{err}");
    assert_eq!(tree(&g.dest), vec!["ok.txt"]);
    assert_eq!(fs::read(&abs).unwrap(), b"precious");
}

#[test]
fn a_symlink_in_the_destination_is_not_followed() {
    let g = Ground::new();
    let mut w = ArchiveWriter::open(g.arch(), WriterOptions::default()).unwrap();
    w.add_file("link/target.txt", Meta::default(), b"pwned", None)
        .unwrap();
    w.add_file("file.txt", Meta::default(), b"pwned", None)
        .unwrap();
    w.add_file("other/ok.txt", Meta::default(), b"fine", None)
        .unwrap();
    w.finish().unwrap();
    // A directory symlink where the archive has a directory, and a file symlink
    // where it has a file: both point outside.
    symlink(&g.outside, g.dest.join("link")).unwrap();
    symlink(g.outside.join("target.txt"), g.dest.join("file.txt")).unwrap();
    let err = g.extract_refused(&[], "link: is a symbolic link; not followed");
    assert!(
        err.contains("file.txt: exists as a symbolic link; not overwritten"),
        "{err}"
    );
    assert_eq!(fs::read(g.dest.join("other/ok.txt")).unwrap(), b"fine");
    // --overwrite replaces the file symlink itself, never what it points to, and
    // still refuses to follow the directory symlink.
    g.extract_refused(&["--overwrite"], "link: is a symbolic link; not followed");
    assert!(!fs::symlink_metadata(g.dest.join("file.txt"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(fs::read(g.dest.join("file.txt")).unwrap(), b"pwned");
    assert_eq!(fs::read(g.outside.join("target.txt")).unwrap(), b"precious");
}

#[test]
fn a_symlinked_parent_directory_is_not_followed() {
    let g = Ground::new();
    let mut w = ArchiveWriter::open(g.arch(), WriterOptions::default()).unwrap();
    w.add_file("a/b/c/deep.txt", Meta::default(), b"pwned", None)
        .unwrap();
    w.add_dir(
        "a/b/empty",
        Meta {
            mode: Some(0o40777),
            ..Meta::default()
        },
    )
    .unwrap();
    w.add_file("a/fine.txt", Meta::default(), b"fine", None)
        .unwrap();
    w.finish().unwrap();
    fs::create_dir_all(g.dest.join("a")).unwrap();
    symlink(&g.outside, g.dest.join("a/b")).unwrap();
    let err = g.extract_refused(&[], "a/b: is a symbolic link; not followed");
    assert!(!err.contains("deep.txt: "), "reported at the link: {err}");
    assert_eq!(fs::read(g.dest.join("a/fine.txt")).unwrap(), b"fine");
    assert!(!g.outside.join("c").exists() && !g.outside.join("empty").exists());
    // The same through --strip-components and --overwrite.
    g.extract_refused(&["--overwrite"], "is a symbolic link");
}

#[test]
fn a_file_and_a_directory_on_one_path() {
    let g = Ground::new();
    let mut w = ArchiveWriter::open(g.arch(), WriterOptions::default()).unwrap();
    w.add_file("clash", Meta::default(), b"file", None).unwrap();
    w.add_file("keep.txt", Meta::default(), b"fine", None)
        .unwrap();
    w.finish().unwrap();
    // A second tool added a file below the file, and a directory row on it.
    let conn = raw_index(&g.arch());
    conn.execute(
        "INSERT INTO files (path, shard, offset, size, crc32c) SELECT 'clash/inner.txt', shard, \
         offset, size, crc32c FROM files WHERE path = 'keep.txt'",
        [],
    )
    .unwrap();
    conn.execute("INSERT INTO dirs (path, mode) VALUES ('clash', 493)", [])
        .unwrap();
    drop(conn);
    g.extract_refused(&[], "clash");
    assert_eq!(fs::read(g.dest.join("keep.txt")).unwrap(), b"fine");
    // Whichever came first stays; the other is reported, also with --overwrite.
    g.extract_refused(&["--overwrite"], "clash");
}

#[test]
fn duplicate_paths_are_refused() {
    need!("bsdtar");
    let g = Ground::new();
    let mut w = ArchiveWriter::open(g.arch(), WriterOptions::default()).unwrap();
    w.add_file("dup.txt", Meta::default(), b"first", None)
        .unwrap();
    w.add_file("other.txt", Meta::default(), b"second", None)
        .unwrap();
    w.finish().unwrap();
    let conn = raw_index(&g.arch());
    conn.execute("DROP INDEX idx_files_path", []).unwrap();
    conn.execute(
        "INSERT INTO files (path, shard, offset, size, crc32c) SELECT 'dup.txt', shard, offset, \
         size, crc32c FROM files WHERE path = 'other.txt'",
        [],
    )
    .unwrap();
    drop(conn);
    let err = g.extract_refused(&[], "dup.txt: stored more than once in the index");
    assert_eq!(err.matches("stored more than once").count(), 2, "{err}");
    assert_eq!(tree(&g.dest), vec!["other.txt"]);
    // Also with --overwrite (no silent last-one-wins).
    g.extract_refused(&["--overwrite"], "stored more than once");
    for (bin_name, out) in [("barecat-to-zip", "x.zip"), ("barecat-to-tar", "x.tar")] {
        let out = g.root.join(out);
        let o = run(bin(bin_name), [g.arch().as_os_str(), out.as_os_str()]);
        assert_eq!(o.status.code(), Some(1));
        assert!(stderr(&o).contains("stored more than once"));
        assert_eq!(
            run_ok("bsdtar", ["-tf".as_ref(), out.as_os_str()]).trim(),
            "other.txt"
        );
    }
}

#[test]
fn rows_past_the_shard_end_and_absurd_sizes_name_the_row() {
    need!("bsdtar");
    let g = Ground::new();
    let mut w = ArchiveWriter::open(g.arch(), WriterOptions::default()).unwrap();
    for name in [
        "past.bin",
        "negative.bin",
        "absurd.bin",
        "ok.txt",
        "badoffset.bin",
    ] {
        w.add_file(name, Meta::default(), b"0123456789", None)
            .unwrap();
    }
    w.finish().unwrap();
    let conn = raw_index(&g.arch());
    conn.execute(
        "UPDATE files SET offset = 1000000 WHERE path = 'past.bin'",
        [],
    )
    .unwrap();
    conn.execute("UPDATE files SET size = -5 WHERE path = 'negative.bin'", [])
        .unwrap();
    conn.execute(
        "UPDATE files SET size = 4611686018427387904 WHERE path = 'absurd.bin'",
        [],
    )
    .unwrap();
    conn.execute(
        "UPDATE files SET offset = -1 WHERE path = 'badoffset.bin'",
        [],
    )
    .unwrap();
    drop(conn);
    let err = g.extract_refused(&[], "past.bin: bad extent");
    assert!(
        err.contains("\"negative.bin\": size is out of range (-5)"),
        "{err}"
    );
    assert!(err.contains("absurd.bin: bad extent"), "{err}");
    assert!(
        err.contains("\"badoffset.bin\": offset is out of range"),
        "{err}"
    );
    assert_eq!(tree(&g.dest), vec!["ok.txt"]);
    for (bin_name, out) in [("barecat-to-zip", "x.zip"), ("barecat-to-tar", "x.tgz")] {
        let out = g.root.join(out);
        let o = run(bin(bin_name), [g.arch().as_os_str(), out.as_os_str()]);
        assert_eq!(o.status.code(), Some(1));
        let err = stderr(&o);
        assert!(
            err.contains("past.bin: bad extent") && err.contains("negative.bin"),
            "{err}"
        );
        assert_eq!(
            run_ok("bsdtar", ["-tf".as_ref(), out.as_os_str()]).trim(),
            "ok.txt"
        );
    }
}
