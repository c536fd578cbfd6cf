//! Requests: the object stores (object_store's S3 and HTTP clients), the internal
//! runtime that drives them behind a synchronous API, and [`Object`], one object
//! of an archive pinned to the version first seen.
//!
//! # Configuration
//!
//! S3 reads the usual variables: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
//! `AWS_SESSION_TOKEN`, `AWS_REGION` (or `AWS_DEFAULT_REGION`), `AWS_ENDPOINT_URL`
//! for an S3-compatible server, `AWS_ALLOW_HTTP=true` for a plain-http endpoint,
//! and web-identity or container credentials (`AWS_WEB_IDENTITY_TOKEN_FILE` with
//! `AWS_ROLE_ARN`, `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI`). With none of them,
//! requests are anonymous (unsigned), which public buckets accept;
//! `AWS_SKIP_SIGNATURE=true` forces that. HTTP(S) is anonymous.
//!
//! # Failures
//!
//! object_store's own retries are off: every attempt goes through `Object::fetch`,
//! which retries timeouts, connection failures and resets, truncated bodies, 5xx,
//! 408 and 429 with exponential backoff ([`super::config`] sets the timeouts and the
//! number of retries), and turns everything else into one line naming the URL and
//! the status. Each object is pinned to the version of its first response: later
//! requests carry `If-Match` (or `If-Unmodified-Since` where the server gives no
//! ETag), and every response's ETag, size and modification time are compared with
//! the pinned ones, so an object replaced while it is read is an error, never a mix
//! of two versions.

use std::future::Future;
use std::ops::Range;
use std::sync::{Arc, Mutex, OnceLock};

use crate::core::fork::ForkLocal;
use std::time::Duration;

use bytes::Bytes;
use object_store::path::Path as ObjPath;
use object_store::{ClientOptions, GetOptions, GetRange, ObjectMeta, ObjectStore, RetryConfig};

use super::config::Settings;
use super::stats::{self, RequestKind};
use crate::core::error::{Error, Result};
use crate::core::location::{RemoteUrl, Scheme};

// ---------------------------------------------------------------------- runtime

/// The runtime of this process. A child made by `fork` has none of its parent's
/// threads: it gets a runtime of its own (the parent's is leaked, not dropped).
fn runtime() -> Result<&'static tokio::runtime::Runtime> {
    static RT: ForkLocal<tokio::runtime::Runtime> = ForkLocal::new();
    RT.get_or_try_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("barecat-io")
            .enable_all()
            .build()
            .map_err(|e| Error::io("<remote I/O runtime>", e))
    })
}

/// Run `fut` on the runtime and wait for it from this (synchronous) thread. Works
/// from any thread, inside another runtime too.
pub(crate) fn block_on<T: Send + 'static>(
    fut: impl Future<Output = Result<T>> + Send + 'static,
) -> Result<T> {
    let rt = runtime()?;
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    rt.spawn(async move {
        let _ = tx.send(fut.await);
    });
    rx.recv().unwrap_or_else(|_| {
        Err(Error::InvalidOperation(
            "a remote request task failed".into(),
        ))
    })
}

/// Start `fut` on the runtime without waiting for it.
pub(crate) fn spawn(fut: impl Future<Output = ()> + Send + 'static) -> Result<()> {
    runtime()?.spawn(fut);
    Ok(())
}

// ---------------------------------------------------------------------- stores

fn install_crypto() {
    static ONCE: OnceLock<()> = OnceLock::new();
    if ONCE.get().is_some() {
        return;
    }
    // Never half-done at a fork (see `Settings::get`).
    crate::core::fork::on_prepare(install_crypto);
    ONCE.get_or_init(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

fn env_true(var: &str) -> bool {
    std::env::var(var).is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        )
    })
}

fn env_set(var: &str) -> bool {
    std::env::var_os(var).is_some_and(|v| !v.is_empty())
}

fn client_options(allow_http: bool) -> ClientOptions {
    let s = Settings::get();
    ClientOptions::new()
        .with_allow_http(allow_http)
        .with_timeout(s.timeout)
        .with_connect_timeout(s.connect_timeout)
        .with_pool_idle_timeout(Duration::from_secs(30))
}

/// Our own loop retries; object_store's is off (see the module docs).
fn no_retries() -> RetryConfig {
    RetryConfig {
        max_retries: 0,
        retry_timeout: Duration::from_secs(1),
        ..RetryConfig::default()
    }
}

