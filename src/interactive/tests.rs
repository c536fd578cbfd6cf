//! Tests of the interactive models on real archives (no terminal needed).

use std::path::Path;

use super::browse::Browser;
use super::ncdu::{Action, Ncdu};
use super::pager::{Order, Pager};
use super::shell::{Io, Shell, Status};
use super::term::Key;
use crate::core::index::ncdu::ChildSort;
use crate::{Archive, ArchiveWriter, CreateMode, Meta, WriterOptions};

fn make(dir: &Path, files: &[(&str, usize)]) -> std::path::PathBuf {
    let p = dir.join("t.barecat");
    let mut w = ArchiveWriter::open(&p, WriterOptions::with_mode(CreateMode::New)).unwrap();
    for (name, size) in files {
        let data: Vec<u8> = (0..*size).map(|i| b'a' + (i % 26) as u8).collect();
        w.add_file(name, Meta::default(), &data, None).unwrap();
    }
    w.finish().unwrap();
    p
}

fn sample(dir: &Path) -> std::path::PathBuf {
    make(
        dir,
        &[
            ("big/x.bin", 5000),
            ("big/y.bin", 3000),
            ("small/a.txt", 10),
            ("small/deep/b.txt", 20),
            ("top.txt", 100),
            ("mid.dat", 2000),
        ],
    )
}

#[test]
fn pager_pages_every_order_like_a_full_sort() {
    let t = tempfile::tempdir().unwrap();
    let mut files: Vec<(String, usize)> = (0..57)
        .map(|i| (format!("d/f{i:03}"), (i * 37) % 11))
        .collect();
    files.extend((0..13).map(|i| (format!("d/s{i:02}/x"), (i * 7) % 5 + 1)));
    let refs: Vec<(&str, usize)> = files.iter().map(|(p, s)| (p.as_str(), *s)).collect();
    let p = make(t.path(), &refs);
    let a = Archive::open(&p).unwrap();
    let d = a.with_index(|i| i.dir("d")).unwrap().unwrap();
    let total = (d.num_subdirs + d.num_files) as u64;
    for sort in [ChildSort::Size, ChildSort::Count, ChildSort::Name] {
        for descending in [false, true] {
            for dirs_first in [false, true] {
                let order = Order {
                    sort,
                    descending,
                    dirs_first,
                };
                // The reference: every child, sorted in memory.
                let mut all = Vec::new();
                for dirs in [true, false] {
                    all.extend(
                        a.with_index(|i| {
                            i.children_page(
                                "d",
                                dirs,
                                &crate::core::index::ncdu::PageSpec {
                                    sort,
                                    descending,
                                    backwards: false,
                                    bound: crate::core::index::ncdu::Bound::Open,
                                    limit: 1000,
                                },
                            )
                        })
                        .unwrap(),
                    );
                }
                all.sort_by(|x, y| order.cmp(x, y));
                let mut pg = Pager::new(&a, "d", total, order, 7).unwrap();
                assert_eq!(pg.len(), all.len());
                // Forward, backward, and jumps.
                for (i, c) in all.iter().enumerate() {
                    assert_eq!(pg.get(&a, i).unwrap(), Some(c), "{order:?} {i}");
                }
                for i in (0..all.len()).rev() {
                    assert_eq!(pg.get(&a, i).unwrap(), Some(&all[i]), "{order:?} back {i}");
                }
                for &i in &[all.len() - 1, 0, all.len() / 2, all.len() - 1, 3] {
                    assert_eq!(pg.get(&a, i).unwrap(), Some(&all[i]), "{order:?} jump {i}");
                }
                assert_eq!(pg.get(&a, all.len()).unwrap(), None);
                let (_, held) = pg.window();
                assert!(held <= Pager::MAX_PAGES * 7);
                // Seeking finds every child's position.
                for (i, c) in all.iter().enumerate().step_by(5) {
                    assert_eq!(pg.seek(&a, &c.path, c.is_dir).unwrap(), Some(i));
                    assert_eq!(pg.get(&a, i).unwrap(), Some(c));
                }
            }
        }
    }
}

