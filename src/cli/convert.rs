//! `barecat convert IN OUT`: Python barecat's converter between barecat archives
//! and tar or zip files, the direction told by the names (or, for an input that
//! is not a barecat archive, by its content: any format `from-archive` reads).
//! It runs the commands that do the work: `from-archive` (which hands tar and
//! zip to `from-tar` and `from-zip`, `--wrap` included), `to-tar`, `to-zip`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;

use super::common::{NoSidecar, Quiet, ShardLimit};
use crate::ingest::ArchiveKind;

const EXAMPLES: &str = "\
Examples:
  barecat convert data.tar data.barecat           # tar (plain or compressed) -> barecat
  barecat convert data.zip data.barecat -s 1G     # zip -> barecat, 1 GiB shards
  barecat convert photos.7z data.barecat          # 7z, rar, cpio, iso, ... -> barecat
  barecat convert --wrap data.tar data.barecat    # index the tar in place, copy nothing
  barecat convert data.barecat data.tar.gz        # barecat -> tar, gzip from the name
  barecat convert data.barecat out.zip --root-dir data   # every entry under data/
  curl -s https://host/d.tar.gz | barecat convert --stdin tar.gz data.barecat
  barecat convert --stdout data.barecat tar.zst | ssh host 'tar -x --zstd'

The direction comes from the names: an input ending in .tar, .tar.gz, .tgz,
.tar.bz2, .tbz2, .tar.xz, .txz, .tar.zst, .tzst or .zip (any case), or any file
that is not a barecat archive and holds an archive this suite reads (7z, rar,
cpio, rpm, ISO 9660, ar/deb, xar, cab, lha, tar.lz4, tar.lz, tar.Z, ...: see
barecat-from-archive; the format is told by the content, whatever the name), is
converted into the barecat archive OUT; an OUT named like a tar or zip file is
written from the barecat archive IN. With --stdin, IN names the format of the tar on standard input (tar,
tar.gz, tar.bz2, tar.xz, tar.zst; the compression is detected all the same); with
--stdout, OUT names the format of the tar written to standard output.

The work is done as barecat-from-tar, barecat-from-zip, barecat-to-tar and
barecat-to-zip do it (see their help): tar members and zip entries keep their
metadata, files are CRC-checked on the way out, a zip is written stored. --wrap
indexes an uncompressed tar or a stored zip where it lies (shard 0 of the archive
is a link to it) and, unlike Python barecat, stores every file's CRC32C.

Exit status: 0 success, 1 failure or members skipped (each reported), 2 usage
error (both or neither name a tar or zip, a bad format name).";

/// Convert between a barecat archive and a tar or zip file.
#[derive(Debug, Parser)]
#[command(name = "barecat-convert", version, after_help = EXAMPLES)]
pub struct Args {
    /// Input: a tar or zip file, or a barecat archive (with --stdin: the format of
    /// the tar on standard input)
    #[arg(value_name = "IN")]
    pub input: PathBuf,
    /// Output: a barecat archive, or a tar or zip file (with --stdout: the format
    /// of the tar to write to standard output)
    #[arg(value_name = "OUT")]
    pub output: PathBuf,
    #[command(flatten)]
    pub limit: ShardLimit,
    /// Replace OUT if it exists
    #[arg(short, long)]
    pub force: bool,
    /// Read the tar from standard input; IN is its format
    #[arg(long, conflicts_with = "stdout")]
    pub stdin: bool,
    /// Write a tar to standard output; OUT is its format
    #[arg(long)]
    pub stdout: bool,
    /// Put every member under the directory NAME/ (barecat to tar or zip)
    #[arg(long, value_name = "NAME")]
    pub root_dir: Option<String>,
    /// Index an uncompressed tar or stored zip in place instead of copying it
    /// (tar or zip to barecat)
    #[arg(long)]
    pub wrap: bool,
    #[command(flatten)]
    pub names: super::from_archive::NameEncodingArg,
    #[command(flatten)]
    pub quiet: Quiet,
    #[command(flatten)]
    pub sidecar: NoSidecar,
}

/// Tar formats that --stdin and --stdout name (Python barecat's, and zstd).
const TAR_FORMATS: [&str; 5] = ["tar", "tar.gz", "tar.bz2", "tar.xz", "tar.zst"];
/// Names of tar files (any case).
const TAR_NAMES: [&str; 9] = [
    ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz", ".tar.zst", ".tzst",
];

/// Names of the other archive files this suite imports (any case); their format
/// is told by their content all the same.
const OTHER_NAMES: [&str; 24] = [
    ".tar.lz4",
    ".tlz4",
    ".tar.lz",
    ".tlz",
    ".tar.z",
    ".taz",
    ".7z",
    ".rar",
    ".cpio",
    ".cpio.gz",
    ".cpio.xz",
    ".cpio.zst",
    ".rpm",
    ".deb",
    ".iso",
    ".ar",
    ".xar",
    ".cab",
    ".lha",
    ".lzh",
    ".udeb",
    ".ipk",
    ".pkg",
    ".tar.lzma",
];

