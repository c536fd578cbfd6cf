//! `barecat-upgrade`: bring an archive of schema 0.2 (or older 0.x) to 0.3, in
//! place. Also Python barecat's legacy `barecat-upgrade-database PATH`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use super::common::{NoSidecar, Quiet};
use crate::maint::upgrade::{upgrade, UpgradeOptions};

const EXAMPLES: &str = "\
Examples:
  barecat upgrade old.barecat                         # keeps old.barecat.old
  barecat upgrade --no-preserve-backup old.barecat
  barecat-upgrade-database old                        # legacy name, legacy naming

Archives written by Python barecat 0.2.5-0.2.7 have schema 0.2: the same columns,
but other keys and directory-statistics triggers that miscount when directories
are moved or deleted. They are read here (with a warning) but not written. The
upgrade builds a new index with the 0.3 schema next to the old one, copies every
directory, file and setting, recomputes every directory's statistics from the
files (repairing what the old triggers broke), and renames it into place; the
shards are not touched. The old index is kept as INDEX.old unless
--no-preserve-backup. (Python barecat 0.3.1's own upgrade stops at an import of a
module it does not install.)

Safe to interrupt at any moment: until the new index is renamed into place the
archive is the old one, unchanged; run the command again to finish.

Exit status: 0 success (also when the archive is at 0.3 already), 1 failure (the
archive unchanged), 2 usage error.";

/// Upgrade an archive's index to schema 0.3, in place.
#[derive(Debug, Parser)]
#[command(name = "barecat-upgrade", version, after_help = EXAMPLES)]
pub struct Args {
    /// The archive (its index: ARCHIVE, or ARCHIVE-sqlite-index in the legacy
    /// naming)
    #[arg(value_name = "ARCHIVE")]
    pub archive: PathBuf,
    /// Keep the old index as INDEX.old (the default)
    #[arg(long, overrides_with = "no_preserve_backup")]
    pub preserve_backup: bool,
    /// Do not keep the old index
    #[arg(long)]
    pub no_preserve_backup: bool,
    /// Accepted for Python barecat's command line; nothing is computed in parallel
    #[arg(short = 'j', long = "workers", value_name = "N", hide = true)]
    pub workers: Option<usize>,
    #[command(flatten)]
    pub quiet: Quiet,
    #[command(flatten)]
    pub sidecar: NoSidecar,
    /// End abruptly after N steps, as a crash would (for tests)
    #[arg(long, hide = true, value_name = "N")]
    pub crash_after_steps: Option<u64>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let opts = UpgradeOptions {
        preserve_backup: !args.no_preserve_backup,
        sidecar: args.sidecar.enabled(),
        crash_after_steps: args.crash_after_steps,
    };
    let r = upgrade(&args.archive, &opts)?;
    if !args.quiet.quiet {
        let name = r.index.display();
        if r.already_current {
            println!("{name}: already at schema 0.3, nothing to do");
        } else {
            println!(
                "{name}: upgraded from schema {} to 0.3: {} files, {} directories ({} with \
                 statistics corrected){}",
                r.from,
                r.files,
                r.dirs,
                r.dirs_corrected,
                match &r.backup {
                    Some(b) => format!("; the old index is kept as {}", b.display()),
                    None => String::new(),
                }
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
