//! Archives that appear whole or not at all: an archive is built under a temporary
//! name beside its target ([`temp_name`]) and renamed into place
//! ([`install_archive`]: shards first, the index last, the directory synced), and
//! what killed runs left behind is found and removed ([`remove_stale_temps`]).

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use crate::core::error::{Error, Result};
use crate::core::format::layout::Layout;

/// A sibling of `out` to build it under: `DIR/.NAME.TAG-PID`.
pub fn temp_name(out: &Path, tag: &str) -> PathBuf {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "archive".into());
    out.with_file_name(format!(".{name}.{tag}-{}", std::process::id()))
}

/// Remove the archives that killed runs left under [`temp_name`]s of `out` with this
/// `tag`: those whose process is gone and whose index nobody holds the writer lock
/// on. A temporary archive is as large as the output it was to become, so a rerun
/// after a kill must not leave it behind. Returns the number removed.
pub fn remove_stale_temps(out: &Path, tag: &str) -> Result<usize> {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "archive".into());
    let prefix = format!(".{name}.{tag}-");
    let dir = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(Error::io(dir, e)),
    };
    let mut pids = std::collections::BTreeSet::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let file_name = entry.file_name();
        let Some(rest) = file_name.to_str().and_then(|n| n.strip_prefix(&prefix)) else {
            continue;
        };
        // `PID`, `PID-shard-NNNNN`, `PID-journal`, …
        let digits = rest.split('-').next().unwrap_or("");
        if let Ok(pid) = digits.parse::<u32>() {
            if digits.len() == rest.len() || rest[digits.len()..].starts_with('-') {
                pids.insert(pid);
            }
        }
    }
    let mut removed = 0;
    for pid in pids {
        if pid == std::process::id() || process_exists(pid) {
            continue;
        }
        let temp = dir.join(format!("{prefix}{pid}"));
        if is_write_locked(&temp) {
            continue;
        }
        Layout::remove(&temp)?;
        removed += 1;
    }
    Ok(removed)
}

fn process_exists(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // Signal 0 checks for existence; EPERM means it exists but is someone else's.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// True when another process holds the writer lock of the index at `path`.
fn is_write_locked(path: &Path) -> bool {
    use std::os::unix::io::AsRawFd;
    let Ok(f) = File::open(path) else {
        return false;
    };
    let rc = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) };
    rc != 0
}

/// Put the archive built at `temp` in place at `out` (which must not exist): the
/// shards are renamed first and the index after them, so `out` appears complete;
/// then its companion files (the sidecar), which are never left over from another
/// archive beside the new index. `step` is called after each rename.
pub fn install_archive(temp: &Path, out: &Path, step: &mut dyn FnMut()) -> Result<()> {
    let from = Layout::current(temp);
    let to = Layout::current(out);
    for s in from.shard_files()? {
        let dest = to.shard_path(s.number);
        std::fs::rename(&s.path, &dest).map_err(|e| Error::io(&dest, e))?;
        step();
    }
    Layout::remove_companions(out)?;
    std::fs::rename(temp, out).map_err(|e| Error::io(out, e))?;
    step();
    Layout::move_companions(temp, out)?;
    super::sync_dir(out)
}