/// Is `p` named like a tar or zip file?
fn kind_of(p: &Path) -> Option<ArchiveKind> {
    let name = p.file_name()?.to_string_lossy().to_lowercase();
    if name.ends_with(".zip") {
        Some(ArchiveKind::Zip)
    } else if TAR_NAMES.iter().any(|x| name.ends_with(x)) {
        Some(ArchiveKind::Tar)
    } else {
        None
    }
}

/// Is `p` an archive to import, by its name or (a file that is not a barecat
/// archive) by its content?
fn imported(p: &Path) -> bool {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    if OTHER_NAMES.iter().any(|x| name.ends_with(x)) {
        return true;
    }
    // A barecat index (an SQLite database) is no archive of any of these formats.
    std::fs::metadata(p).is_ok_and(|m| m.is_file())
        && matches!(crate::ingest::formats::detect(p), Ok(Some(_)))
}

/// A `--stdin`/`--stdout` format name, checked.
fn format_name(p: &Path, flag: &str, what: &str) -> anyhow::Result<String> {
    let f = p.to_string_lossy().to_string();
    if !TAR_FORMATS.contains(&f.as_str()) {
        crate::usage!(
            "With --{flag}, {what} must be a tar format: {}",
            TAR_FORMATS.join(", ")
        );
    }
    Ok(f)
}

/// The argument list of a command run for the conversion.
fn argv(prog: &str, rest: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    std::iter::once(OsString::from(prog)).chain(rest).collect()
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    const PROG: &str = "barecat-convert";
    let input_kind = if args.stdin {
        format_name(&args.input, "stdin", "input")?;
        Some(ArchiveKind::Tar)
    } else {
        kind_of(&args.input).or_else(|| imported(&args.input).then_some(ArchiveKind::Tar))
    };
    let output_kind = if args.stdout {
        Some(ArchiveKind::Tar)
    } else {
        kind_of(&args.output)
    };
    match (input_kind, output_kind) {
        (Some(_), Some(_)) => {
            crate::usage!("Both input and output are tar/zip. One must be a barecat path.")
        }
        (None, None) => crate::usage!(
            "Neither input nor output is tar/zip. One must have extension like .tar, \
             .tar.gz, .zip (or use --stdin/--stdout)"
        ),
        _ => {}
    }
    let exists = if output_kind.is_some() {
        !args.stdout && std::fs::symlink_metadata(&args.output).is_ok()
    } else {
        crate::Layout::exists(&args.output)?
    };
    if exists && !args.force {
        anyhow::bail!(
            "{}: already exists; use -f to overwrite it",
            args.output.display()
        );
    }
    let mut common: Vec<OsString> = Vec::new();
    if args.force {
        common.push("-f".into());
    }
    if args.quiet.quiet {
        common.push("-q".into());
    }
    if input_kind.is_some() {
        // An archive (its format told by its content) -> barecat.
        if args.root_dir.is_some() {
            crate::usage!("--root-dir applies to conversions into a tar or zip");
        }
        if args.wrap && args.stdin {
            crate::usage!("--wrap cannot be used with --stdin");
        }
        let mut rest = common;
        if let Some(s) = args.limit.shard_size_limit {
            rest.push("-s".into());
            rest.push(s.to_string().into());
        }
        if args.sidecar.no_sidecar {
            rest.push("--no-sidecar".into());
        }
        if args.wrap {
            rest.push("--wrap".into());
        }
        if let Some(enc) = args.names.name_encoding {
            rest.push("--name-encoding".into());
            rest.push(enc.name().into());
        }
        rest.push("--".into());
        rest.push(if args.stdin {
            OsString::from("-")
        } else {
            args.input.clone().into()
        });
        rest.push(args.output.clone().into());
        return super::from_archive::run_as(
            PROG,
            super::from_archive::Args::try_parse_from(argv("barecat-from-archive", rest))?,
        );
    }
    // barecat -> tar or zip.
    if args.wrap {
        crate::usage!("--wrap applies to conversions of a tar or zip into a barecat archive");
    }
    if args.limit.shard_size_limit.is_some() && !args.quiet.quiet {
        eprintln!("{PROG}: note: -s applies to conversions into a barecat archive; ignored");
    }
    let mut rest = common;
    if let Some(r) = &args.root_dir {
        rest.push("--root-dir".into());
        rest.push(r.into());
    }
    let output: OsString = if args.stdout {
        let f = format_name(&args.output, "stdout", "output")?;
        match f.as_str() {
            "tar.gz" => rest.push("--gzip".into()),
            "tar.bz2" => rest.push("--bzip2".into()),
            "tar.xz" => rest.push("--xz".into()),
            "tar.zst" => rest.push("--zstd".into()),
            _ => {}
        }
        "-".into()
    } else {
        args.output.clone().into()
    };
    rest.push("--".into());
    rest.push(args.input.clone().into());
    rest.push(output);
    match output_kind {
        Some(ArchiveKind::Zip) => super::to_zip::run_as(
            PROG,
            super::to_zip::Args::try_parse_from(argv("barecat-to-zip", rest))?,
        ),
        _ => super::to_tar::run_as(
            PROG,
            super::to_tar::Args::try_parse_from(argv("barecat-to-tar", rest))?,
        ),
    }
}
