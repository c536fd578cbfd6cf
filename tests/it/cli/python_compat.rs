//! The rest of Python barecat's command line: abbreviated options, its legacy
//! programs (`barecat-create-recursive`, the options of the others), `barecat
//! defrag --smart`, and `barecat shell`. Python barecat 0.3.1 and ours run on the
//! same inputs and must agree (archives read back with Python barecat, outputs
//! compared). Where Python is wrong (docs/FORMAT.md §11), the test names the bug we do not
//! copy.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::support::maint::*;
use crate::support::process::{ChildExt, CommandExt, BOUND};
use crate::support::*;
use serde_json::Value;

/// Python's programs and their argparse parsers, read by tests/py/argparse_dump.py.
fn python_parsers(dir: &Path) -> Value {
    let out = dir.join("argparse.json");
    run_ok(
        python(),
        [py_script("argparse_dump.py").as_os_str(), out.as_os_str()],
    );
    serde_json::from_slice(&fs::read(out).unwrap()).unwrap()
}

/// Our program for one of Python's: (program, leading arguments).
fn ours(program: &str, sub: Option<&str>) -> (PathBuf, Vec<String>) {
    match sub {
        Some(s) => (bin("barecat"), vec![s.to_string()]),
        None => (bin(program), vec![]),
    }
}

/// A value for an option of Python's (given its type and choices).
fn value_for(opt: &Value) -> String {
    if let Some(c) = opt["choices"].as_array() {
        return c[0].as_str().unwrap().to_string();
    }
    "1".to_string()
}

