//! Real servers on loopback for the tests of remote archives: the tests' own HTTP
//! server with Range support and fault injection (tests/py/range_server.py, also a
//! fault proxy in front of another server) and an S3 server (moto). Each server is
//! started by the test, listens on 127.0.0.1 only, is killed when its guard drops
//! and stops by itself after a bounded lifetime.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::process::{lines, reap};
use crate::support::{bin, py_script, python, CommandExt};

/// Seconds a server lives at most (a test that dies never leaves one behind).
const LIFETIME: &str = "300";

/// A server process of the tests; killed on drop.
pub struct Server {
    child: Child,
    pub port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        reap(&mut self.child, Duration::from_secs(60));
    }
}

/// Wait for the `PORT n` line a range server prints.
fn read_port(child: &mut Child) -> u16 {
    let out = child.stdout.take().expect("piped stdout");
    let line = lines(out, child.id(), "the test server")
        .next_within(Duration::from_secs(20))
        .unwrap_or_default();
    line.trim()
        .strip_prefix("PORT ")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("unexpected first line from the test server: {line:?}"))
}

impl Server {
    /// The tests' HTTP server over the files of `root` (options: `--no-etag`,
    /// `--ignore-range`, `--html-404`).
    pub fn http(root: &Path, opts: &[&str]) -> Server {
        let mut child = Command::new("python3")
            .arg(py_script("range_server.py"))
            .arg(root)
            .args(opts)
            .args(["--lifetime", LIFETIME])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 range_server.py");
        let port = read_port(&mut child);
        Server { child, port }
    }

    /// The same server as a fault proxy in front of `upstream` (`http://host:port`).
    pub fn proxy(upstream: &str) -> Server {
        let mut child = Command::new("python3")
            .arg(py_script("range_server.py"))
            .args(["--upstream", upstream, "--lifetime", LIFETIME])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 range_server.py");
        let port = read_port(&mut child);
        Server { child, port }
    }

    /// `http://127.0.0.1:PORT/path`.
    pub fn url(&self, path: &str) -> String {
        format!(
            "http://127.0.0.1:{}/{}",
            self.port,
            path.trim_start_matches('/')
        )
    }

    fn control(&self, path: &str, body: &str) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        write!(
            s,
            "POST {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut resp = String::new();
        s.read_to_string(&mut resp).unwrap();
        resp.split_once("\r\n\r\n")
            .map(|(_, b)| b.to_string())
            .unwrap_or_default()
    }

    /// Set the fault rules (see tests/py/range_server.py).
    pub fn rules(&self, json: &str) {
        self.control("/__ctl/rules", json);
    }

    /// Forget the request log and the rules.
    pub fn reset(&self) {
        self.control("/__ctl/reset", "");
    }

    /// The requests served so far: (method, path, Range header).
    pub fn log(&self) -> Vec<(String, String, Option<String>)> {
        let body = self.control("/__ctl/log", "");
        serde_json::from_str(&body).expect("request log")
    }
}

/// A free port on loopback (for servers that take one).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// An S3 server (moto) on loopback, with the bucket `bucket` (needs the `moto`
/// peer).
pub struct S3 {
    _server: Server,
    pub endpoint: String,
}

pub const ACCESS_KEY: &str = "barecat-test-key";
pub const SECRET_KEY: &str = "barecat-test-secret";

impl S3 {
    pub fn start() -> S3 {
        let port = free_port();
        // moto's server, ended by itself after the same lifetime as the others.
        let serve = format!(
            "import os, threading; threading.Timer({LIFETIME}, os._exit, [0]).start(); \
             from moto.server import main; main(['-H', '127.0.0.1', '-p', '{port}'])"
        );
        let child = Command::new(python())
            .args(["-c", &serve])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python: moto.server");
        let server = Server { child, port };
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "moto did not start within 30 s");
            std::thread::sleep(Duration::from_millis(100));
        }
        S3 {
            endpoint: format!("http://127.0.0.1:{port}"),
            _server: server,
        }
    }

    /// Create `bucket` and upload `files` under `prefix/` (with boto3).
    pub fn upload(&self, bucket: &str, prefix: &str, files: &[PathBuf]) {
        let mut args: Vec<std::ffi::OsString> = vec![
            py_script("s3_upload.py").into(),
            self.endpoint.clone().into(),
            bucket.into(),
            prefix.into(),
        ];
        args.extend(files.iter().map(|f| f.clone().into_os_string()));
        crate::support::run_ok(python(), args);
    }
}

/// The environment of a client of `endpoint` with the test's credentials.
pub fn s3_env(endpoint: &str) -> Vec<(&'static str, String)> {
    vec![
        ("AWS_ACCESS_KEY_ID", ACCESS_KEY.into()),
        ("AWS_SECRET_ACCESS_KEY", SECRET_KEY.into()),
        ("AWS_ENDPOINT_URL", endpoint.into()),
        ("AWS_ALLOW_HTTP", "true".into()),
        ("AWS_REGION", "us-east-1".into()),
    ]
}

/// Variables a remote command must not inherit from the machine.
const CLEARED: &[&str] = &[
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT",
    "AWS_ALLOW_HTTP",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_PROFILE",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "BARECAT_REMOTE_TIMEOUT",
    "BARECAT_REMOTE_RETRIES",
    "HTTP_PROXY",
    "http_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "ALL_PROXY",
    "all_proxy",
];

/// Run `barecat ARGS` with a clean remote environment plus `env`, with fast
/// timeouts (2 s per request, 3 retries) unless `env` sets them; a command that
/// takes more than two minutes fails the test.
pub fn barecat(args: &[&str], env: &[(&str, String)]) -> Output {
    let mut c = Command::new(bin("barecat"));
    c.args(args);
    for v in CLEARED {
        c.env_remove(v);
    }
    c.env("BARECAT_REMOTE_TIMEOUT", "5")
        .env("BARECAT_REMOTE_CONNECT_TIMEOUT", "2")
        .env("BARECAT_REMOTE_RETRIES", "3");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output_within(Duration::from_secs(120))
        .expect("cannot run barecat")
}

/// `barecat ARGS` must succeed; returns stdout.
pub fn barecat_ok(args: &[&str], env: &[(&str, String)]) -> Vec<u8> {
    let out = barecat(args, env);
    assert!(
        out.status.success(),
        "barecat {args:?} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The counters of `--stats` in stderr: kind → (requests, bytes, retries).
pub fn stats(stderr: &[u8]) -> std::collections::HashMap<String, (u64, u64, u64)> {
    let text = String::from_utf8_lossy(stderr);
    let mut out = std::collections::HashMap::new();
    for line in text.lines() {
        let Some(rest) = line.split("remote ").nth(1) else {
            continue;
        };
        let Some((kind, nums)) = rest.split_once(": ") else {
            continue;
        };
        let n: Vec<u64> = nums
            .split(|c: char| !c.is_ascii_digit())
            .filter(|s| !s.is_empty())
            .map(|s| s.parse().unwrap())
            .collect();
        if n.len() >= 2 {
            out.insert(
                kind.to_string(),
                (n[0], n[1], n.get(2).copied().unwrap_or(0)),
            );
        }
    }
    out
}
