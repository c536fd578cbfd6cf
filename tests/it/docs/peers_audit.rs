//! Every external program the tests run is either installed by `scripts/test.sh`
//! (a row of tests/peers.txt) or part of every Debian system, and every test that
//! uses a peer is guarded by `need!`, so a machine without it skips that test with
//! one line instead of failing it. Without this check the next peer a test adds
//! would break `./scripts/test.sh` on fresh machines again while CI stays green.
//!
//! The check reads the test sources: a function uses a peer when it names it as a
//! program (a string literal equal to it, or a shell command line starting with it)
//! or calls a function that does (followed through every function of tests/, by
//! name); a function running the test venv's Python (`python()`, `py_barecat()`)
//! uses a `pip` peer. A `#[test]` function must name each peer it uses in a `need!`
//! at its top level, and `need!` for at least one `pip` peer when it runs Python.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Programs of every Debian system (essential packages, coreutils, util-linux,
/// findutils, diffutils) and the machine's Python: no row needed.
const BASE: &[&str] = &[
    "sh", "bash", "true", "false", "env", "cat", "cp", "mv", "rm", "ls", "mkdir", "mkfifo", "ln",
    "chmod", "touch", "dd", "truncate", "sync", "sleep", "kill", "timeout", "head", "tail", "wc",
    "sort", "find", "xargs", "diff", "cmp", "stat", "unshare", "nsenter", "mount", "umount",
    "python3", "gzip", "grep", "sed",
];

/// A function of the test sources.
struct Func {
    file: PathBuf,
    is_test: bool,
    body: String,
    literals: Vec<String>,
}

/// Strip comments; return the code with string literals blanked (so braces inside
/// them do not count) and the list of literals in order of appearance.
fn lex(src: &str) -> (String, Vec<(usize, String)>) {
    let b = src.as_bytes();
    let mut code = String::with_capacity(src.len());
    let mut lits = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let end = src[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
            i = end;
        } else if b[i] == b'r' && matches!(b.get(i + 1), Some(b'"') | Some(b'#')) {
            // Raw string r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while j < b.len() && b[j] == b'#' {
                hashes += 1;
                j += 1;
            }
            if j < b.len() && b[j] == b'"' {
                let close = format!("\"{}", "#".repeat(hashes));
                let start = j + 1;
                let end = src[start..].find(&close).map_or(b.len(), |e| start + e);
                lits.push((code.len(), src[start..end].to_string()));
                code.push_str("\"\"");
                i = (end + close.len()).min(b.len());
            } else {
                code.push('r');
                i += 1;
            }
        } else if b[i] == b'"' {
            let mut j = i + 1;
            let mut s = String::new();
            while j < b.len() && b[j] != b'"' {
                if b[j] == b'\\' && j + 1 < b.len() {
                    s.push(b[j + 1] as char);
                    j += 2;
                } else {
                    let ch = src[j..].chars().next().unwrap();
                    s.push(ch);
                    j += ch.len_utf8();
                }
            }
            lits.push((code.len(), s));
            code.push_str("\"\"");
            i = j + 1;
        } else if b[i] == b'\'' && b.get(i + 2) == Some(&b'\'') {
            code.push_str("' '");
            i += 3;
        } else if b[i] == b'\'' && b.get(i + 1) == Some(&b'\\') {
            let end = src[i + 2..].find('\'').map_or(b.len(), |e| i + 2 + e + 1);
            code.push_str("' '");
            i = end;
        } else {
            let ch = src[i..].chars().next().unwrap();
            code.push(ch);
            i += ch.len_utf8();
        }
    }
    (code, lits)
}

fn functions(file: &Path, src: &str) -> BTreeMap<String, Vec<Func>> {
    let (code, lits) = lex(src);
    let mut out: BTreeMap<String, Vec<Func>> = BTreeMap::new();
    let bytes = code.as_bytes();
    let mut search = 0;
    while let Some(pos) = code[search..].find("fn ") {
        let at = search + pos;
        search = at + 3;
        if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
            continue;
        }
        let name: String = code[at + 3..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        // The body: from the first '{' after the signature (a ';' first means a
        // declaration without body) to its matching '}'.
        let Some(open_rel) = code[at..].find(['{', ';']) else {
            continue;
        };
        let open = at + open_rel;
        if bytes[open] == b';' {
            continue;
        }
        let mut depth = 0usize;
        let mut close = open;
        for (k, &c) in bytes[open..].iter().enumerate() {
            match c {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = open + k;
                        break;
                    }
                }
                _ => {}
            }
        }
        let before = &code[..at];
        let attrs = before
            .rfind(['}', ';'])
            .map_or(before, |p| &before[p + 1..]);
        let is_test = attrs.contains("#[test]");
        let literals = lits
            .iter()
            .filter(|(p, _)| (open..=close).contains(p))
            .map(|(_, s)| s.clone())
            .collect();
        out.entry(name).or_default().push(Func {
            file: file.to_path_buf(),
            is_test,
            body: code[open..=close].to_string(),
            literals,
        });
    }
    out
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Does this string literal name `program` as a program: equal to it, or a shell
/// command line in which it is a command word?
fn names_program(lit: &str, program: &str) -> bool {
    if lit == program {
        return true;
    }
    let mut rest = lit;
    while let Some(p) = rest.find(program) {
        let before = rest[..p].trim_end_matches([' ', '\t']);
        let after = rest[p + program.len()..].chars().next();
        let command_position = before.is_empty()
            || before.ends_with('|')
            || before.ends_with(';')
            || before.ends_with("&&")
            || before.ends_with("$(")
            || before.ends_with('\n')
            || before.ends_with('(');
        if command_position && matches!(after, None | Some(' ') | Some('\n')) {
            return true;
        }
        rest = &rest[p + program.len()..];
    }
    false
}