#[test]
fn ncdu_shows_sizes_and_navigates() {
    let t = tempfile::tempdir().unwrap();
    let p = sample(t.path());
    let mut m = Ncdu::new(Archive::open(&p).unwrap(), "t.barecat", "").unwrap();
    let rows: Vec<String> = m
        .render(80, 24)
        .unwrap()
        .iter()
        .map(|r| r.text().trim_end().to_string())
        .collect();
    assert_eq!(rows.len(), 24);
    assert!(rows[0].starts_with("--- t.barecat: / ---"), "{}", rows[0]);
    assert!(rows[2].contains("/big"), "largest first: {rows:?}");
    assert!(
        rows[2].starts_with("  7.8 KiB        2 [###############     ]"),
        "{}",
        rows[2]
    );
    assert!(rows[3].contains("  mid.dat"));
    assert!(rows[4].contains("  top.txt"));
    assert!(rows[5].contains("/small"));
    assert!(
        rows[23].contains("Total: 9.9 KiB | 6 files | 4 items | by size desc | ?:help q:quit"),
        "{}",
        rows[23]
    );
    // Into big, back out: the cursor is on big again.
    assert!(m.apply(Action::Enter, 20).unwrap());
    assert_eq!(m.cwd(), "big");
    let rows: Vec<String> = m
        .render(80, 24)
        .unwrap()
        .iter()
        .map(|r| r.text().trim_end().to_string())
        .collect();
    assert!(rows[2].ends_with("/.."), "{}", rows[2]);
    assert!(rows[3].contains("  x.bin"));
    m.apply(Action::Back, 20).unwrap();
    assert_eq!(m.cwd(), "");
    m.apply(Action::End, 20).unwrap();
    m.apply(Action::Enter, 20).unwrap();
    assert_eq!(m.cwd(), "small");
    // Sort by name: small's children are deep/ then a.txt.
    m.apply(Action::Sort(ChildSort::Name), 20).unwrap();
    let rows: Vec<String> = m
        .render(80, 24)
        .unwrap()
        .iter()
        .map(|r| r.text().trim_end().to_string())
        .collect();
    assert!(
        rows[3].contains("  a.txt") && rows[4].contains("/deep"),
        "{rows:?}"
    );
    assert!(rows[23].contains("by name asc"));
    // Backspace from a directory we did not enter from (started there).
    let mut m = Ncdu::new(Archive::open(&p).unwrap(), "t", "small/deep").unwrap();
    m.apply(Action::Back, 20).unwrap();
    assert_eq!(m.cwd(), "small");
    let rows: Vec<String> = m
        .render(80, 24)
        .unwrap()
        .iter()
        .map(|r| r.text().trim_end().to_string())
        .collect();
    // The cursor (reversed row) is on deep: row 3 after `..`.
    assert!(rows[3].contains("/deep"), "{rows:?}");
    // Tiny and huge terminals draw without panicking.
    for (w, h) in [(1, 1), (10, 3), (0, 0), (300, 100)] {
        let r = m.render(w, h).unwrap();
        assert!(r.len() <= h);
    }
    assert!(Ncdu::new(Archive::open(&p).unwrap(), "t", "top.txt").is_err());
    assert!(Ncdu::new(Archive::open(&p).unwrap(), "t", "nope").is_err());
}

