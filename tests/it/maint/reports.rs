//! `barecat-du`, `barecat-to-ncdu-json` and `barecat-index-to-csv`: the formats of
//! docs/FORMAT.md §8.4, and the same output as Python barecat's commands.

use std::fs;
use std::path::{Path, PathBuf};

use crate::support::maint::*;
use crate::support::*;
use barecat::{ArchiveWriter, Meta, WriterOptions};

/// A small tree (the `du` example of docs/FORMAT.md §8.4): 6 + 7 + 1000 bytes and an empty directory.
fn spec_tree(dir: &Path) -> PathBuf {
    let p = dir.join("spec.barecat");
    let mut w = ArchiveWriter::open(&p, WriterOptions::default()).unwrap();
    w.add_file("src/a.txt", meta(), b"hello\n", None).unwrap();
    w.add_dir("src/empty", meta()).unwrap();
    w.add_file("src/sub/b.txt", meta(), b"bye bye", None)
        .unwrap();
    w.add_file("src/sub/deep/c.dat", meta(), &pseudo_random(1, 1000), None)
        .unwrap();
    w.finish().unwrap();
    p
}

/// `barecat-du FLAGS ARCHIVE [PATH]`.
fn du(flags: &[&str], p: &Path, path: &[&str]) -> std::process::Output {
    let mut all: Vec<&std::ffi::OsStr> = flags.iter().map(|a| a.as_ref()).collect();
    all.push(p.as_os_str());
    all.extend(path.iter().map(std::ffi::OsStr::new));
    run_t(bin("barecat-du"), all)
}

#[test]
fn du_matches_the_spec_example_and_python() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let p = spec_tree(dir.path());
    let o = du(&[], &p, &[]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "1000\tsrc/sub/deep\n0\tsrc/empty\n1007\tsrc/sub\n1013\t.\n1013\tsrc\n"
    );
    for (flags, path) in [
        (&[][..], &[][..]),
        (&["-a"][..], &[][..]),
        (&["-s"][..], &[][..]),
        (&["-d", "1"][..], &[][..]),
        (&["-a", "-d", "2"][..], &[][..]),
        (&["-H"][..], &[][..]),
        (&[][..], &["src/sub"][..]),
        (&["-a"][..], &["src/sub/"][..]),
        (&["-s"][..], &["src/sub"][..]),
    ] {
        let ours = du(flags, &p, path);
        assert_eq!(code(&ours), 0, "{flags:?}: {}", stderr(&ours));
        let mut py_args: Vec<&std::ffi::OsStr> = vec!["du".as_ref()];
        py_args.extend(flags.iter().map(std::ffi::OsStr::new));
        py_args.push(p.as_os_str());
        py_args.extend(path.iter().map(std::ffi::OsStr::new));
        let theirs = run_t(py_barecat(), py_args);
        assert_eq!(code(&theirs), 0, "{flags:?}: {}", stderr(&theirs));
        assert_eq!(stdout(&ours), stdout(&theirs), "du {flags:?} {path:?}");
    }
}

#[test]
fn du_options_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = spec_tree(dir.path());
    let o = du(&["-s"], &p, &[]);
    assert_eq!(stdout(&o), "1013\t.\n");
    let o = du(&["-s"], &p, &["src/sub"]);
    assert_eq!(stdout(&o), "1007\tsrc/sub\n");
    let o = du(&["-a", "-d", "1"], &p, &["src"]);
    assert_eq!(
        stdout(&o),
        "6\tsrc/a.txt\n0\tsrc/empty\n1007\tsrc/sub\n1013\tsrc\n"
    );
    // A file: its own line.
    let o = du(&[], &p, &["src/sub/b.txt"]);
    assert_eq!(stdout(&o), "7\tsrc/sub/b.txt\n");
    // Human sizes, -h as well as -H.
    let big = dir.path().join("big.barecat");
    build(
        &big,
        None,
        &[
            ("x/one".into(), vec![0u8; 1536]),
            ("x/y/two".into(), vec![0u8; 3 << 20]),
        ],
    );
    for flag in ["-H", "-h", "--human-readable"] {
        let o = du(&[flag], &big, &[]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        assert_eq!(stdout(&o), "3.0M\tx/y\n3.0M\t.\n3.0M\tx\n");
    }
    let o = du(&["-a", "-h"], &big, &["x"]);
    assert_eq!(
        stdout(&o),
        "3.0M\tx/y/two\n1.5K\tx/one\n3.0M\tx/y\n3.0M\tx\n"
    );
    // JSON lines.
    let o = du(&["--json", "-a"], &p, &[]);
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 8);
    assert_eq!(lines[0]["path"], "src/sub/deep/c.dat");
    assert_eq!(lines[0]["type"], "file");
    let root = lines.iter().find(|l| l["path"] == "").unwrap();
    assert_eq!(root["type"], "dir");
    assert_eq!(root["size"], 1013);
    assert_eq!(root["files"], 3);
    // --help still works without -h.
    let o = run_t(bin("barecat-du"), ["--help"]);
    assert_eq!(code(&o), 0);
    assert!(stdout(&o).contains("--human-readable"));
    // Errors: one line, exit 1.
    let o = du(&[], &p, &["no/such"]);
    assert_eq!(code(&o), 1);
    assert_clean_error(&o);
    assert!(stderr(&o).contains("no/such"));
    let o = du(&[], &dir.path().join("none.barecat"), &[]);
    assert_eq!(code(&o), 1);
    assert_clean_error(&o);
    // Only the index is needed.
    fs::remove_file(barecat::Layout::current(&p).shard_path(0)).unwrap();
    assert_eq!(code(&du(&["-s"], &p, &[])), 0);
}

