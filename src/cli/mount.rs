//! `barecat-mount`: mount an archive as a file system (FUSE), read-only or writable.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use super::common::Quiet;
use crate::mount::{self, MountOptions};

const EXAMPLES: &str = "\
Examples:
  barecat-mount data.barecat /mnt/data          # read-only; returns once mounted
  ls /mnt/data && python train.py --data /mnt/data
  barecat-mount -u /mnt/data                    # or: fusermount3 -u /mnt/data
  barecat-mount -u -z /mnt/data                 # detach now even if busy
  barecat-mount -f data.barecat /mnt/data       # stay in the foreground (Ctrl-C unmounts)
  barecat-mount --writable data.barecat /mnt/data
  cp -r new_images /mnt/data/ && barecat-mount -u /mnt/data
  barecat-mount -o allow_other --uid 1000 --gid 1000 --umask 022 data.barecat /mnt/data
  barecat-mount https://example.org/data/data.barecat /mnt/data   # remote, read-only
  barecat mount data.barecat /mnt/data -o rw,append_only,fg       # Python barecat's -o

The command returns once the kernel serves the mount (or with the reason it could
not mount), leaving a daemon that serves it until it is unmounted; SIGTERM or
SIGINT to the daemon unmounts cleanly. Inode numbers are stable for the life of
the mount. On a read-only mount every file is checked against its stored CRC32C
at its first read, before any of its bytes is served (a first read of a few bytes
of a large file reads all of it once): a mismatch fails that read, and every later
read of the file, with EIO and is logged (--log, or stderr with -f, syslog
otherwise). Read-only mounts let the kernel open files, and cache listings and file
pages across opens, without asking the daemon: do not change the archive while it
is mounted read-only. On a writable mount a file read front to back is checked at
its end (and a read that reaches the end of a file of up to 64 MiB checks the
whole file once); reads that stop short of the end are not checked.

--writable: new files and directories, writes, unlink, rmdir of empty directories,
rename, chmod, utimes and truncate. A file is appended to the archive and
committed when it is closed, so a killed daemon leaves every closed file in the
archive; rewriting a file appends a new copy and leaves the old bytes as a hole
for barecat-defrag.";

/// Mount an archive as a file system (FUSE).
#[derive(Debug, Parser)]
#[command(name = "barecat-mount", version, after_help = EXAMPLES)]
pub struct Args {
    /// The archive (its index file, e.g. data.barecat); with -u, the mount point
    #[arg(required = true, value_name = "ARCHIVE")]
    pub archive: Option<PathBuf>,
    /// An existing directory to mount it on
    #[arg(required_unless_present = "unmount")]
    pub mountpoint: Option<PathBuf>,
    /// Unmount the archive mounted at the mount point given
    #[arg(short = 'u', long, conflicts_with_all = ["writable", "foreground"])]
    pub unmount: bool,
    /// With -u: detach the mount now even if it is busy (the daemon ends when the
    /// last file on it is closed)
    #[arg(short = 'z', long, requires = "unmount")]
    pub lazy: bool,
    /// Stay in the foreground (default: detach once the mount is ready)
    #[arg(short, long)]
    pub foreground: bool,
    /// Accept writes: new files and directories, removals, renames
    #[arg(short, long)]
    pub writable: bool,
    /// Mount options, comma-separated: FUSE's (allow_other, allow_root, ro,
    /// default_permissions, auto_unmount, noexec, …) and Python barecat's (rw, fg,
    /// mmap, overwrite, append_only, defrag, shard_size_limit=SIZE)
    #[arg(short = 'o', long = "options", value_name = "OPTIONS")]
    pub options: Vec<String>,
    /// Show every entry as owned by this user id
    #[arg(long, value_name = "UID")]
    pub uid: Option<u32>,
    /// Show every entry as owned by this group id
    #[arg(long, value_name = "GID")]
    pub gid: Option<u32>,
    /// Clear these permission bits (octal) from every entry's mode
    #[arg(long, value_name = "MASK", value_parser = parse_umask)]
    pub umask: Option<u32>,
    /// Append the daemon's log lines (CRC mismatches, I/O errors) to FILE
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// With --writable: start a new, empty archive in place of the one there
    #[arg(long)]
    pub overwrite: bool,
    /// With --writable: only additions (removals, renames and changes to the bytes
    /// of existing files fail with EPERM)
    #[arg(long)]
    pub append_only: bool,
    /// With --writable: defragment (quickly) once 100 MiB were removed or replaced
    /// and holes make up a tenth of the shards
    #[arg(long)]
    pub enable_defrag: bool,
    /// With --writable: the archive's shard size limit from now on (e.g. 10G)
    #[arg(long, value_name = "SIZE", value_parser = super::common::parse_size_arg)]
    pub shard_size_limit: Option<u64>,
    /// No effect (reads always go through the kernel's page cache); accepted as
    /// barecat-mount 0.1.3 accepts it
    #[arg(long)]
    pub mmap: bool,
    #[command(flatten)]
    pub quiet: Quiet,
}

fn parse_umask(s: &str) -> Result<u32, String> {
    u32::from_str_radix(s, 8)
        .ok()
        .filter(|m| *m <= 0o7777)
        .ok_or_else(|| format!("invalid umask {s:?} (expected octal, like 022)"))
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.unmount {
        let (Some(mp), None) = (&args.archive, &args.mountpoint) else {
            crate::usage!("-u takes the mount point only");
        };
        mount::unmount(mp, args.lazy)
            .with_context(|| format!("cannot unmount {}", mp.display()))?;
        return Ok(ExitCode::SUCCESS);
    }
    let (Some(archive), Some(mountpoint)) = (args.archive, args.mountpoint) else {
        crate::usage!("an archive and a mount point are needed");
    };
    let mut opts = MountOptions {
        writable: args.writable,
        foreground: args.foreground,
        options: args.options,
        uid: args.uid,
        gid: args.gid,
        umask: args.umask,
        log: args.log,
        threads: 0,
        overwrite: args.overwrite,
        append_only: args.append_only,
        defrag: args.enable_defrag,
        shard_size_limit: args.shard_size_limit,
    };
    if let Err(e) = opts.normalize() {
        crate::usage!("{e}");
    }
    // (A remote archive is opened only by the daemon: no request before it forks.)
    if !args.quiet.quiet && !opts.overwrite && !crate::core::location::is_remote(&archive) {
        if let Ok(a) = crate::Archive::open(&archive) {
            super::print_warnings("barecat-mount", a.warnings());
        }
    }
    mount::mount(&archive, &mountpoint, &opts)
        .with_context(|| format!("cannot mount {}", archive.display()))?;
    Ok(ExitCode::SUCCESS)
}
