//! The full-screen programs (`barecat ncdu`, `barecat browse`) and the interactive
//! shell, driven in a real terminal: tmux runs them (80×24 unless said
//! otherwise), `send-keys` types, `capture-pane` reads the screen, and the tests
//! check what a person would see. Every wait polls the screen until the expected
//! text appears or a deadline passes (then the screen is printed). After each
//! program ends, the shell around it checks that the terminal settings are back
//! as they were (`stty -g` before and after).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::support::maint::*;
use crate::support::process::CommandExt;
use crate::support::*;

/// A tmux server of its own (a socket per test) with one session.
struct Tmux {
    socket: String,
}

static NEXT: AtomicUsize = AtomicUsize::new(0);

fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

impl Tmux {
    /// Start `program args…` in a `w`×`h` terminal, inside a shell that prints
    /// `EXIT=<status>` when it ends and whether the terminal settings were
    /// restored (`TERMINAL-RESTORED` or `TERMINAL-CHANGED`).
    fn start(program: &Path, args: &[&str], w: u16, h: u16) -> Tmux {
        let socket = format!(
            "barecat-tui-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        );
        let mut line = sh_quote(&program.display().to_string());
        for a in args {
            line.push(' ');
            line.push_str(&sh_quote(a));
        }
        let script = format!(
            "s0=$(stty -g); {line}; echo EXIT=$?; \
             if [ \"$(stty -g)\" = \"$s0\" ]; then echo TERMINAL-RESTORED; \
             else echo TERMINAL-CHANGED; fi; sleep 600"
        );
        let st = Command::new("tmux")
            .args(["-L", &socket, "-f", "/dev/null", "new-session", "-d"])
            .args(["-x", &w.to_string(), "-y", &h.to_string(), "-s", "t"])
            .args(["/bin/sh", "-c", &script])
            .env("TERM", "xterm-256color")
            .env("HOME", std::env::temp_dir())
            .env("TZ", "UTC")
            .status_bounded()
            .unwrap();
        assert!(st.success(), "tmux new-session failed");
        let t = Tmux { socket };
        // The session's size, whatever the server's default.
        let _ = Command::new("tmux")
            .args(["-L", &t.socket, "resize-window", "-t", "t"])
            .args(["-x", &w.to_string(), "-y", &h.to_string()])
            .status_bounded();
        t
    }

    fn tmux(&self, args: &[&str]) -> String {
        let o = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output_bounded()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// Type keys (tmux key names: `Enter`, `BSpace`, `Down`, `C-c`, or text).
    fn keys(&self, keys: &[&str]) {
        for k in keys {
            self.tmux(&["send-keys", "-t", "t", k]);
        }
    }

    /// Type text literally.
    fn text(&self, s: &str) {
        self.tmux(&["send-keys", "-t", "t", "-l", s]);
    }

    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "t"])
    }

    /// Wait until `pred` holds for the screen (at most 20 s); returns the screen.
    fn wait(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let s = self.screen();
            if pred(&s) {
                return s;
            }
            if Instant::now() > deadline {
                panic!("timed out waiting for {what}; the screen:\n{s}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn wait_for(&self, text: &str) -> String {
        self.wait(text, |s| s.contains(text))
    }

    fn resize(&self, w: u16, h: u16) {
        self.tmux(&[
            "resize-window",
            "-t",
            "t",
            "-x",
            &w.to_string(),
            "-y",
            &h.to_string(),
        ]);
    }

    /// Wait for the program to end; check its status and that the terminal was
    /// given back as it was.
    fn ended(&self, status: i32) -> String {
        let s = self.wait("the program to end", |s| s.contains("TERMINAL-"));
        assert!(
            s.contains(&format!("EXIT={status}")),
            "exit status; screen:\n{s}"
        );
        assert!(
            s.contains("TERMINAL-RESTORED"),
            "terminal settings; screen:\n{s}"
        );
        s
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status_bounded();
    }
}

/// An archive with directories of different sizes, made by Python barecat when it
/// is there (so both ncdus see the same archive), else by us.
fn sample(dir: &Path) -> PathBuf {
    let a = dir.join("s.barecat");
    let mut files: Vec<(String, Vec<u8>)> = vec![
        ("big/huge.bin".into(), pseudo_random(1, 3_000_000)),
        ("big/medium.bin".into(), pseudo_random(2, 700_000)),
        (
            "docs/readme.txt".into(),
            b"Read me first.\nSecond line.\n".to_vec(),
        ),
        ("docs/blob.dat".into(), vec![0, 1, 2, 3, 254, 255]),
        ("top.txt".into(), b"top level file\n".to_vec()),
    ];
    for i in 0..40 {
        files.push((format!("many/f{i:03}.txt"), vec![b'x'; 100 + i * 10]));
    }
    build(&a, None, &files);
    a
}

/// The rows of an ncdu screen: name → (size, count, bar).
fn ncdu_rows(screen: &str) -> BTreeMap<String, (String, String, String)> {
    let mut out = BTreeMap::new();
    for line in screen.lines().skip(2) {
        let chars: Vec<char> = line.chars().collect();
        if chars.len() < 44 || !line.contains('[') {
            continue;
        }
        let s = |a: usize, b: usize| chars[a..b.min(chars.len())].iter().collect::<String>();
        let name = s(43, chars.len()).trim().to_string();
        out.insert(
            name,
            (
                s(0, 12).trim().to_string(),
                s(12, 19).trim().to_string(),
                s(19, 41),
            ),
        );
    }
    out
}

/// Python barecat's ncdu size format.
fn py_size(size: u64) -> String {
    if size < 1024 {
        return format!("{size} B");
    }
    let mut v = size as f64;
    for u in ["K", "M", "G", "T", "P"] {
        v /= 1024.0;
        if v < 1000.0 {
            return format!("{v:.1} {u}iB");
        }
    }
    format!("{v:.1} EiB")
}

/// ncdu shows every directory's total size and file count as `barecat du` and the
/// index say, and the same rows as Python barecat's ncdu (which lists directories
/// before files; ours sorts them together by size, as ncdu does).
#[test]
fn ncdu_sizes_and_counts_match_du_and_pythons_ncdu() {
    need!("tmux", "barecat");
    let t = tempfile::tempdir().unwrap();
    let a = sample(t.path());
    let tm = Tmux::start(&bin("barecat"), &["ncdu", &a.display().to_string()], 80, 24);
    let ours = tm.wait_for("Total:");
    // The header and footer.
    let first = ours.lines().next().unwrap();
    assert!(
        first.starts_with("--- ") && first.contains(": / "),
        "{ours}"
    );
    assert!(ours.contains("| 45 files | 4 items"), "{ours}");
    let rows = ncdu_rows(&ours);
    // Sizes from `barecat du -a` (bytes), counts from the directory statistics.
    let du = run_ok(
        bin("barecat"),
        [
            "du".as_ref(),
            "-a".as_ref(),
            a.as_os_str(),
            "-d".as_ref(),
            "1".as_ref(),
        ],
    );
    let mut sizes = BTreeMap::new();
    for l in du.lines() {
        let (size, path) = l.split_once('\t').unwrap();
        sizes.insert(path.to_string(), size.parse::<u64>().unwrap());
    }
    for (name, path, files) in [
        ("/big", "big", "2"),
        ("/docs", "docs", "2"),
        ("/many", "many", "40"),
        ("top.txt", "top.txt", "1"),
    ] {
        let (size, count, _) = rows.get(name).unwrap_or_else(|| panic!("{name} in {ours}"));
        assert_eq!(*size, py_size(sizes[path]), "{name}");
        assert_eq!(count, files, "{name}");
    }
    // Largest first: big is the first row, selected.
    let third = ours.lines().nth(2).unwrap();
    assert!(third.ends_with("/big"), "{ours}");
    tm.keys(&["q"]);
    tm.ended(0);
    // Python barecat's ncdu on the same archive shows the same rows.
    let py = Tmux::start(&py_barecat(), &["ncdu", &a.display().to_string()], 80, 24);
    let theirs = py.wait_for("Total:");
    assert_eq!(ncdu_rows(&theirs), rows, "python:\n{theirs}\nours:\n{ours}");
    py.keys(&["q"]);
    py.ended(0);
}

#[test]
fn ncdu_keys_help_sorting_and_quitting() {
    need!("tmux");
    let t = tempfile::tempdir().unwrap();
    let a = sample(t.path());
    let tm = Tmux::start(&bin("barecat"), &["ncdu", &a.display().to_string()], 80, 24);
    tm.wait_for("Total:");
    // Down once: many (by size: big, many, docs, top.txt); enter it.
    tm.keys(&["j", "Enter"]);
    let s = tm.wait_for(": /many ");
    assert!(s.contains("/.."), "{s}");
    assert!(s.contains("f039.txt"), "largest file first: {s}");
    // Sort by name: f000.txt first after `..`.
    tm.keys(&["n"]);
    let s = tm.wait_for("by name asc");
    let row3 = s.lines().nth(3).unwrap();
    assert!(row3.ends_with("f000.txt"), "{s}");
    // End, then Page Up, then Home, within the 40 files.
    tm.keys(&["G"]);
    tm.wait("the last file", |s| {
        s.contains("f039.txt") && !s.contains("f000.txt")
    });
    tm.keys(&["g"]);
    tm.wait("the first rows", |s| s.contains("f000.txt"));
    // Back with Backspace: the root, with `many` selected.
    tm.keys(&["BSpace"]);
    let s = tm.wait_for(": / ");
    assert!(s.contains("/many"), "{s}");
    // Help and any key to close it.
    tm.keys(&["?"]);
    tm.wait_for("press any key");
    tm.keys(&["x"]);
    tm.wait("the help closed", |s| !s.contains("press any key"));
    // Vim keys and arrows go down and up without leaving the list.
    tm.keys(&["Down", "Up", "k", "l"]);
    tm.wait_for(": /big ");
    tm.keys(&["h", "q"]);
    tm.ended(0);
    // Ctrl-C quits too, and gives the terminal back.
    let tm = Tmux::start(
        &bin("barecat"),
        &["ncdu", &a.display().to_string(), "many"],
        80,
        24,
    );
    tm.wait_for(": /many ");
    tm.keys(&["C-c"]);
    tm.ended(0);
}

#[test]
fn ncdu_follows_a_resized_terminal() {
    need!("tmux");
    let t = tempfile::tempdir().unwrap();
    let a = sample(t.path());
    let tm = Tmux::start(&bin("barecat"), &["ncdu", &a.display().to_string()], 80, 24);
    tm.wait_for("Total:");
    tm.resize(120, 40);
    let s = tm.wait("a wider header", |s| {
        s.lines()
            .next()
            .is_some_and(|l| l.trim_end().chars().count() == 120)
    });
    // The footer moved to the new last line.
    assert!(
        s.lines().nth(39).is_some_and(|l| l.contains("Total:")),
        "{s}"
    );
    tm.resize(40, 10);
    let s = tm.wait("a narrow header", |s| {
        s.lines()
            .next()
            .is_some_and(|l| l.trim_end().chars().count() == 40)
    });
    assert!(
        s.lines().nth(9).is_some_and(|l| l.contains("Total:")),
        "{s}"
    );
    tm.keys(&["q"]);
    tm.ended(0);
}

/// With stdout not a terminal, the full-screen programs refuse with one line and
/// exit status 2.
#[test]
fn full_screen_programs_need_a_terminal() {
    let t = tempfile::tempdir().unwrap();
    let a = sample(t.path());
    for cmd in ["ncdu", "browse"] {
        let o = run_t(bin("barecat"), [cmd.as_ref(), a.as_os_str()]);
        assert_eq!(code(&o), 2, "{cmd}");
        let err = stderr(&o);
        assert!(err.contains("not a terminal"), "{cmd}: {err}");
        assert!(o.stdout.is_empty());
        let o = run_t(bin(&format!("barecat-{cmd}")), [a.as_os_str()]);
        assert_eq!(code(&o), 2, "barecat-{cmd}");
    }
}

#[test]
fn browse_moves_through_columns_and_previews_files() {
    need!("tmux");
    let t = tempfile::tempdir().unwrap();
    let a = sample(t.path());
    let tm = Tmux::start(
        &bin("barecat"),
        &["browse", &a.display().to_string()],
        80,
        24,
    );
    // The middle column: directories first, then files, by name; big/ selected,
    // its contents in the preview.
    let s = tm.wait_for("q:quit");
    assert!(s.contains("│big/"), "{s}");
    assert!(s.contains("huge.bin"), "preview of big/: {s}");
    assert!(s.contains(" / | 4 items"), "{s}");
    // Down to docs/, into it: the parent column shows the root with docs/.
    tm.keys(&["j", "l"]);
    let s = tm.wait_for("/docs | 2 items");
    assert!(s.lines().next().unwrap().starts_with("big/"), "{s}");
    // blob.dat (binary) first: a hex dump; then readme.txt: its lines.
    let s = tm.wait_for("00 01 02 03");
    assert!(s.contains("6 bytes"), "{s}");
    tm.keys(&["Down"]);
    let s = tm.wait_for("Second line.");
    assert!(s.contains("Read me first."), "{s}");
    // Tab to the preview and back, G/g, page keys: still in docs.
    tm.keys(&["Tab", "j", "Tab", "G", "g", "NPage", "PPage"]);
    tm.wait_for("/docs | 2 items");
    // Back to the root with h; q quits and gives the terminal back.
    tm.keys(&["h"]);
    tm.wait_for(" / | 4 items");
    tm.keys(&["q"]);
    tm.ended(0);
}

/// A damaged archive found while browsing: the program stops with a one-line
/// error (exit status 1) and the terminal is given back.
#[test]
fn browse_stops_cleanly_on_a_damaged_archive() {
    need!("tmux");
    let t = tempfile::tempdir().unwrap();
    let a = sample(t.path());
    let tm = Tmux::start(
        &bin("barecat"),
        &["browse", &a.display().to_string()],
        80,
        24,
    );
    tm.wait_for("q:quit");
    // Damage the index under it: garbage over its pages.
    let len = std::fs::metadata(&a).unwrap().len();
    std::fs::write(&a, vec![0x55u8; len as usize]).unwrap();
    tm.keys(&["j", "l", "h", "l"]);
    let s = tm.ended(1);
    let err: Vec<&str> = s
        .lines()
        .filter(|l| l.contains("barecat browse:"))
        .collect();
    assert_eq!(err.len(), 1, "one line of error: {s}");
    assert!(err[0].contains("s.barecat"), "it names the archive: {s}");
}

/// The shell in a terminal: the prompt, Tab completion of archive paths, history,
/// Ctrl-C at the prompt, and quitting with Ctrl-D.
#[test]
fn shell_completes_paths_and_keeps_history() {
    need!("tmux");
    let t = tempfile::tempdir().unwrap();
    let a = sample(t.path());
    let tm = Tmux::start(
        &bin("barecat"),
        &["shell", &a.display().to_string()],
        80,
        24,
    );
    tm.wait_for("barecat:/>");
    tm.text("cd ma");
    tm.keys(&["Tab"]);
    tm.wait_for("cd many/");
    tm.keys(&["Enter"]);
    tm.wait_for("barecat:/many>");
    tm.text("cat f00");
    // Ten candidates: listed at the second Tab (the first completes what they
    // share).
    tm.keys(&["Tab", "Tab"]);
    tm.wait_for("f009.txt");
    tm.text("7.txt");
    tm.keys(&["Enter"]);
    tm.wait_for("xxxxxxxxxx");
    // History: Up brings the last command back.
    tm.keys(&["C-u"]);
    tm.text("pwd");
    tm.keys(&["Enter"]);
    tm.wait_for("/many\n");
    tm.keys(&["Up"]);
    tm.wait("pwd recalled", |s| {
        s.lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .is_some_and(|l| l.ends_with("> pwd"))
    });
    tm.keys(&["C-c"]);
    tm.wait_for("^C");
    tm.keys(&["C-d"]);
    tm.ended(0);
}