/// The arguments that make a command line of `parser` complete: a value for each
/// required positional and each required option but `skip`.
fn required_args(parser: &Value, skip: &str) -> Vec<String> {
    let mut a = Vec::new();
    for o in parser["options"].as_array().unwrap() {
        let strings: Vec<&str> = o["strings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap())
            .collect();
        if o["required"] == true && !strings.contains(&skip) {
            let long = strings.iter().find(|s| s.starts_with("--")).unwrap();
            a.push(long.to_string());
            a.push(value_for(o));
        }
    }
    for p in parser["positionals"].as_array().unwrap() {
        let choices = p["choices"].as_array().unwrap();
        let v = match choices.first() {
            Some(c) => c.as_str().unwrap().to_string(),
            None => "x".to_string(),
        };
        match p["nargs"].as_str() {
            Some("*") | Some("?") => {}
            // One or more: two (rsync's sources and destination).
            Some("+") => a.extend([v.clone(), v]),
            _ => a.push(v),
        }
    }
    a
}

/// Values for every other option of `parser` that takes one: the legacy programs
/// whose options Python does not require but which are needed all the same
/// (`barecat-extract --file A --target-directory D`).
fn other_value_args(parser: &Value, skip: &str) -> Vec<String> {
    let mut a = Vec::new();
    for o in parser["options"].as_array().unwrap() {
        let strings: Vec<&str> = o["strings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap())
            .collect();
        if o["takes_value"] == true && o["required"] != true && !strings.contains(&skip) {
            if let Some(long) = strings.iter().find(|s| s.starts_with("--")) {
                a.push(long.to_string());
                a.push(value_for(o));
            }
        }
    }
    a
}

/// How our program understood a command line (BARECAT_DEBUG_ARGS=1): the names
/// of the options given, one line each (the long name and its aliases).
fn understood(prog: &Path, args: &[String]) -> Output {
    Command::new(prog)
        .args(args)
        .env("BARECAT_DEBUG_ARGS", "1")
        .stdin(Stdio::null())
        .output_bounded()
        .unwrap()
}

/// Every unambiguous prefix of every long option of every program of Python
/// barecat (14 programs, every subcommand of `barecat`), generated from its
/// argparse parsers, names the same option in ours.
#[test]
fn every_python_abbreviation_names_the_same_option() {
    need!("barecat");
    let t = tempfile::tempdir().unwrap();
    let parsers = python_parsers(t.path());
    let mut programs: Vec<(String, Option<String>, Value)> = Vec::new();
    for (prog, p) in parsers.as_object().unwrap() {
        if let Some(subs) = p.get("subcommands") {
            for (sub, sp) in subs.as_object().unwrap() {
                // Python's `ls` is its `list`; our `barecat ls` is another command
                // (it has `--json` of its own, and `barecat list` is Python's).
                if sub == "ls" {
                    continue;
                }
                programs.push((prog.clone(), Some(sub.clone()), sp.clone()));
            }
        } else {
            programs.push((prog.clone(), None, p.clone()));
        }
    }
    assert_eq!(
        programs.iter().filter(|p| p.1.is_none()).count(),
        13,
        "13 programs besides barecat"
    );
    let mut checked = 0;
    let mut failures = Vec::new();
    for (prog, sub, parser) in &programs {
        let (exe, lead) = ours(prog, sub.as_deref());
        let prefixes = parser["prefixes"].as_object().unwrap();
        for opt in parser["options"].as_array().unwrap() {
            let strings: Vec<String> = opt["strings"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap().to_string())
                .collect();
            for full in strings.iter().filter(|s| prefixes.contains_key(*s)) {
                for p in prefixes[full].as_array().unwrap() {
                    let p = p.as_str().unwrap();
                    let mut forms = vec![vec![p.to_string()]];
                    if opt["takes_value"] == true {
                        forms = vec![
                            vec![p.to_string(), value_for(opt)],
                            vec![format!("{p}={}", value_for(opt))],
                        ];
                    }
                    for form in forms {
                        let mut args = lead.clone();
                        args.extend(form.iter().cloned());
                        args.extend(required_args(parser, full));
                        let mut o = understood(&exe, &args);
                        if !o.status.success()
                            && String::from_utf8_lossy(&o.stderr).contains("required")
                        {
                            args.extend(other_value_args(parser, full));
                            o = understood(&exe, &args);
                        }
                        let text = String::from_utf8_lossy(&o.stdout).into_owned();
                        // The long name Python gives the option (or, for a
                        // single-dash one like find's -name, its name with two).
                        let want = if full.starts_with("--") {
                            full.clone()
                        } else {
                            format!("-{full}")
                        };
                        let ok = o.status.success()
                            && text
                                .lines()
                                .any(|l| l.split_whitespace().any(|w| w == want));
                        checked += 1;
                        if !ok {
                            failures.push(format!(
                                "{} {}: expected {want}, got status {} stdout {:?} stderr {:?}",
                                exe.file_name().unwrap().to_string_lossy(),
                                args.join(" "),
                                o.status,
                                text.trim(),
                                String::from_utf8_lossy(&o.stderr).trim()
                            ));
                        }
                    }
                }
            }
        }
    }
    assert!(checked > 500, "only {checked} command lines checked");
    assert!(
        failures.is_empty(),
        "{} of {checked} abbreviations differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// argparse does not take prefixes of subcommands in Python 3.11 (`barecat verif`
/// is an error there), so neither do we; aliases are taken.
#[test]
fn subcommand_prefixes_are_refused_as_python_refuses_them() {
    need!("barecat");
    let t = tempfile::tempdir().unwrap();
    let a = t.path().join("a.barecat");
    build(&a, None, &[("x.txt".into(), b"x".to_vec())]);
    for args in [vec!["verif", "A"], vec!["cre", "A"], vec!["ind", "A"]] {
        let args: Vec<String> = args
            .iter()
            .map(|s| s.replace('A', &a.display().to_string()))
            .collect();
        let py = run_t(py_barecat(), &args);
        let ours = run_t(bin("barecat"), &args);
        assert_eq!(code(&py), 2, "python {args:?}");
        assert_eq!(code(&ours), 2, "ours {args:?}: {}", stderr(&ours));
    }
    // Aliases are not prefixes: `barecat c` and `barecat x` work in both.
    let o = run_t(bin("barecat"), ["l".as_ref(), a.as_os_str()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

fn pipe(prog: &Path, args: &[&str], input: &[u8], dir: &Path) -> Output {
    let mut c = Command::new(prog)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    c.stdin.take().unwrap().write_all(input).unwrap();
    c.output_within(BOUND).unwrap()
}

/// Files (content, size, CRC) and directories of an archive, as Python reads it.
fn files_and_dirs(archive: &Path) -> (BTreeMap<String, Value>, BTreeSet<String>) {
    let d = py_dump(archive);
    assert_eq!(d["integrity_ok"], true, "{}", archive.display());
    let files = d["files"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                serde_json::json!([v["hex"], v["size"], v["crc32c"]]),
            )
        })
        .collect();
    let dirs = d["dirs"].as_object().unwrap().keys().cloned().collect();
    (files, dirs)
}

fn tree(root: &Path) {
    write_tree(
        root,
        &[
            ("a.jpg", b"jpeg a"),
            ("sub/b.jpg", &pseudo_random(3, 5000)),
            ("sub/c.txt", b"not a jpeg"),
            ("sub/deep/d.jpg", &pseudo_random(4, 70)),
            ("e.jpg", b""),
        ],
    );
}

/// The brief's pipeline: `find . -name '*.jpg' -print0 | sort | barecat-create
/// --null --file=out.barecat --overwrite --shard-size=22`, with Python's program
/// and ours, on the same tree: the same archive. (Python does not store the
/// limit it was given, docs/FORMAT.md §11.5; we do.)
#[test]
fn legacy_create_with_abbreviated_options_makes_pythons_archive() {
    need!("barecat");
    let t = tempfile::tempdir().unwrap();
    let src = t.path().join("src");
    // Every file fits in 22 bytes (Python refuses a larger one).
    write_tree(
        &src,
        &[
            ("a.jpg", b"jpeg a"),
            ("sub/b.jpg", b"twenty bytes of jpeg"),
            ("sub/c.txt", b"not a jpeg"),
            ("sub/deep/d.jpg", b"ten bytes!"),
            ("e.jpg", b""),
        ],
    );
    let mut list = Vec::new();
    for p in ["./a.jpg", "./e.jpg", "./sub/b.jpg", "./sub/deep/d.jpg"] {
        list.extend_from_slice(p.as_bytes());
        list.push(0);
    }
    let py_out = t.path().join("py.barecat");
    let our_out = t.path().join("ours.barecat");
    let py_prog = python().with_file_name("barecat-create");
    let args = |out: &Path| {
        vec![
            "--null".to_string(),
            format!("--file={}", out.display()),
            "--over".into(),
            "--shard-size=22".into(),
        ]
    };
    for (prog, out) in [(py_prog, &py_out), (bin("barecat-create"), &our_out)] {
        let a = args(out);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let o = pipe(&prog, &a, &list, &src);
        assert!(o.status.success(), "{prog:?}: {}", stderr(&o));
    }
    let (pf, pd) = files_and_dirs(&py_out);
    let (of, od) = files_and_dirs(&our_out);
    assert_eq!(pf, of);
    assert_eq!(pd, od);
    assert_eq!(pf.len(), 4);
    // Both limited the shards to 22 bytes.
    assert!(shard_count(&our_out) >= 2);
    assert_eq!(shard_count(&our_out), shard_count(&py_out));
    assert_eq!(py_dump(&our_out)["shard_size_limit"], 22);
}

/// `barecat-create-recursive`, missing before: the contents of each root stored
/// relative to it, as Python's does. (Python needs `--shard-size-limit`, or it
/// crashes, docs/FORMAT.md §11.5; ours does not.)
#[test]
fn create_recursive_makes_pythons_archive() {
    need!("barecat");
    let t = tempfile::tempdir().unwrap();
    let r1 = t.path().join("r1");
    let r2 = t.path().join("r2");
    tree(&r1);
    write_tree(&r2, &[("other/x.txt", b"x"), ("y.txt", b"yy")]);
    let py_out = t.path().join("py.barecat");
    let our_out = t.path().join("ours.barecat");
    let py_prog = python().with_file_name("barecat-create-recursive");
    for (prog, out) in [
        (py_prog, &py_out),
        (bin("barecat-create-recursive"), &our_out),
    ] {
        let o = run_t(
            &prog,
            [
                OsString::from(format!("--file={}", out.display())),
                "--shard-size-l".into(),
                "1G".into(),
                r1.clone().into(),
                r2.clone().into(),
            ],
        );
        assert!(o.status.success(), "{prog:?}: {}", stderr(&o));
    }
    let (pf, pd) = files_and_dirs(&py_out);
    let (of, od) = files_and_dirs(&our_out);
    assert_eq!(pf, of);
    assert_eq!(pd, od);
    assert!(of.contains_key("sub/deep/d.jpg") && of.contains_key("other/x.txt"));
    // Without a limit ours works too; an existing output needs --overwrite.
    let o = run_t(
        bin("barecat-create-recursive"),
        [
            OsString::from("--file"),
            our_out.clone().into(),
            r1.clone().into(),
        ],
    );
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("exists"), "{}", stderr(&o));
    let o = run_t(
        bin("barecat-create-recursive"),
        [
            OsString::from("--file"),
            our_out.clone().into(),
            "--overw".into(),
            r1.clone().into(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(contents(&our_out).len(), 5);
    // A root that is not a directory is refused (Python adds nothing, silently).
    let o = run_t(
        bin("barecat-create-recursive"),
        [
            OsString::from("--file"),
            t.path().join("z.barecat").into(),
            r1.join("a.jpg").into(),
        ],
    );
    assert_eq!(code(&o), 2);
    assert_eq!(stderr(&o).lines().count(), 2, "{}", stderr(&o));
}

fn copy_archive(from: &Path, to: &Path) {
    for s in barecat::Layout::current(from).shard_files().unwrap() {
        let name = s.path.file_name().unwrap().to_string_lossy().replace(
            from.file_name().unwrap().to_str().unwrap(),
            to.file_name().unwrap().to_str().unwrap(),
        );
        fs::copy(&s.path, to.with_file_name(name)).unwrap();
    }
    fs::copy(from, to).unwrap();
}

/// Bytes of the files whose place changed between two placements.
fn moved_bytes(before: &[(String, u64, u64, u64)], after: &[(String, u64, u64, u64)]) -> u64 {
    let b: BTreeMap<&str, (u64, u64, u64)> = before
        .iter()
        .map(|(p, s, o, z)| (p.as_str(), (*s, *o, *z)))
        .collect();
    after
        .iter()
        .filter(|(p, s, o, _)| b[p.as_str()].0 != *s || b[p.as_str()].1 != *o)
        .map(|(_, _, _, z)| *z)
        .sum()
}

/// `defrag --smart` against Python barecat's on the same fragmented archives: at
/// least as much space given back, at most as many bytes moved, every file the
/// same. Python's smart defrag packs every file in address order, so every byte
/// after the first hole moves; ours moves fewer.
#[test]
fn smart_defrag_frees_as_much_as_python_and_moves_less() {
    need!("barecat");
    let t = tempfile::tempdir().unwrap();
    let mut total_py = (0u64, 0u64);
    let mut total_ours = (0u64, 0u64);
    // Files of random sizes in one shard, in shards of a limit, and files of one
    // size (records, thumbnails) in one shard.
    for (seed, files, limit, sizes) in [
        (1u64, 300u64, 1u64 << 40, "random"),
        (2, 400, 1_500_000, "random"),
        (3, 250, 600_000, "random"),
        (4, 400, 1 << 40, "equal"),
    ] {
        let base = t.path().join(format!("frag{seed}.barecat"));
        py(
            "fragment.py",
            [
                base.display().to_string(),
                seed.to_string(),
                files.to_string(),
                limit.to_string(),
                sizes.to_string(),
            ],
        );
        let py_a = t.path().join(format!("py{seed}.barecat"));
        let our_a = t.path().join(format!("ours{seed}.barecat"));
        copy_archive(&base, &py_a);
        copy_archive(&base, &our_a);
        let before = placement(&base);
        let phys = physical(&base);
        let want = contents(&base);
        let o = run_t(
            py_barecat(),
            ["defrag".as_ref(), "--smart".as_ref(), py_a.as_os_str()],
        );
        assert!(o.status.success(), "python: {}", stderr(&o));
        let o = run_t(
            bin("barecat"),
            [
                "defrag".as_ref(),
                "--sma".as_ref(),
                "--json".as_ref(),
                our_a.as_os_str(),
            ],
        );
        assert!(o.status.success(), "ours: {}", stderr(&o));
        let report: Value = serde_json::from_slice(&o.stdout).unwrap();
        let py_freed = phys - physical(&py_a);
        let our_freed = phys - physical(&our_a);
        let py_moved = moved_bytes(&before, &placement(&py_a));
        let our_moved = moved_bytes(&before, &placement(&our_a));
        eprintln!(
            "seed {seed}: freed python {py_freed} ours {our_freed}; moved python {py_moved} \
             ours {our_moved} ({})",
            report["smart"]["strategy"]
        );
        if sizes == "equal" {
            // Holes of the size of the files at the end: filled, nothing shifted.
            assert_eq!(report["smart"]["strategy"], "fill+shift", "seed {seed}");
            assert!(our_moved * 2 < py_moved, "seed {seed}");
        }
        assert!(
            our_freed >= py_freed,
            "seed {seed}: freed {our_freed} < {py_freed}"
        );
        assert!(
            our_moved <= py_moved,
            "seed {seed}: moved {our_moved} > {py_moved}"
        );
        assert_eq!(report["freed_bytes"], our_freed);
        assert_eq!(
            report["moved_bytes"], our_moved,
            "the report tells the truth"
        );
        assert_eq!(report["smart"]["packing_bytes"], py_moved, "seed {seed}");
        assert_eq!(contents(&our_a), want);
        assert_eq!(contents(&py_a), want);
        assert!(py_verify_ok(&our_a));
        total_py.0 += py_freed;
        total_py.1 += py_moved;
        total_ours.0 += our_freed;
        total_ours.1 += our_moved;
    }
    assert!(
        total_ours.1 * 10 < total_py.1 * 9,
        "moving at least a tenth fewer bytes overall: ours {total_ours:?} python {total_py:?}"
    );
    // The summary line says what was done.
    let a = t.path().join("ours1.barecat");
    let o = run_t(bin("barecat-defrag"), ["--smart".as_ref(), a.as_os_str()]);
    assert!(o.status.success());
    assert!(stdout(&o).contains("nothing to free"), "{}", stdout(&o));
}

fn py_verify_ok(archive: &Path) -> bool {
    py_dump(archive)["integrity_ok"] == true
}

/// docs/FORMAT.md §8.5 and §11.24: Python's smart defrag destroys the data of files it had
/// not reached when a file is larger than the shard limit. Ours keeps every file.
#[test]
fn smart_defrag_keeps_files_larger_than_the_limit() {
    let t = tempfile::tempdir().unwrap();
    let a = t.path().join("big.barecat");
    let files = vec![
        ("a".to_string(), vec![1u8; 4]),
        ("b".to_string(), vec![2u8; 15]),
        ("c".to_string(), vec![3u8; 3]),
        ("d".to_string(), vec![4u8; 6]),
    ];
    build(&a, Some(10), &files);
    raw_sql(&a, "DELETE FROM files WHERE path = 'a'");
    let o = run_t(bin("barecat-defrag"), ["--smart".as_ref(), a.as_os_str()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let c = contents(&a);
    assert_eq!(c.len(), 3);
    assert_eq!(c["b"], vec![2u8; 15]);
    assert_eq!(c["d"], vec![4u8; 6]);
    let (status, v) = verify_json(&a, false);
    assert_eq!(status, 0, "{v}");
}

/// One `barecat shell ARCHIVE -c CMD`, Python's or ours: (status, stdout, stderr).
fn shell(py: bool, archive: &Path, cmd: &str, dir: &Path) -> (i32, String, String) {
    let (prog, lead): (PathBuf, Vec<&str>) = if py {
        (py_barecat(), vec!["shell"])
    } else {
        (bin("barecat"), vec!["shell"])
    };
    let o = Command::new(prog)
        .args(lead)
        .arg(archive)
        .arg("-c")
        .arg(cmd)
        .current_dir(dir)
        .env("HOME", dir)
        .env("TZ", "UTC")
        .stdin(Stdio::null())
        .output_bounded()
        .unwrap();
    (code(&o), stdout(&o), stderr(&o))
}

/// The shell's commands print what Python's print, for the same archive. Ours
/// puts complaints on stderr and exits 1 where a command failed (Python prints
/// them on stdout and exits 0): the comparison joins the two.
#[test]
fn shell_commands_print_what_pythons_print() {
    need!("barecat");
    let t = tempfile::tempdir().unwrap();
    let src = t.path().join("src");
    let mut files: Vec<(String, Vec<u8>)> = vec![
        ("a.txt".into(), b"hello\nworld\n".to_vec()),
        ("sub/b.txt".into(), b"no newline".to_vec()),
        ("sub/deep/c.bin".into(), pseudo_random(9, 3000)),
        ("notes.md".into(), b"# notes\n".to_vec()),
    ];
    for i in 0..12 {
        files.push((format!("frames/frame_{i:04}.jpg"), vec![b'j'; 10 + i]));
    }
    files.push(("frames/readme.txt".into(), b"r".to_vec()));
    for (p, d) in &files {
        let f = src.join(p);
        fs::create_dir_all(f.parent().unwrap()).unwrap();
        fs::write(&f, d).unwrap();
    }
    let a = t.path().join("s.barecat");
    let o = run_t(
        py_barecat(),
        [
            OsString::from("create"),
            a.clone().into(),
            "-C".into(),
            src.clone().into(),
            "a.txt".into(),
            "sub".into(),
            "notes.md".into(),
            "frames".into(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let work = t.path().join("work");
    fs::create_dir(&work).unwrap();
    fs::write(work.join("local.txt"), b"l").unwrap();
    fs::create_dir(work.join("ldir")).unwrap();
    let same = [
        "pwd",
        "ls",
        "ls -l",
        "ls -R",
        "ls sub",
        "ls -l sub",
        "ls '*.txt'",
        "ls sub/deep/c.bin",
        "lss frames",
        "lss",
        "cat a.txt",
        "cat sub/b.txt",
        "head -n 3 a.txt",
        "head sub/b.txt",
        "stat a.txt",
        "stat sub",
        "find -name '*.txt'",
        "find sub",
        "find -type d",
        "find -size +100",
        "find -maxdepth 1",
        "find -path 'sub/*'",
        "du",
        "du -a",
        "du -H -d 1",
        "du -s sub",
        "info",
        "sql SELECT path, size FROM files ORDER BY path",
        "sql SELECT count(*) AS n FROM dirs",
        "help",
        "help ls",
        "lls",
        "lpwd",
        "cd sub",
        "cd /",
        "tree -L 1",
        "quit",
    ];
    for cmd in same {
        let py = shell(true, &a, cmd, &work);
        let ours = shell(false, &a, cmd, &work);
        assert_eq!(py.0, 0, "python {cmd}: {}", py.2);
        assert_eq!(ours.0, 0, "ours {cmd}: {}", ours.2);
        assert_eq!(ours.1, py.1, "`{cmd}` prints the same");
    }
    // Failures: the same message, on stderr, and status 1.
    for cmd in [
        "cat nope.txt",
        "stat /",
        "cd a.txt",
        "stat nope",
        "lss nope",
        "head",
        "frob",
        "get nope",
        "put local.txt",
        "rm a.txt",
        "mv a.txt b.txt",
        "find -bogus",
    ] {
        let py = shell(true, &a, cmd, &work);
        let ours = shell(false, &a, cmd, &work);
        assert_eq!(ours.0, 1, "ours {cmd}: status");
        assert_eq!(ours.1, "", "ours {cmd}: nothing on stdout");
        assert_eq!(ours.2, py.1, "`{cmd}` says the same (Python on stdout)");
    }
    // The transfers print the same, and write the same files.
    for (cmd, file) in [
        ("get a.txt", "a.txt"),
        ("get sub ldir/sub", "ldir/sub/deep/c.bin"),
        ("mget 'sub/*.txt' ldir", "ldir/b.txt"),
    ] {
        let py_dir = t.path().join("pyget");
        let our_dir = t.path().join("ourget");
        for d in [&py_dir, &our_dir] {
            let _ = fs::remove_dir_all(d);
            fs::create_dir_all(d.join("ldir")).unwrap();
        }
        let py = shell(true, &a, cmd, &py_dir);
        let ours = shell(false, &a, cmd, &our_dir);
        assert_eq!(
            ours.1,
            py.1.replace(
                &py_dir.display().to_string(),
                &our_dir.display().to_string()
            ),
            "`{cmd}`"
        );
        assert_eq!(
            fs::read(py_dir.join(file)).unwrap(),
            fs::read(our_dir.join(file)).unwrap()
        );
    }
    // tree: Python says "1 directories, 1 files" (docs/FORMAT.md §11.20); we count in the
    // singular where there is one, and otherwise print the same tree.
    let py = shell(true, &a, "tree sub", &work);
    let ours = shell(false, &a, "tree sub", &work);
    assert_eq!(ours.1, py.1.replace("1 files", "1 file"));
    // -c with several commands: Python runs the first with the rest as its
    // argument; we run each.
    let ours = shell(false, &a, "cd sub; pwd; ls", &work);
    assert_eq!(ours.1, "/sub\nb.txt\ndeep/\n");
    // The exit status is 1 if any command failed.
    let ours = shell(false, &a, "pwd; cat nope; pwd", &work);
    assert_eq!((ours.0, ours.1.as_str()), (1, "/\n/\n"));
}

/// Writes with `-w`: put, mput, rm, mv give Python's output, and Python reads the
/// archive back.
#[test]
fn shell_writes_are_pythons() {
    need!("barecat");
    let t = tempfile::tempdir().unwrap();
    let work = t.path().join("work");
    write_tree(
        &work,
        &[("n1.txt", b"one"), ("n2.txt", b"two"), ("keep.txt", b"k")],
    );
    let base = t.path().join("base.barecat");
    build(
        &base,
        None,
        &[
            ("x/a.txt".into(), b"a".to_vec()),
            ("x/b.txt".into(), b"b".to_vec()),
        ],
    );
    let py_a = t.path().join("py.barecat");
    let our_a = t.path().join("ours.barecat");
    for cmd in [
        "put n1.txt",
        "put n2.txt x/two.txt",
        "rm x/a.txt",
        "mv x/b.txt x/bee.txt",
        "mput 'n*.txt' y",
    ] {
        for a in [&py_a, &our_a] {
            if !a.exists() {
                copy_archive(&base, a);
            }
        }
        let py = Command::new(py_barecat())
            .args(["shell".as_ref(), py_a.as_os_str()])
            .args(["-w", "-c", cmd])
            .current_dir(&work)
            .output_bounded()
            .unwrap();
        let ours = Command::new(bin("barecat"))
            .args(["shell".as_ref(), our_a.as_os_str()])
            .args(["--wr", "-c", cmd])
            .current_dir(&work)
            .output_bounded()
            .unwrap();
        assert!(ours.status.success(), "{cmd}: {}", stderr(&ours));
        let norm = |s: String| {
            let mut l: Vec<String> = s.lines().map(str::to_string).collect();
            l.sort();
            l
        };
        assert_eq!(norm(stdout(&ours)), norm(stdout(&py)), "`{cmd}`");
    }
    let (pf, pd) = files_and_dirs(&py_a);
    let (of, od) = files_and_dirs(&our_a);
    assert_eq!(of, pf);
    assert_eq!(od, pd);
    let (status, v) = verify_json(&our_a, false);
    assert_eq!(status, 0, "{v}");
    // sql writes only with -w.
    let o = run_t(
        bin("barecat"),
        [
            OsString::from("shell"),
            our_a.clone().into(),
            "-c".into(),
            "sql DELETE FROM config".into(),
        ],
    );
    assert_eq!(code(&o), 1);
    assert!(stderr(&o).starts_with("sql error: "), "{}", stderr(&o));
}