/// The store holding the objects of the archive at `url`.
pub(crate) fn store_for(url: &RemoteUrl) -> Result<Arc<dyn ObjectStore>> {
    install_crypto();
    let fail = |detail: String| Error::Remote {
        url: url.url(),
        detail,
    };
    let store: Arc<dyn ObjectStore> = match url.scheme {
        Scheme::S3 => {
            let key = env_set("AWS_ACCESS_KEY_ID");
            let secret = env_set("AWS_SECRET_ACCESS_KEY");
            if key != secret {
                return Err(fail(format!(
                    "incomplete credentials: {} is set but {} is not",
                    if key {
                        "AWS_ACCESS_KEY_ID"
                    } else {
                        "AWS_SECRET_ACCESS_KEY"
                    },
                    if key {
                        "AWS_SECRET_ACCESS_KEY"
                    } else {
                        "AWS_ACCESS_KEY_ID"
                    },
                )));
            }
            let other_credentials = env_set("AWS_WEB_IDENTITY_TOKEN_FILE")
                || env_set("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
                || env_set("AWS_CONTAINER_CREDENTIALS_FULL_URI");
            let mut b = object_store::aws::AmazonS3Builder::from_env()
                .with_bucket_name(&url.authority)
                .with_client_options(client_options(env_true("AWS_ALLOW_HTTP")))
                .with_retry(no_retries());
            if !key && !other_credentials {
                // Anonymous: never wait for an instance metadata service that is
                // not there.
                b = b.with_skip_signature(true);
            }
            Arc::new(b.build().map_err(|e| fail(one_line(&e.to_string())))?)
        }
        Scheme::Http | Scheme::Https => {
            let origin = match url.scheme {
                Scheme::Http => format!("http://{}", url.authority),
                _ => format!("https://{}", url.authority),
            };
            let b = object_store::http::HttpBuilder::new()
                .with_url(origin)
                .with_client_options(client_options(url.scheme == Scheme::Http))
                .with_retry(no_retries());
            Arc::new(b.build().map_err(|e| fail(one_line(&e.to_string())))?)
        }
    };
    Ok(store)
}

fn one_line(s: &str) -> String {
    let s = s.replace(['\n', '\r'], " ");
    let mut s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.len() > 300 {
        let mut cut = 300;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push('…');
    }
    s
}

// ---------------------------------------------------------------------- objects

/// The version of an object seen first.
#[derive(Debug, Clone)]
struct Pin {
    etag: Option<String>,
    meta: ObjectMeta,
}

impl Pin {
    fn has_time(&self) -> bool {
        self.meta.last_modified.timestamp() != 0
    }
}

/// How a request failed.
#[derive(Debug)]
pub(crate) enum Fail {
    /// 404 (or 405/410): there is no such object.
    NotFound(Error),
    /// 416: the range starts at or past the end of the object.
    Unsatisfiable(Error),
    /// Anything else, final.
    Other(Error),
}

impl Fail {
    pub(crate) fn into_error(self) -> Error {
        match self {
            Fail::NotFound(e) | Fail::Unsatisfiable(e) | Fail::Other(e) => e,
        }
    }
}

impl From<Fail> for Error {
    fn from(f: Fail) -> Error {
        f.into_error()
    }
}

/// What one attempt's failure means.
enum Attempt {
    Retry(String),
    Final(Fail),
}

/// One object of an archive (index, sidecar, shard, record table), read by ranges.
pub struct Object {
    store: Arc<dyn ObjectStore>,
    path: ObjPath,
    url: String,
    kind: RequestKind,
    pin: Mutex<Option<Pin>>,
}

impl std::fmt::Debug for Object {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Object").field("url", &self.url).finish()
    }
}

/// The HTTP status named in an object_store error, if any.
fn status_in(text: &str) -> Option<u16> {
    let at = text.find("status code: ")? + "status code: ".len();
    text.get(at..at + 3)?.parse().ok()
}

fn transport_kind(
    e: &(dyn std::error::Error + 'static),
) -> Option<object_store::client::HttpErrorKind> {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cur {
        if let Some(h) = c.downcast_ref::<object_store::client::HttpError>() {
            return Some(h.kind());
        }
        cur = c.source();
    }
    None
}

/// The innermost cause of an error, as one line (`Connection refused (os error
/// 111)` rather than the whole chain of wrappers).
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    one_line(&cur.to_string())
}

/// Text of an error and its causes.
fn chain_text(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let t = c.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        cur = c.source();
    }
    s
}

impl Object {
    pub(crate) fn new(
        store: Arc<dyn ObjectStore>,
        url: &RemoteUrl,
        name: &str,
        kind: RequestKind,
    ) -> Object {
        Object {
            store,
            path: ObjPath::from_iter(url.key_parts(name)),
            url: url.url_of(name),
            kind,
            pin: Mutex::new(None),
        }
    }

