//! Remote archives, against real servers on loopback: the tests' HTTP server with
//! Range support (tests/py/range_server.py, also the fault proxy) and an S3 server
//! (moto). Every reading command gives over a URL exactly what it gives on the
//! local copy; request counts are checked with `--stats` and the server's own log;
//! faults are retried or reported in one line, never with wrong bytes.

use std::fs;
use std::path::{Path, PathBuf};

use crate::support::remote::{barecat, barecat_ok, s3_env, stats, Server, S3};
use crate::support::{assert_clean_error, bin, pseudo_random, run_ok, write_tree};
use barecat::{ArchiveWriter, CreateMode, Meta, WriterOptions};

/// A tree of files of varied sizes (empty, tiny, a few MiB) in nested directories.
fn sample_tree(root: &Path) {
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for d in 0..6 {
        for i in 0..60 {
            let size = (i * 977 + d * 131) % 9000;
            files.push((
                format!("train/c{d}/img_{i:03}.bin"),
                pseudo_random((d * 1000 + i) as u64, size),
            ));
        }
    }
    files.push(("empty.txt".into(), Vec::new()));
    files.push(("big/blob.bin".into(), pseudo_random(7, 5 << 20)));
    files.push(("dir with space/ü.txt".into(), b"unicode".to_vec()));
    let refs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(p, d)| (p.as_str(), d.as_slice()))
        .collect();
    write_tree(root, &refs);
}

/// `dir/served/NAME` (archive and parts) built with barecat-create from a sample
/// tree in `dir/src`.
fn sample_archive(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let src = dir.join("src");
    if !src.exists() {
        sample_tree(&src);
    }
    let served = dir.join("served");
    fs::create_dir_all(&served).unwrap();
    let archive = served.join(name);
    run_ok(
        bin("barecat"),
        [
            "create".as_ref(),
            "-q".as_ref(),
            "-C".as_ref(),
            src.as_os_str(),
            archive.as_os_str(),
            ".".as_ref(),
        ],
    );
    (archive, src)
}

