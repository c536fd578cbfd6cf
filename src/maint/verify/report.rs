//! The report of a verification, for humans: kept apart from the checks so that
//! `--json` output and the text show the same findings.

use super::*;

/// Write `report` for humans: one line per problem and warning, then a summary.
pub fn write_human(
    report: &VerifyReport,
    quiet: bool,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    use crate::core::size::human;
    for p in &report.problems {
        writeln!(out, "{}", p.message)?;
    }
    if quiet {
        return Ok(());
    }
    for w in &report.warnings {
        writeln!(out, "warning: {}", w.message)?;
    }
    let s = &report.space;
    if report.ok {
        match report.mode {
            Mode::Full => writeln!(
                out,
                "Verified {} files ({}), all checksums OK.",
                report.files,
                human(report.bytes)
            )?,
            Mode::Quick => writeln!(
                out,
                "Verified {} files (quick check), all OK.",
                report.files
            )?,
        }
    } else {
        writeln!(
            out,
            "{}: {} problem(s) found in {} files ({}).",
            report.archive,
            report.problems.len(),
            report.files,
            human(report.bytes)
        )?;
    }
    writeln!(
        out,
        "Space: {} shard(s), {} on disk, {} live ({:.1}% used), {} reclaimable \
         ({} in {} hole(s), {} trailing).",
        s.shards,
        human(s.physical_bytes),
        human(s.live_bytes),
        s.utilization * 100.0,
        human(s.reclaimable_bytes),
        human(s.hole_bytes),
        s.holes,
        human(s.trailing_bytes)
    )?;
    if s.linked_unused_bytes > 0 {
        writeln!(
            out,
            "Linked shards: {} of their bytes belong to no file here (the headers of a \
             wrapped tar or zip, or another archive's holes); not reclaimable here.",
            human(s.linked_unused_bytes)
        )?;
    }
    if report.files_without_crc > 0 {
        writeln!(
            out,
            "{} file(s) have no stored CRC32C (as Python barecat's --wrap leaves them): \
             their bytes were read but could not be checked.",
            report.files_without_crc
        )?;
    }
    Ok(())
}
