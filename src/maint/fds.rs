//! The open-files limit. Commands that keep every shard of an archive open raise
//! the soft limit (up to the hard one) when the shards would not fit under it.

use crate::core::error::{Error, Result};

/// Make room for `files` more open files, or fail with a clear message.
pub(crate) fn ensure_open_files(files: usize) -> Result<()> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit only read and write the struct passed.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Ok(());
    }
    let want = files as u64 + 256;
    if lim.rlim_cur == libc::RLIM_INFINITY || lim.rlim_cur >= want {
        return Ok(());
    }
    let raised = libc::rlimit {
        rlim_cur: want.min(lim.rlim_max),
        rlim_max: lim.rlim_max,
    };
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 && raised.rlim_cur >= want {
        return Ok(());
    }
    Err(Error::InvalidOperation(format!(
        "{files} shard files must be open at once, but the open-files limit is {} \
         (raise it with ulimit -n)",
        lim.rlim_max
    )))
}

#[cfg(test)]
mod tests {
    #[test]
    fn small_needs_are_met() {
        super::ensure_open_files(10).unwrap();
    }
}