fn s(x: &Path) -> &str {
    x.to_str().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// ncdu exports carry the time of the export: drop it before comparing.
fn without_timestamp(b: &[u8]) -> String {
    let t = text(b);
    match (t.find("\"timestamp\":"), t.find('}')) {
        (Some(a), Some(z)) if a < z => format!("{}{}", &t[..a], &t[z..]),
        _ => t,
    }
}

#[test]
fn every_reading_command_gives_over_http_what_it_gives_locally() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (archive, src) = sample_archive(d, "ds.barecat");
    let server = Server::http(&d.join("served"), &[]);
    let url = server.url("ds.barecat");
    let local = s(&archive);
    barecat_ok(&["records", "build", local], &[]);
    let locals = std::cell::RefCell::new(std::collections::HashMap::new());
    for mode in ["range", "download"] {
        let m = ["--index-mode", mode];
        let same = |args: &[&str]| {
            let mut la: Vec<&str> = args.to_vec();
            let mut ra: Vec<&str> = args.to_vec();
            let at = la.iter().position(|a| *a == "ARCHIVE").unwrap();
            la[at] = local;
            ra[at] = &url;
            ra.extend_from_slice(&m);
            let want = locals
                .borrow_mut()
                .entry(args.join(" "))
                .or_insert_with(|| barecat_ok(&la, &[]))
                .clone();
            let got = barecat_ok(&ra, &[]);
            (want, got)
        };
        for args in [
            &["ls", "ARCHIVE"][..],
            &["ls", "-R", "ARCHIVE"],
            &["ls", "-l", "--json", "-R", "ARCHIVE", "train/c1"],
            &["ls", "ARCHIVE", "train/**/img_00*.bin"],
            &["du", "-a", "ARCHIVE"],
            &["du", "-s", "ARCHIVE", "train"],
            &["index-to-csv", "ARCHIVE"],
            &["list", "-R", "ARCHIVE"],
            &["list", "-l", "ARCHIVE", "train"],
            &["find", "ARCHIVE", "-name", "*.bin"],
            &["find", "ARCHIVE", "train", "-type", "d"],
            &["tree", "ARCHIVE"],
            &[
                "cat",
                "ARCHIVE",
                "train/c3/img_017.bin",
                "empty.txt",
                "big/blob.bin",
            ],
            &["cat", "ARCHIVE", "dir with space/ü.txt"],
            &["to-tar", "ARCHIVE", "-"],
            &["to-tar", "ARCHIVE", "-", "train/c2"],
            &["to-zip", "ARCHIVE", "-"],
            &["records", "get", "ARCHIVE", "17"],
            &["records", "gather", "ARCHIVE", "3", "200", "3", "0", "362"],
            &["records", "gather", "--crc", "ARCHIVE", "1", "2", "300"],
        ] {
            let (want, got) = same(args);
            assert!(want == got, "{args:?} ({mode}) differs");
        }
        // Every record, gathered in address order: coalesced shard requests.
        let all: Vec<String> = (0..363).map(|i| i.to_string()).collect();
        let mut args = vec![
            "records",
            "gather",
            "--digest",
            "--stats",
            "--index-mode",
            mode,
            &url,
        ];
        args.extend(all.iter().map(String::as_str));
        let out = barecat(&args, &[]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let mut largs = vec!["records", "gather", "--digest", local];
        largs.extend(all.iter().map(String::as_str));
        assert_eq!(out.stdout, barecat_ok(&largs, &[]));
        let st = stats(&out.stderr);
        assert_eq!(st["records"].0, 1, "{st:?}");
        assert!(st["shards"].0 <= 6, "not coalesced: {st:?}");
        let info = barecat_ok(
            &["records", "info", "--json", &url, "--index-mode", mode],
            &[],
        );
        let info: serde_json::Value = serde_json::from_slice(&info).unwrap();
        assert_eq!(
            (info["length"].as_u64(), info["kind"].as_str()),
            (Some(363), Some("archive"))
        );

        let (want, got) = same(&["to-ncdu-json", "ARCHIVE"]);
        assert_eq!(without_timestamp(&want), without_timestamp(&got));

        // extract: the same tree.
        let out = d.join(format!("out-{mode}"));
        barecat_ok(
            &["extract", "-q", &url, "-C", s(&out), "--index-mode", mode],
            &[],
        );
        run_ok("diff", ["-r".as_ref(), src.as_os_str(), out.as_os_str()]);

        // verify: everything checked, nothing wrong.
        let v = barecat_ok(&["verify", "--json", &url, "--index-mode", mode], &[]);
        let v: serde_json::Value = serde_json::from_slice(&v).unwrap();
        assert_eq!(v["ok"], true, "{v}");
        assert_eq!(v["checked_files"], 363, "{v}");

        // merge -o: a local copy with the same rows and bytes.
        let copy = d.join(format!("copy-{mode}.barecat"));
        barecat_ok(
            &["merge", "-q", "-o", s(&copy), &url, "--index-mode", mode],
            &[],
        );
        assert_eq!(
            barecat_ok(&["ls", "-l", "-R", s(&copy)], &[]),
            barecat_ok(&["ls", "-l", "-R", local], &[])
        );
        barecat_ok(&["verify", "-q", s(&copy)], &[]);
    }
    // Each object was pinned with If-Match after its first response.
    let log = server.log();
    assert!(log.iter().all(|(m, _, _)| m == "GET"), "{log:?}");
}

/// An archive of `n` files in path order, written with the library (an index deep
/// enough for interior pages).
fn many_files(path: &Path, n: usize) {
    let mut w = ArchiveWriter::open(path, WriterOptions::with_mode(CreateMode::New)).unwrap();
    for i in 0..n {
        let p = format!("d{:03}/f{:06}.bin", i / 1000, i);
        let data = pseudo_random(i as u64, 16 + i % 200);
        w.add_file(&p, Meta::default(), &data, None).unwrap();
    }
    w.finish().unwrap();
}

#[test]
fn request_counts_with_and_without_the_sidecar() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let archive = d.join("many.barecat");
    many_files(&archive, 20_000);
    assert!(fs::metadata(&archive).unwrap().len() > 1 << 20);
    let server = Server::http(d, &[]);
    let url = server.url("many.barecat");
    let cat = |path: &str, extra: &[&str]| {
        let mut args = vec!["cat", "--stats", "--index-mode", "range", &url, path];
        args.extend_from_slice(extra);
        let out = barecat(&args, &[]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        (out.stdout, stats(&out.stderr))
    };
    // With the sidecar: opening costs the head of the index, the sidecar and the
    // pages of SQLite's planner statistics (at most 3 requests); one cold lookup
    // and read cost one index request and one shard request.
    for (k, i) in [7usize, 4321, 12_345, 19_999].into_iter().enumerate() {
        let p = format!("d{:03}/f{:06}.bin", i / 1000, i);
        server.reset();
        let (data, st) = cat(&p, &[]);
        assert_eq!(data, pseudo_random(i as u64, 16 + i % 200), "{p}");
        assert_eq!(st["sidecar"].0, 1, "{st:?}");
        assert_eq!(st["shards"].0, 1, "{st:?}");
        assert!(st["index"].0 <= 3, "lookup {k} of {p}: {st:?}");
        assert_eq!(
            st["total"].0,
            server.log().len() as u64,
            "the server saw as many"
        );
        // Open (head, sidecar, statistics) ≤ 3; the lookup and the read: 1 + 1.
        assert!(st["total"].0 <= 5, "{st:?}");
    }
    // The same lookups through the library, open and lookup counted apart.
    let before = barecat::core::remote::stats();
    let a = barecat::Archive::open_with(
        &url,
        barecat::OpenOptions {
            index_mode: barecat::core::remote::IndexMode::Range,
            ..Default::default()
        },
    )
    .unwrap();
    let opened = barecat::core::remote::stats();
    assert!(
        opened.since(&before).requests() <= 3,
        "open: {:?}",
        opened.since(&before)
    );
    assert_eq!(
        a.read("d013/f013579.bin").unwrap(),
        pseudo_random(13579, 16 + 13579 % 200)
    );
    let read = barecat::core::remote::stats().since(&opened);
    assert!(
        read.index.requests <= 1 && read.shards.requests == 1,
        "{read:?}"
    );
    drop(a);

    // Without a sidecar (missing, then corrupt) the reader works, with more requests.
    for rule in [
        r#"[{"match": "btreemeta", "kind": "status", "status": 404, "count": 100}]"#,
        r#"[{"match": "btreemeta", "kind": "html", "count": 100}]"#,
    ] {
        server.reset();
        server.rules(rule);
        let (data, st) = cat("d010/f010000.bin", &[]);
        assert_eq!(data, pseudo_random(10_000, 16));
        assert!(st["index"].0 >= 3 && st["index"].0 <= 8, "{st:?}");
        eprintln!("without a usable sidecar: {st:?}");
    }
}

#[test]
fn faults_are_retried_or_reported_in_one_line_never_with_wrong_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (archive, src) = sample_archive(d, "ds.barecat");
    let server = Server::http(&d.join("served"), &[]);
    let url = server.url("ds.barecat");
    let want = fs::read(src.join("big/blob.bin")).unwrap();
    let cat = |env: &[(&str, String)]| barecat(&["cat", "--stats", &url, "big/blob.bin"], env);

    // Bursts of 5xx, a reset, a truncated body, one slow response: retried.
    for rule in [
        r#"[{"match": "shard", "kind": "status", "status": 503, "count": 2}]"#,
        r#"[{"match": "ds.barecat", "kind": "status", "status": 500, "count": 1}]"#,
        r#"[{"match": "shard", "kind": "reset", "count": 2}]"#,
        r#"[{"match": "shard", "kind": "truncate", "count": 1}]"#,
        r#"[{"match": "shard", "kind": "slow", "delay": 3, "count": 1}]"#,
    ] {
        server.reset();
        server.rules(rule);
        let out = cat(&[("BARECAT_REMOTE_TIMEOUT", "1.5".into())]);
        assert!(out.status.success(), "{rule}: {}", text(&out.stderr));
        assert!(out.stdout == want, "{rule}: wrong bytes");
        let st = stats(&out.stderr);
        let retries: u64 = st.values().map(|v| v.2).sum::<u64>() - st["total"].2;
        assert!(retries >= 1, "{rule}: no retry counted: {st:?}");
    }

    // Failures that persist: one line naming the URL and the status, exit 1.
    server.reset();
    server.rules(r#"[{"match": "shard", "kind": "status", "status": 503, "count": 100}]"#);
    let out = cat(&[]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    // The file's failure is reported on its own line (barecat-cat: …), and the
    // exit status says a file failed.
    let first = err
        .lines()
        .find(|l| l.starts_with("barecat-cat:") || l.starts_with("barecat cat:"))
        .unwrap_or_else(|| panic!("no error line: {err}"));
    assert!(
        first.contains(&server.url("ds.barecat-shard-00000"))
            && first.contains("HTTP 503")
            && first.contains("4 attempts"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "bytes written before the error");
    server.reset();
    server.rules(r#"[{"match": "shard", "kind": "status", "status": 403, "count": 100}]"#);
    let out = barecat(&["cat", &url, "big/blob.bin"], &[]);
    assert_clean_error(&out);
    assert!(text(&out.stderr).contains("access denied (HTTP 403)"));
    server.reset();
    server.rules(r#"[{"match": "shard", "kind": "slow", "delay": 3, "count": 100}]"#);
    let out = barecat(
        &["cat", &url, "train/c0/img_001.bin"],
        &[
            ("BARECAT_REMOTE_TIMEOUT", "0.5".into()),
            ("BARECAT_REMOTE_RETRIES", "1".into()),
        ],
    );
    assert_clean_error(&out);
    assert!(
        text(&out.stderr).contains("timed out"),
        "{}",
        text(&out.stderr)
    );

    // A shard replaced while it is read: an error, never a mix of two versions.
    let other = d.join("other-shard");
    fs::write(&other, pseudo_random(99, 6 << 20)).unwrap();
    server.reset();
    server.rules(&format!(
        r#"[{{"match": "shard-00000", "kind": "replace", "with": "{}"}}]"#,
        other.display()
    ));
    let out_dir = d.join("out-replaced");
    let out = barecat(&["extract", "-q", &url, "-C", s(&out_dir)], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("changed while it was being read"),
        "{}",
        text(&out.stderr)
    );
    // Whatever was extracted is right (files failing their read are not left).
    for e in walk(&out_dir) {
        let rel = e.strip_prefix(&out_dir).unwrap();
        assert_eq!(
            fs::read(&e).unwrap(),
            fs::read(src.join(rel)).unwrap(),
            "{rel:?}"
        );
    }
    // A missing shard object.
    fs::remove_file(archive.with_file_name("ds.barecat-shard-00000")).unwrap();
    server.reset();
    let out = barecat(&["cat", &url, "train/c0/img_001.bin"], &[]);
    assert_clean_error(&out);
    assert!(
        text(&out.stderr).contains("missing shard 0"),
        "{}",
        text(&out.stderr)
    );
    let out = barecat(&["verify", &url], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).contains("missing"),
        "{}",
        text(&out.stdout)
    );
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn bad_urls_and_bad_servers_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (_archive, _) = sample_archive(d, "ds.barecat");
    let plain = Server::http(&d.join("served"), &[]);
    let html = Server::http(&d.join("served"), &["--html-404"]);
    let norange = Server::http(&d.join("served"), &["--ignore-range"]);
    let dead = crate::support::remote::free_port();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["ls".into(), "ftp://host/x".into()],
            "unknown URL scheme 'ftp'",
        ),
        (vec!["ls".into(), "http://[::1/x".into()], "malformed URL"),
        (vec!["ls".into(), "s3://bucket".into()], "names no archive"),
        (vec!["ls".into(), "http://h/x?sig=1".into()], "query string"),
        (
            vec!["ls".into(), plain.url("missing.barecat")],
            "no such archive",
        ),
        (
            vec!["cat".into(), html.url("missing.barecat"), "x".into()],
            "ignored the Range request",
        ),
        (
            vec![
                "ls".into(),
                "--index-mode".into(),
                "download".into(),
                html.url("missing.barecat"),
            ],
            "not an SQLite database",
        ),
        (
            vec!["ls".into(), norange.url("ds.barecat")],
            "ignored the Range request",
        ),
        (
            vec!["ls".into(), format!("http://127.0.0.1:{dead}/ds.barecat")],
            "cannot connect",
        ),
        (
            vec![
                "merge-symlink".into(),
                "-o".into(),
                s(&d.join("o.barecat")).into(),
                plain.url("ds.barecat"),
            ],
            "a symlink merge needs local inputs",
        ),
        (
            vec![
                "mount".into(),
                "--writable".into(),
                plain.url("ds.barecat"),
                s(d).into(),
            ],
            "mounted read-only",
        ),
    ];
    for (args, want) in cases {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = barecat(&a, &[]);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert_clean_error(&out);
        assert!(
            text(&out.stderr).contains(want),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    // A server that ignores Range still serves a downloaded index, and a missing
    // sidecar on an HTML-error-page server is no sidecar.
    let out = barecat(
        &["ls", "--index-mode", "download", &norange.url("ds.barecat")],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = barecat(&["ls", &html.url("ds.barecat")], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn s3_archives_with_credentials_endpoint_and_errors() {
    need!("moto");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (archive, src) = sample_archive(d, "ds.barecat");
    let s3 = S3::start();
    let parts: Vec<PathBuf> = fs::read_dir(d.join("served"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    s3.upload("barecat-test", "datasets/v1", &parts);
    let env = s3_env(&s3.endpoint);
    let url = "s3://barecat-test/datasets/v1/ds.barecat";
    assert_eq!(
        barecat_ok(&["ls", "-l", "-R", url], &env),
        barecat_ok(&["ls", "-l", "-R", s(&archive)], &[])
    );
    let out = barecat(&["cat", "--stats", url, "train/c4/img_042.bin"], &env);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        out.stdout,
        fs::read(src.join("train/c4/img_042.bin")).unwrap()
    );
    assert_eq!(stats(&out.stderr)["shards"].0, 1);
    let v = barecat_ok(&["verify", "--json", url], &env);
    assert!(text(&v).contains("\"ok\": true"), "{}", text(&v));
    let out_dir = d.join("out");
    barecat_ok(&["extract", "-q", url, "-C", s(&out_dir)], &env);
    run_ok(
        "diff",
        ["-r".as_ref(), src.as_os_str(), out_dir.as_os_str()],
    );

    // Through the fault proxy: a burst of 503s is retried.
    let proxy = Server::proxy(&s3.endpoint);
    proxy.rules(r#"[{"match": "shard", "kind": "status", "status": 503, "count": 2}]"#);
    let mut penv = env.clone();
    penv.retain(|(k, _)| *k != "AWS_ENDPOINT_URL");
    penv.push(("AWS_ENDPOINT_URL", proxy.url("")));
    let out = barecat(&["cat", "--stats", url, "train/c4/img_042.bin"], &penv);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(stats(&out.stderr)["shards"].2, 2, "{}", text(&out.stderr));

    // Errors: no such object, no such bucket, no or incomplete credentials.
    let no_creds: Vec<(&str, String)> = env
        .iter()
        .filter(|(k, _)| !k.starts_with("AWS_ACCESS") && !k.starts_with("AWS_SECRET"))
        .cloned()
        .collect();
    let half: Vec<(&str, String)> = env
        .iter()
        .filter(|(k, _)| !k.starts_with("AWS_SECRET"))
        .cloned()
        .collect();
    for (u, e, want) in [
        (
            "s3://barecat-test/datasets/v1/nope.barecat",
            &env,
            "no such archive",
        ),
        ("s3://no-such-bucket/x/ds.barecat", &env, "no such bucket"),
        (url, &no_creds, "access denied"),
        (url, &half, "AWS_SECRET_ACCESS_KEY is not"),
    ] {
        let out = barecat(&["ls", u], e);
        assert_eq!(out.status.code(), Some(1), "{u}: {}", text(&out.stderr));
        assert_clean_error(&out);
        assert!(
            text(&out.stderr).contains(want),
            "{u}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn archives_of_python_barecat_read_over_http() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let src = d.join("src");
    sample_tree(&src);
    fs::create_dir_all(d.join("served")).unwrap();
    let archive = d.join("served/py.barecat");
    crate::support::run_ok_in(
        d,
        crate::support::py_barecat(),
        ["create", "-s", "8M", "served/py.barecat", "src"],
    );
    let server = Server::http(&d.join("served"), &[]);
    let url = server.url("py.barecat");
    assert_eq!(
        barecat_ok(&["ls", "-l", "-R", &url, "--index-mode", "range"], &[]),
        barecat_ok(&["ls", "-l", "-R", s(&archive)], &[])
    );
    let v = barecat_ok(&["verify", "--json", &url], &[]);
    assert!(text(&v).contains("\"ok\": true"), "{}", text(&v));
}

#[test]
fn a_remote_archive_mounts_read_only() {
    need!("fusermount3");
    if !crate::support::mount::fuse_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (_archive, src) = sample_archive(d, "ds.barecat");
    let server = Server::http(&d.join("served"), &[]);
    let mnt = d.join("mnt");
    let m = crate::support::mount::mount(Path::new(&server.url("ds.barecat")), &mnt, &[]);
    run_ok("diff", ["-r".as_ref(), src.as_os_str(), mnt.as_os_str()]);
    assert!(fs::write(mnt.join("new.txt"), b"x").is_err(), "writable");
    m.unmount();
}

#[test]
fn objects_without_etag_are_pinned_by_size_and_time() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (archive, src) = sample_archive(d, "ds.barecat");
    let server = Server::http(&d.join("served"), &["--no-etag"]);
    let url = server.url("ds.barecat");
    // Read normally without ETags.
    let out = barecat(&["cat", &url, "big/blob.bin"], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(out.stdout == fs::read(src.join("big/blob.bin")).unwrap());
    // Replaced after the first shard request: another size, another time.
    let other = d.join("other-shard");
    fs::write(&other, pseudo_random(5, 7 << 20)).unwrap();
    server.rules(&format!(
        r#"[{{"match": "shard-00000", "kind": "replace", "with": "{}"}}]"#,
        other.display()
    ));
    // cat reads its files one after the other: the second request is made after the
    // replacement, whatever the timing (a bulk reader may fetch everything at once).
    let out = barecat(&["cat", &url, "big/blob.bin", "train/c0/img_001.bin"], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("changed while it was being read"),
        "{}",
        text(&out.stderr)
    );
    let _ = archive;
}