#[test]
fn ncdu_export_matches_python_and_parses() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let p = spec_tree(dir.path());
    let o = run_t(bin("barecat-to-ncdu-json"), [p.as_os_str()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let ours = stdout(&o);
    let theirs = stdout(&run_t(
        py_barecat(),
        ["to-ncdu-json".as_ref(), p.as_os_str()],
    ));
    let body = |s: &str| s.split_once('\n').unwrap().1.to_string();
    assert_eq!(body(&ours), body(&theirs));
    assert!(ours.ends_with(
        "[ {\"name\": \"deep\", \"asize\": 4096, \"ino\": 0}, {\"name\": \"c.dat\", \
         \"asize\": 1000, \"dsize\": 1000, \"ino\": 0}]]]]]\n"
    ));
    let header = ours.lines().next().unwrap();
    assert!(header.starts_with("[1,1,{\"progname\":\"barecat\",\"progver\":\""));
    let v: serde_json::Value = serde_json::from_str(&ours).unwrap();
    assert_eq!(v[0], 1);
    assert!(v[2]["timestamp"].is_u64());
    assert_eq!(v[3][0]["name"], "/");
    // Names that need escaping, and a deep tree.
    let q = dir.path().join("names.barecat");
    let deep = (0..100)
        .map(|i| format!("d{i}"))
        .collect::<Vec<_>>()
        .join("/");
    build(
        &q,
        None,
        &[
            ("sp\u{e9}cial/\"quoted\" \\ name".into(), b"1".to_vec()),
            (format!("{deep}/leaf"), b"22".to_vec()),
        ],
    );
    let o = run_t(bin("barecat-to-ncdu-json"), [q.as_os_str()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.is_ascii());
    assert!(text.contains(r#""sp\u00e9cial""#), "{text}");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    // Row order, as Python writes it: the first directory added comes first.
    assert_eq!(v[3][1][1]["name"], "\"quoted\" \\ name");
    let theirs = stdout(&run_t(
        py_barecat(),
        ["to-ncdu-json".as_ref(), q.as_os_str()],
    ));
    assert_eq!(body(&text), body(&theirs));
    // Far deeper than a recursive writer's stack would allow.
    let r = dir.path().join("deep.barecat");
    let deep = (0..3000).map(|_| "d").collect::<Vec<_>>().join("/");
    build(&r, None, &[(format!("{deep}/leaf"), b"1".to_vec())]);
    let o = run_t(bin("barecat-to-ncdu-json"), [r.as_os_str()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let text = stdout(&o);
    assert_eq!(text.matches('[').count(), 3000 + 2);
    assert_eq!(text.matches(']').count(), 3000 + 2);
}

#[test]
fn csv_is_byte_identical_to_python() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("c.barecat");
    build(
        &p,
        Some(1000),
        &[
            ("plain/a.txt".into(), b"hello\n".to_vec()),
            ("odd/with \"quotes\", commas".into(), vec![1u8; 700]),
            ("odd/\u{fc}nicode".into(), vec![2u8; 500]),
            ("empty".into(), Vec::new()),
        ],
    );
    raw_sql(
        &p,
        "UPDATE files SET crc32c = NULL WHERE path = 'plain/a.txt'",
    );
    let ours = run_t(bin("barecat-index-to-csv"), [p.as_os_str()]);
    assert_eq!(code(&ours), 0, "{}", stderr(&ours));
    let theirs = run_t(py_barecat(), ["index-to-csv".as_ref(), p.as_os_str()]);
    assert_eq!(ours.stdout, theirs.stdout);
    let text = stdout(&ours);
    assert!(text.starts_with("\"path\",\"shard\",\"offset\",\"size\",\"crc32c\"\r\n"));
    assert!(text.contains("\"plain/a.txt\",0,"), "{text}");
    assert!(text.contains(",6,\"\"\r\n"), "{text}");
    assert!(
        text.contains("\"odd/with \"\"quotes\"\", commas\""),
        "{text}"
    );
    // Legacy: the index file itself, or the legacy name resolved.
    let legacy = dir.path().join("old");
    fs::copy(&p, dir.path().join("old-sqlite-index")).unwrap();
    for arg in [dir.path().join("old-sqlite-index"), legacy] {
        let o = run_t(bin("barecat-index-to-csv"), [arg.as_os_str()]);
        assert_eq!(code(&o), 0, "{arg:?}: {}", stderr(&o));
        assert_eq!(o.stdout, theirs.stdout);
    }
    let o = run_t(
        bin("barecat-index-to-csv"),
        [dir.path().join("nope").as_os_str()],
    );
    assert_eq!(code(&o), 1);
    assert_clean_error(&o);
    let _ = Meta::default();
}