    /// The object's URL, for messages.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The size of the object, once a response has been seen.
    pub fn size(&self) -> Option<u64> {
        self.pin
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map(|p| p.meta.size)
    }

    /// The ETag pinned, if the server gave one.
    pub fn etag(&self) -> Option<String> {
        self.pin
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .and_then(|p| p.etag.clone())
    }

    fn err(&self, detail: impl Into<String>) -> Error {
        Error::Remote {
            url: self.url.clone(),
            detail: detail.into(),
        }
    }

    /// Compare a response's version with the pinned one (pinning it if none is).
    fn check_pin(&self, meta: &ObjectMeta) -> std::result::Result<(), Fail> {
        let mut g = self.pin.lock().unwrap_or_else(|e| e.into_inner());
        let Some(pin) = g.as_ref() else {
            *g = Some(Pin {
                etag: meta.e_tag.clone(),
                meta: meta.clone(),
            });
            return Ok(());
        };
        let changed = |what: String| {
            Err(Fail::Other(self.err(format!(
                "the object changed while it was being read ({what}); open the archive again"
            ))))
        };
        if let (Some(a), Some(b)) = (&pin.etag, &meta.e_tag) {
            if a != b {
                return changed(format!("ETag {a} when first read, now {b}"));
            }
        }
        if pin.meta.size != meta.size {
            return changed(format!(
                "{} bytes when first read, now {}",
                pin.meta.size, meta.size
            ));
        }
        if pin.has_time()
            && meta.last_modified.timestamp() != 0
            && pin.meta.last_modified != meta.last_modified
        {
            return changed(format!(
                "last modified {} when first read, now {}",
                pin.meta.last_modified, meta.last_modified
            ));
        }
        Ok(())
    }

    fn classify(&self, e: object_store::Error, range: &Option<Range<u64>>) -> Attempt {
        let text = one_line(&chain_text(&e));
        let status = status_in(&text);
        match &e {
            object_store::Error::NotFound { .. } => {
                let detail = if text.contains("NoSuchBucket") {
                    "no such bucket (HTTP 404)"
                } else {
                    "no such object (HTTP 404)"
                };
                return Attempt::Final(Fail::NotFound(self.err(detail)));
            }
            object_store::Error::Precondition { .. } => {
                return Attempt::Final(Fail::Other(self.err(
                    "the object changed while it was being read (HTTP 412: it no longer \
                     matches the ETag first seen); open the archive again",
                )))
            }
            object_store::Error::PermissionDenied { .. }
            | object_store::Error::Unauthenticated { .. } => {
                let code = status.unwrap_or(403);
                let hint = if env_set("AWS_ACCESS_KEY_ID") || !self.url.starts_with("s3://") {
                    ""
                } else {
                    ": the request was anonymous (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set)"
                };
                return Attempt::Final(Fail::Other(
                    self.err(format!("access denied (HTTP {code}){hint}")),
                ));
            }
            object_store::Error::NotSupported { .. } => {
                return Attempt::Final(Fail::Other(self.err(IGNORED_RANGE)));
            }
            _ => {}
        }
        if text.contains("non-partial response") {
            return Attempt::Final(Fail::Other(self.err(IGNORED_RANGE)));
        }
        if text.contains("Wanted range starting at") {
            return Attempt::Final(Fail::Unsatisfiable(
                self.err(format!("range {range:?} starts past the end of the object")),
            ));
        }
        if let Some(code) = status {
            return match code {
                404 | 405 | 410 => Attempt::Final(Fail::NotFound(
                    self.err(format!("no such object (HTTP {code})")),
                )),
                416 => Attempt::Final(Fail::Unsatisfiable(self.err(format!(
                    "range {range:?} starts past the end of the object (HTTP 416)"
                )))),
                408 | 429 | 500..=599 => Attempt::Retry(format!("HTTP {code}")),
                _ => Attempt::Final(Fail::Other(self.err(format!("HTTP {code}")))),
            };
        }
        use object_store::client::HttpErrorKind as K;
        let cause = root_cause(&e);
        match transport_kind(&e) {
            Some(K::Timeout) => Attempt::Retry(format!(
                "timed out (BARECAT_REMOTE_TIMEOUT={}s)",
                Settings::get().timeout.as_secs_f64()
            )),
            Some(K::Connect) => Attempt::Retry(format!("cannot connect: {cause}")),
            Some(K::Request | K::Interrupted | K::Decode | K::Unknown) => {
                Attempt::Retry(format!("connection failed: {cause}"))
            }
            Some(_) => Attempt::Retry(format!("request failed: {cause}")),
            None => Attempt::Final(Fail::Other(self.err(text))),
        }
    }