/// Identifiers followed by `(` in a body: the functions it calls.
fn calls(body: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let b = body.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_alphabetic() || b[i] == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            if b.get(i) == Some(&b'(') {
                out.insert(body[start..i].to_string());
            }
        } else {
            i += 1;
        }
    }
    out
}

/// The peers named by `need!(...)` at the top level of a test body.
fn needs_declared(body: &str, literals: &[String]) -> BTreeSet<String> {
    // Literals are blanked in `body`; re-find them by counting "" positions.
    let mut out = BTreeSet::new();
    let mut lit_index = 0;
    let mut i = 0;
    let mut depth = 0usize;
    let b = body.as_bytes();
    let mut in_need: Option<usize> = None;
    while i < b.len() {
        if b[i..].starts_with(b"\"\"") {
            if in_need.is_some() {
                out.insert(literals[lit_index].clone());
            }
            lit_index += 1;
            i += 2;
            continue;
        }
        match b[i] {
            b'{' => depth += 1,
            b'}' => depth = depth.saturating_sub(1),
            b')' if in_need.is_some() => in_need = None,
            _ => {}
        }
        if depth == 1 && b[i..].starts_with(b"need!(") {
            in_need = Some(i);
            i += 6;
            continue;
        }
        i += 1;
    }
    out
}

/// The helper files a test file (or a helper file) can call into: the helpers of
/// `tests/it/support/` are one module per file, `support/NAME.rs` for
/// `support::NAME`. A helper file sees every helper file; a test file sees
/// `support/mod.rs` (its glob-imported root, which re-exports `process`) and every
/// `support/NAME.rs` it names by path (`support::NAME::...` or `support::NAME::*`).
fn scope(file: &Path, src: &str, shared: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = vec![file.to_path_buf()];
    let stem = |p: &PathBuf| p.file_stem().unwrap().to_string_lossy().into_owned();
    if shared.iter().any(|p| p == file) {
        out.extend(shared.iter().filter(|p| *p != file).cloned());
        return out;
    }
    for p in shared {
        let name = stem(p);
        let root = name == "mod" || name == "process";
        if root || src.contains(&format!("support::{name}::")) {
            out.push(p.clone());
        }
    }
    out
}

