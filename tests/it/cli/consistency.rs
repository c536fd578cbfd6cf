//! The same option means the same thing in every command: `-q`, `-j N`, `-s SIZE`,
//! `-f`, and `--json` where the output is data. Usage errors exit with status 2.

use std::ffi::OsStr;
use std::path::Path;

use crate::support::*;

fn sample(dir: &Path) -> std::path::PathBuf {
    write_tree(
        &dir.join("src"),
        &[
            ("a/x.txt", b"hello\n"),
            ("a/b/y.bin", &[7u8; 3000]),
            ("z", b""),
        ],
    );
    let arch = dir.join("s.barecat");
    run_ok(
        bin("barecat-create"),
        [
            OsStr::new("-q"),
            OsStr::new("-C"),
            dir.join("src").as_os_str(),
            arch.as_os_str(),
            OsStr::new("a"),
            OsStr::new("z"),
        ],
    );
    arch
}

fn help(cmd: &str) -> String {
    run_ok(bin(&format!("barecat-{cmd}")), ["--help"])
}

#[test]
fn shared_options_are_described_alike() {
    // -q: no progress bar, no summary.
    for cmd in [
        "create",
        "from-tar",
        "from-zip",
        "extract",
        "to-zip",
        "to-tar",
        "verify",
        "defrag",
        "merge",
        "merge-symlink",
    ] {
        assert!(
            help(cmd).contains("-q, --quiet"),
            "barecat-{cmd} has no -q/--quiet"
        );
    }
    // -j N: threads.
    for cmd in [
        "create", "from-zip", "extract", "to-zip", "to-tar", "verify",
    ] {
        assert!(help(cmd).contains("-j, --workers <N>"), "barecat-{cmd}: -j");
    }
    // -s SIZE: the shard size limit, wherever shards are written.
    for cmd in ["create", "from-tar", "from-zip", "merge"] {
        assert!(
            help(cmd).contains("-s, --shard-size-limit <SIZE>"),
            "barecat-{cmd}: -s"
        );
    }
    // -f: replace what exists at the output.
    for cmd in [
        "create",
        "from-tar",
        "from-zip",
        "extract",
        "to-zip",
        "to-tar",
        "merge",
        "merge-symlink",
    ] {
        assert!(help(cmd).contains("-f, --"), "barecat-{cmd}: -f");
    }
    // --json where the output is data.
    for cmd in ["ls", "du", "verify", "defrag", "sidecar"] {
        assert!(help(cmd).contains("--json"), "barecat-{cmd}: --json");
    }
    // --no-sidecar: every command that finishes an archive writes its sidecar.
    for cmd in [
        "create",
        "from-tar",
        "from-zip",
        "merge",
        "merge-symlink",
        "defrag",
        "repair",
    ] {
        let h = help(cmd);
        assert!(
            h.contains("--no-sidecar") && h.contains("Do not write the B-tree sidecar"),
            "barecat-{cmd}: --no-sidecar"
        );
    }
}

#[test]
fn shared_option_values_are_checked_alike() {
    let dir = tempfile::tempdir().unwrap();
    let arch = sample(dir.path());
    let a = arch.to_str().unwrap();
    // A bad -j or -s is a usage error (exit 2) in every command that takes it.
    for (cmd, args) in [
        ("create", vec!["-j", "0", "x.barecat", "src"]),
        ("from-zip", vec!["-j", "none", "in.zip", "x.barecat"]),
        ("extract", vec!["-j", "0", a]),
        ("to-tar", vec!["-j", "-3", a, "-"]),
        ("verify", vec!["-j", "0", a]),
        ("create", vec!["-s", "10Q", "x.barecat", "src"]),
        ("from-tar", vec!["-s", "0", "in.tar", "x.barecat"]),
        ("merge", vec!["-s", "huge", "-o", "x.barecat", a]),
    ] {
        let o = run(bin(&format!("barecat-{cmd}")), &args);
        assert_eq!(o.status.code(), Some(2), "barecat-{cmd} {args:?}");
        assert!(!String::from_utf8_lossy(&o.stderr).contains("panicked"));
    }
    // Sizes like 10G, 1.5M, 64KiB are accepted everywhere.
    for size in ["10G", "1.5M", "64KiB", "4096"] {
        let out = dir.path().join(format!("s{size}.barecat"));
        run_ok(
            bin("barecat-merge"),
            ["-q", "-s", size, "-o", out.to_str().unwrap(), a],
        );
    }
}

#[test]
fn json_outputs_parse() {
    let dir = tempfile::tempdir().unwrap();
    let arch = sample(dir.path());
    let a = arch.to_str().unwrap();
    for line in run_ok(bin("barecat-ls"), ["--json", "-R", a]).lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["type"], "file");
    }
    // Python barecat's spelling is accepted too.
    let jsonl = run_ok(bin("barecat-ls"), ["--jsonl", a]);
    assert!(jsonl.lines().count() >= 2);
    for line in run_ok(bin("barecat-du"), ["--json", "-a", a]).lines() {
        let _: serde_json::Value = serde_json::from_str(line).unwrap();
    }
    let v: serde_json::Value =
        serde_json::from_str(&run_ok(bin("barecat-verify"), ["--json", a])).unwrap();
    assert_eq!(v["ok"], true);
    let v: serde_json::Value =
        serde_json::from_str(&run_ok(bin("barecat-defrag"), ["--dry-run", "--json", a])).unwrap();
    assert_eq!(v["summary"]["live_bytes"], 3006);
    let v: serde_json::Value =
        serde_json::from_str(&run_ok(bin("barecat-defrag"), ["--json", a])).unwrap();
    assert_eq!(v["nothing_to_do"], true);
}

#[test]
fn extract_force_means_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let arch = sample(dir.path());
    let out = dir.path().join("out");
    let args = |extra: &[&'static str]| {
        let mut v: Vec<String> = vec!["-q".into(), arch.to_str().unwrap().into()];
        v.extend(["-C".into(), out.to_str().unwrap().into()]);
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    run_ok(bin("barecat-extract"), args(&[]));
    std::fs::write(out.join("a/x.txt"), b"changed").unwrap();
    let o = run(bin("barecat-extract"), args(&[]));
    assert_eq!(
        o.status.code(),
        Some(1),
        "an existing file is not overwritten"
    );
    assert_eq!(std::fs::read(out.join("a/x.txt")).unwrap(), b"changed");
    run_ok(bin("barecat-extract"), args(&["-f"]));
    assert_eq!(std::fs::read(out.join("a/x.txt")).unwrap(), b"hello\n");
}