#[test]
fn browse_previews_text_binary_and_directories() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("b.barecat");
    let mut w = ArchiveWriter::open(&p, WriterOptions::with_mode(CreateMode::New)).unwrap();
    w.add_file(
        "docs/readme.txt",
        Meta::default(),
        b"line one\nline two\n",
        None,
    )
    .unwrap();
    w.add_file("docs/blob.bin", Meta::default(), &[0u8, 1, 2, 255], None)
        .unwrap();
    w.add_file("z.txt", Meta::default(), b"z", None).unwrap();
    w.finish().unwrap();
    let mut b = Browser::new(Archive::open(&p).unwrap(), "").unwrap();
    let text = |b: &mut Browser| -> Vec<String> {
        b.render(80, 24)
            .unwrap()
            .iter()
            .map(|r| r.text().trim_end().to_string())
            .collect()
    };
    let rows = text(&mut b);
    assert_eq!(rows.len(), 24);
    // Middle column: docs/ then z.txt; preview: docs' children, dirs first.
    assert!(rows[0].contains("│docs/"), "{rows:?}");
    assert!(rows[1].contains("│z.txt"));
    assert!(rows[0].contains("│blob.bin") || rows[0].ends_with("blob.bin"));
    assert!(rows[23].contains("/ | 2 items"), "{}", rows[23]);
    b.key(Key::Char('l'), 23).unwrap();
    assert_eq!(b.cwd(), "docs");
    let rows = text(&mut b);
    // The parent column shows the root with docs selected.
    assert!(rows[0].starts_with("docs/"), "{rows:?}");
    // blob.bin is first: a hex dump.
    assert!(rows.iter().any(|r| r.contains("00 01 02 ff")), "{rows:?}");
    b.key(Key::Char('j'), 23).unwrap();
    let rows = text(&mut b);
    assert!(rows.iter().any(|r| r.contains("line two")), "{rows:?}");
    assert!(rows.iter().any(|r| r.contains("18 bytes")), "{rows:?}");
    b.key(Key::Tab, 23).unwrap();
    assert_eq!(b.focus(), super::browse::Focus::Preview);
    b.key(Key::Char('j'), 23).unwrap();
    b.key(Key::Char('h'), 23).unwrap();
    assert_eq!(b.focus(), super::browse::Focus::List);
    b.key(Key::Char('h'), 23).unwrap();
    assert_eq!(b.cwd(), "");
    let rows = text(&mut b);
    assert!(rows[0].contains("docs/"));
    assert!(!b.key(Key::Char('q'), 23).unwrap());
    for (w, h) in [(1, 1), (20, 2), (300, 80)] {
        let r = b.render(w, h).unwrap();
        assert!(r.len() <= h);
    }
}