    /// One attempt: the response body of `range` (the whole object for `None`).
    async fn attempt(&self, range: &Option<Range<u64>>) -> std::result::Result<Bytes, Attempt> {
        let pin = self.pin.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let mut opts = GetOptions {
            range: range.clone().map(GetRange::Bounded),
            ..GetOptions::default()
        };
        if let Some(p) = &pin {
            match &p.etag {
                Some(tag) => opts.if_match = Some(tag.clone()),
                None if p.has_time() => opts.if_unmodified_since = Some(p.meta.last_modified),
                None => {}
            }
        }
        stats::request(self.kind);
        let res = match self.store.get_opts(&self.path, opts).await {
            Ok(r) => r,
            Err(e) => return Err(self.classify(e, range)),
        };
        let meta = res.meta.clone();
        let got = res.range.clone();
        let body = res.bytes().await;
        let body = match body {
            Ok(b) => b,
            Err(e) => return Err(self.classify(e, range)),
        };
        stats::bytes(self.kind, body.len() as u64);
        self.check_pin(&meta).map_err(Attempt::Final)?;
        let want = got.end - got.start;
        if body.len() as u64 != want {
            return Err(Attempt::Retry(format!(
                "truncated response: {} of {want} bytes",
                body.len()
            )));
        }
        Ok(body)
    }

    /// The bytes of `range` (clamped to the object's end: fewer bytes come back
    /// when it reaches past it), or of the whole object for `None`, with retries.
    pub(crate) async fn fetch(
        &self,
        range: Option<Range<u64>>,
    ) -> std::result::Result<Bytes, Fail> {
        if let Some(r) = &range {
            if r.start >= r.end {
                return Ok(Bytes::new());
            }
        }
        let s = Settings::get();
        let mut tries = 0u32;
        loop {
            match self.attempt(&range).await {
                Ok(b) => return Ok(b),
                Err(Attempt::Final(f)) => return Err(f),
                Err(Attempt::Retry(why)) if tries < s.retries => {
                    tries += 1;
                    stats::retry(self.kind);
                    log::debug!("{}: {why}; retrying ({tries}/{})", self.url, s.retries);
                    tokio::time::sleep(backoff(tries)).await;
                }
                Err(Attempt::Retry(why)) => {
                    let n = tries + 1;
                    return Err(Fail::Other(self.err(format!(
                        "{why} ({n} attempt{})",
                        if n == 1 { "" } else { "s" }
                    ))));
                }
            }
        }
    }

    /// [`fetch`](Self::fetch) from a synchronous caller.
    pub(crate) fn get(
        self: &Arc<Self>,
        range: Option<Range<u64>>,
    ) -> std::result::Result<Bytes, Fail> {
        let me = self.clone();
        let r = block_on(async move { Ok(me.fetch(range).await) });
        match r {
            Ok(inner) => inner,
            Err(e) => Err(Fail::Other(e)),
        }
    }

    /// The object's size: known after the first response, else asked with a
    /// one-byte ranged request (which pins the object too).
    pub(crate) fn len(self: &Arc<Self>) -> std::result::Result<u64, Fail> {
        if let Some(n) = self.size() {
            return Ok(n);
        }
        match self.get(Some(0..1)) {
            Ok(_) => Ok(self.size().unwrap_or(0)),
            // An empty object has no byte 0.
            Err(Fail::Unsatisfiable(_)) => Ok(0),
            Err(e) => Err(e),
        }
    }
}

const IGNORED_RANGE: &str = "the server ignored the Range request and answered with the whole \
     object or an error page (status 200); ranged reads are needed";

/// Backoff before retry `n` (1-based): 100 ms doubling up to 5 s, with jitter.
fn backoff(n: u32) -> Duration {
    let base = 100u64.saturating_mul(1 << n.min(10)).min(5_000);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() as u64)
        .unwrap_or(0);
    let jitter = nanos % (base / 4 + 1);
    Duration::from_millis(base - base / 8 + jitter)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_and_backoff() {
        assert_eq!(
            status_in("Error performing GET http://x in 1ms - Server returned non-2xx status code: 503 Service Unavailable: "),
            Some(503)
        );
        assert_eq!(status_in("no status here"), None);
        for n in 1..20 {
            let b = backoff(n);
            assert!(
                b >= Duration::from_millis(87) && b <= Duration::from_millis(6_300),
                "{b:?}"
            );
        }
        assert_eq!(one_line("a\nb\r\n  c"), "a b c");
    }
}
