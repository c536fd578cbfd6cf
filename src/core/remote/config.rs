//! Settings of remote reads, from the environment (read once per process).
//!
//! | variable | default | meaning |
//! |---|---|---|
//! | `BARECAT_REMOTE_TIMEOUT` | 60 | seconds one request may take, from connecting to the last byte |
//! | `BARECAT_REMOTE_CONNECT_TIMEOUT` | 10 | seconds to establish a connection |
//! | `BARECAT_REMOTE_RETRIES` | 4 | further attempts after a timeout, a reset, a truncated body, a 5xx or a 429 |
//! | `BARECAT_REMOTE_CACHE` | 64M | index pages kept in memory (range mode) |
//! | `BARECAT_REMOTE_READAHEAD` | 64M | shard bytes in flight or waiting to be used by sequential readers |
//! | `BARECAT_REMOTE_DOWNLOAD_LIMIT` | 32M | `--index-mode auto` downloads an index up to this size whole |
//!
//! Credentials and endpoints come from the usual `AWS_*` variables
//! ([`super::client`]).

use std::sync::OnceLock;
use std::time::Duration;

use crate::core::size::parse_size;

/// How the index of a remote archive is read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum IndexMode {
    /// Download indexes up to [`Settings::download_limit`] whole; read larger ones
    /// by ranged requests.
    #[default]
    Auto,
    /// Always read the index by ranged requests of its pages.
    Range,
    /// Always download the index whole (held in memory).
    Download,
}

impl std::str::FromStr for IndexMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(IndexMode::Auto),
            "range" => Ok(IndexMode::Range),
            "download" => Ok(IndexMode::Download),
            _ => Err(format!("{s:?} is not one of auto, range, download")),
        }
    }
}

/// Settings of remote reads.
#[derive(Debug, Clone)]
pub struct Settings {
    /// How long one request may take, from connecting to the last byte
    /// (`BARECAT_REMOTE_TIMEOUT`).
    pub timeout: Duration,
    /// How long establishing a connection may take (`BARECAT_REMOTE_CONNECT_TIMEOUT`).
    pub connect_timeout: Duration,
    /// Further attempts after a failure worth retrying (`BARECAT_REMOTE_RETRIES`).
    pub retries: u32,
    /// Bytes of index pages kept in memory in range mode (`BARECAT_REMOTE_CACHE`).
    pub cache_bytes: u64,
    /// Shard bytes in flight or waiting for sequential readers
    /// (`BARECAT_REMOTE_READAHEAD`).
    pub readahead_bytes: u64,
    /// `--index-mode auto` downloads indexes up to this size whole
    /// (`BARECAT_REMOTE_DOWNLOAD_LIMIT`).
    pub download_limit: u64,
}

/// Default of `BARECAT_REMOTE_DOWNLOAD_LIMIT`: indexes up to 32 MiB are fetched
/// whole in `auto` mode (one request of at most a few tenths of a second on a
/// data-centre link, and then every lookup is free).
pub const DOWNLOAD_LIMIT: u64 = 32 << 20;

fn secs(var: &str, default: f64) -> Duration {
    let v = std::env::var(var)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|v| v.is_finite() && *v > 0.0)
        .unwrap_or(default);
    Duration::from_secs_f64(v.min(86_400.0))
}

fn size(var: &str, default: u64) -> u64 {
    std::env::var(var)
        .ok()
        .and_then(|v| parse_size(v.trim()).ok())
        .unwrap_or(default)
}

impl Settings {
    fn from_env() -> Settings {
        Settings {
            timeout: secs("BARECAT_REMOTE_TIMEOUT", 60.0),
            connect_timeout: secs("BARECAT_REMOTE_CONNECT_TIMEOUT", 10.0),
            retries: std::env::var("BARECAT_REMOTE_RETRIES")
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(4u32)
                .min(100),
            cache_bytes: size("BARECAT_REMOTE_CACHE", 64 << 20).max(1 << 20),
            readahead_bytes: size("BARECAT_REMOTE_READAHEAD", 64 << 20).max(1 << 20),
            download_limit: size("BARECAT_REMOTE_DOWNLOAD_LIMIT", DOWNLOAD_LIMIT),
        }
    }

    /// The settings of this process.
    pub fn get() -> &'static Settings {
        static S: OnceLock<Settings> = OnceLock::new();
        if let Some(s) = S.get() {
            return s;
        }
        // A fork while another thread reads the settings waits for it to finish,
        // so that a child never finds them half-made ([`crate::core::fork`]).
        crate::core::fork::on_prepare(|| {
            Settings::get();
        });
        S.get_or_init(Settings::from_env)
    }
}