fn run(sh: &mut Shell, line: &str) -> (Status, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let st = sh
        .run_line(
            line,
            &mut Io {
                out: &mut out,
                err: &mut err,
            },
        )
        .unwrap();
    (
        st,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

#[test]
fn shell_commands() {
    let t = tempfile::tempdir().unwrap();
    let p = sample(t.path());
    let mut sh = Shell::open(&p, false).unwrap();
    assert_eq!(run(&mut sh, "pwd").1, "/\n");
    assert_eq!(run(&mut sh, "cd small").0, Status::Ok);
    assert_eq!(sh.prompt(), "barecat:/small> ");
    assert_eq!(run(&mut sh, "ls").1, "a.txt\ndeep/\n");
    assert_eq!(run(&mut sh, "cat a.txt").1, "abcdefghij\n");
    assert_eq!(run(&mut sh, "head -n 3 deep/b.txt").1, "abc\n");
    assert_eq!(
        run(&mut sh, "stat /small"),
        (
            Status::Ok,
            "   Dir: /small\n Files: 1 (direct)\n Total: 2 files, 30 bytes\n".into(),
            String::new()
        )
    );
    let (st, out, err) = run(&mut sh, "cat nope");
    assert_eq!((st, out.as_str()), (Status::Failed, ""));
    assert_eq!(err, "cat: small/nope: No such file\n");
    assert_eq!(run(&mut sh, "cd ..").0, Status::Ok);
    assert_eq!(
        run(&mut sh, "cd top.txt").2,
        "cd: not a directory: top.txt\n"
    );
    assert_eq!(
        run(&mut sh, "find -name '*.txt'").1,
        "small/a.txt\nsmall/deep/b.txt\ntop.txt\n"
    );
    assert_eq!(run(&mut sh, "du").1, "10130\t.\n");
    assert_eq!(run(&mut sh, "put x y").0, Status::Failed);
    assert_eq!(run(&mut sh, "frob").2, "Unknown command: frob\n");
    assert_eq!(run(&mut sh, "quit").0, Status::Quit);
    assert_eq!(run(&mut sh, ".pwd").1, "/\n");
    let (st, out, _) = run(
        &mut sh,
        "sql SELECT path, size FROM files WHERE size < 50 ORDER BY path",
    );
    assert_eq!(st, Status::Ok);
    assert_eq!(
        out,
        format!(
            "path\tsize\n{}\nsmall/a.txt\t10\nsmall/deep/b.txt\t20\n(2 rows)\n",
            "-".repeat(40)
        )
    );
    assert_eq!(run(&mut sh, "sql DELETE FROM files").0, Status::Failed);
    // Globs in arguments: cat of two files.
    assert_eq!(run(&mut sh, "cat small/*.txt").1, "abcdefghij\n");
    // Completion.
    let (start, c) = sh.complete("cd sm", 5);
    assert_eq!((start, c), (3, vec!["small/".to_string()]));
    let (_, c) = sh.complete("cat small/", 10);
    assert_eq!(
        c,
        vec!["small/deep/".to_string(), "small/a.txt".to_string()]
    );
    let (_, c) = sh.complete("cd small/", 9);
    assert_eq!(c, vec!["small/deep/".to_string()]);
    let (_, c) = sh.complete("ls", 2);
    assert_eq!(c, vec!["ls ".to_string(), "lss ".to_string()]);
}

#[test]
fn shell_writes() {
    let t = tempfile::tempdir().unwrap();
    let p = sample(t.path());
    let local = t.path().join("local");
    std::fs::create_dir(&local).unwrap();
    std::fs::write(local.join("n1.txt"), b"new one").unwrap();
    std::fs::write(local.join("n2.txt"), b"new two").unwrap();
    let mut sh = Shell::open(&p, true).unwrap();
    let l = local.display().to_string();
    assert_eq!(
        run(&mut sh, &format!("lcd {l}")).1,
        format!("Local directory: {l}\n")
    );
    assert_eq!(run(&mut sh, "lls").1, "n1.txt\nn2.txt\n");
    assert_eq!(
        run(&mut sh, "put n1.txt docs/n1.txt").1,
        format!("Added: {l}/n1.txt -> docs/n1.txt\n")
    );
    assert_eq!(run(&mut sh, "cat docs/n1.txt").1, "new one\n");
    let (st, out, _) = run(&mut sh, "mput *.txt docs2");
    assert_eq!(st, Status::Ok);
    assert!(out.ends_with("Added 2 files\n"), "{out}");
    assert_eq!(
        run(&mut sh, "mv docs2/n2.txt docs2/m.txt").1,
        "Renamed: docs2/n2.txt -> docs2/m.txt\n"
    );
    assert_eq!(run(&mut sh, "rm docs2/m.txt").1, "Removed: docs2/m.txt\n");
    assert_eq!(run(&mut sh, "rm docs2").0, Status::Failed);
    std::fs::create_dir(local.join("out")).unwrap();
    assert_eq!(
        run(&mut sh, "get small out").1,
        format!("Extracted 2 files to {l}/out\n")
    );
    assert_eq!(
        std::fs::read(local.join("out/deep/b.txt")).unwrap(),
        b"abcdefghijklmnopqrst"
    );
    let d = crate::Archive::open(&p).unwrap();
    assert!(d.exists("docs2/n1.txt").unwrap());
    assert!(!d.exists("docs2/m.txt").unwrap());
    let opts = crate::maint::verify::VerifyOptions {
        quick: false,
        workers: 1,
        index_mode: Default::default(),
    };
    let r = crate::maint::verify::verify(&p, &opts, &crate::core::progress::Progress::hidden())
        .unwrap();
    assert!(r.ok, "the archive verifies: {r:?}");
}