#[test]
fn every_peer_is_installed_by_test_sh_or_guarded() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let peers = crate::support::peers();
    let apt: Vec<&str> = peers
        .iter()
        .filter(|p| p.kind == "apt")
        .map(|p| p.name.as_str())
        .collect();
    let pip: BTreeSet<&str> = peers
        .iter()
        .filter(|p| p.kind == "pip")
        .map(|p| p.name.as_str())
        .collect();

    // Diagnostics-only programs: known, never needing a guard.
    let diag: Vec<&str> = peers
        .iter()
        .filter(|p| p.kind == "diag")
        .map(|p| p.name.as_str())
        .collect();

    let mut files = Vec::new();
    rs_files(&repo.join("tests"), &mut files);
    files.sort();
    // This file's own fixtures are not uses.
    files.retain(|f| !f.ends_with("peers_audit.rs"));
    let support = repo.join("tests/it/support");
    let shared: Vec<PathBuf> = files
        .iter()
        .filter(|f| f.starts_with(&support))
        .cloned()
        .collect();
    assert!(
        shared.len() >= 5 && shared.iter().any(|f| f.ends_with("support/mod.rs")),
        "the helpers are no longer in tests/it/support/: adapt this scanner"
    );

    // Functions keyed by (file, name).
    let mut funcs: BTreeMap<(PathBuf, String), Vec<Func>> = BTreeMap::new();
    let mut scopes: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
    let mut problems = Vec::new();
    for f in &files {
        let src = fs::read_to_string(f).unwrap();
        scopes.insert(f.clone(), scope(f, &src, &shared));
        for (name, list) in functions(f, &src) {
            funcs.entry((f.clone(), name)).or_default().extend(list);
        }
        // Programs started by literal name must be known.
        let (code, lits) = lex(&src);
        for (pos, lit) in &lits {
            if code[..*pos].ends_with("Command::new(") {
                let prog = lit.as_str();
                if !BASE.contains(&prog)
                    && !apt.contains(&prog)
                    && !diag.contains(&prog)
                    && !prog.contains('/')
                {
                    problems.push(format!(
                        "{}: runs {prog:?}, which is neither in tests/peers.txt nor a base program",
                        f.strip_prefix(repo).unwrap().display()
                    ));
                }
            }
        }
    }

    // Direct uses of each function.
    // The README test runs the examples of README.md and of docs/GUIDE.md.
    let readme = fs::read_to_string(repo.join("README.md")).unwrap()
        + &fs::read_to_string(repo.join("docs/GUIDE.md")).unwrap();
    let mut uses: BTreeMap<(PathBuf, String), BTreeSet<String>> = BTreeMap::new();
    for (key, list) in &funcs {
        let u = uses.entry(key.clone()).or_default();
        for f in list {
            for lit in &f.literals {
                for p in &apt {
                    if names_program(lit, p) {
                        u.insert(p.to_string());
                    }
                }
            }
            let called = calls(&f.body);
            if key.1 != "python" && (called.contains("python") || called.contains("py_barecat")) {
                u.insert("<python>".into());
            }
        }
        if key.1 == "readme_examples_run_as_written" {
            for line in readme.lines() {
                for p in &apt {
                    if names_program(line.trim(), p) || line.contains(&format!("| {p} ")) {
                        u.insert(p.to_string());
                    }
                }
            }
        }
    }
    // Calls resolved in the caller's scope: its own file first, then its modules.
    let resolve = |file: &PathBuf, name: &str| -> Option<(PathBuf, String)> {
        scopes[file]
            .iter()
            .map(|f| (f.clone(), name.to_string()))
            .find(|k| funcs.contains_key(k))
    };
    let edges: BTreeMap<(PathBuf, String), BTreeSet<(PathBuf, String)>> = funcs
        .iter()
        .map(|(key, list)| {
            let mut c = BTreeSet::new();
            for f in list {
                for name in calls(&f.body) {
                    if let Some(k) = resolve(&key.0, &name) {
                        if &k != key {
                            c.insert(k);
                        }
                    }
                }
            }
            (key.clone(), c)
        })
        .collect();
    loop {
        let mut changed = false;
        for (key, callees) in &edges {
            let add: BTreeSet<String> = callees.iter().flat_map(|c| uses[c].clone()).collect();
            let u = uses.get_mut(key).unwrap();
            for a in add {
                changed |= u.insert(a);
            }
        }
        if !changed {
            break;
        }
    }

    let mut tests = 0;
    for (key, list) in &funcs {
        let name = &key.1;
        for f in list.iter().filter(|f| f.is_test) {
            tests += 1;
            let declared = needs_declared(&f.body, &f.literals);
            for u in &uses[key] {
                let ok = if u == "<python>" {
                    declared.iter().any(|d| pip.contains(d.as_str()))
                } else {
                    declared.contains(u)
                };
                if !ok {
                    let what = if u == "<python>" {
                        "the test venv's Python (need! a pip peer)".to_string()
                    } else {
                        format!("{u} (need!(\"{u}\"))")
                    };
                    problems.push(format!(
                        "{}: test {name} uses {what} without guarding it",
                        f.file.strip_prefix(repo).unwrap().display()
                    ));
                }
            }
            for d in &declared {
                assert!(
                    peers.iter().any(|p| &p.name == d),
                    "{}: test {name}: need!({d:?}) names no peer of tests/peers.txt",
                    f.file.display()
                );
            }
        }
    }
    assert!(
        tests > 100,
        "found only {tests} tests: the scanner is broken"
    );
    assert!(
        problems.is_empty(),
        "{} problem(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn the_scanner_sees_uses_through_helpers_and_shell_lines() {
    let src = r#"
        fn helper() { run_ok("bsdtar", ["-tf"]); }
        fn shell() { run("bash", ["-c", "cd x && tar -cf - . | zip -q y -"]); }
        fn py_user() { run_ok(python(), ["x.py"]); }
        #[test]
        fn guarded() { need!("bsdtar"); helper(); }
        #[test]
        fn unguarded() { if x { need!("bsdtar"); } helper(); }
        #[test]
        fn text_only() { assert!(msg.contains("not a tar archive")); }
    "#;
    let funcs = functions(Path::new("x.rs"), src);
    assert!(funcs["helper"][0].literals.iter().any(|l| l == "bsdtar"));
    assert!(funcs["guarded"][0].is_test && !funcs["helper"][0].is_test);
    assert!(funcs["shell"][0]
        .literals
        .iter()
        .any(|l| names_program(l, "tar")));
    assert!(funcs["shell"][0]
        .literals
        .iter()
        .any(|l| names_program(l, "zip")));
    assert!(!funcs["text_only"][0]
        .literals
        .iter()
        .any(|l| names_program(l, "tar")));
    assert!(calls(&funcs["py_user"][0].body).contains("python"));
    let g = &funcs["guarded"][0];
    assert!(needs_declared(&g.body, &g.literals).contains("bsdtar"));
    let u = &funcs["unguarded"][0];
    assert!(
        needs_declared(&u.body, &u.literals).is_empty(),
        "nested need! counts"
    );
}
