//! Verify a dataset or an archive's record table: every entry inside the written
//! part of its chunk, the chunks present, `meta.json` consistent, every record's
//! stored bytes against their CRC32C (and, compressed, that they decompress), and
//! for an archive table that it still matches the index.
//!
//! Why a report rather than the first error: like `barecat-verify`, a damaged
//! dataset should be described completely in one run (`--json` for scripts).

use std::collections::BTreeSet;

use rayon::prelude::*;
use serde::Serialize;

use crate::core::crc;
use crate::core::error::{Error, Result};
use crate::core::progress::Progress;
use crate::records::format::{parse_chunk_name, Compress, Entry};
use crate::records::reader::{Records, Source};
use crate::records::rebalance::Utilization;
use crate::records::table;

/// What [`verify`] found.
#[derive(Debug, Clone, Serialize)]
pub struct RecordsReport {
    /// The dataset directory or table file checked.
    pub path: String,
    /// `dataset` or `archive` (a record table over an archive).
    pub kind: &'static str,
    /// True when no problem was found (warnings allowed).
    pub ok: bool,
    /// The number of records.
    pub records: u64,
    /// How many records had their bytes read and checked.
    pub checked_records: u64,
    /// Records whose archive row has no CRC, so only their extent was checked.
    pub records_without_crc: u64,
    /// Live bytes against chunk bytes.
    pub utilization: Utilization,
    /// What breaks the format or loses data, one line each.
    pub problems: Vec<String>,
    /// What is allowed but worth knowing (unused chunk bytes, leftovers), one line each.
    pub warnings: Vec<String>,
}

/// Everything [`Records`] knows about itself, for `info`.
#[derive(Debug, Clone, Serialize)]
pub struct Info {
    /// The dataset directory or table file.
    pub path: String,
    /// `dataset` or `archive` (a record table over an archive).
    pub kind: &'static str,
    /// The number of records.
    pub length: u64,
    /// The element type's name.
    pub dtype: &'static str,
    /// The codec's name.
    pub compress: &'static str,
    /// For a table: which file record i is (`path`, `address`, `list`).
    pub order: Option<&'static str>,
    /// For a dataset: records per chunk.
    pub chunk_records: Option<u64>,
    /// For a dataset: the byte limit of a chunk.
    pub chunk_max_bytes: Option<u64>,
    /// Live bytes against chunk bytes.
    pub utilization: Utilization,
}

/// The written part of chunk `id` for the checks: the unfull write position, or
/// the file's length.
fn written_part(r: &Records, id: u32) -> Result<u64> {
    if let Some(len) = r.chunks().remote_len(id) {
        return len;
    }
    let path = r.chunks().names().path(id);
    let md = std::fs::metadata(&path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::CorruptRecords {
                path: path.clone(),
                detail: format!("chunk {id} is missing (an entry refers to it)"),
            }
        } else {
            Error::io(&path, e)
        }
    })?;
    if !md.is_file() {
        return Err(Error::not_a_file(&path, md.is_dir()));
    }
    Ok(match r.meta().and_then(|m| m.unfull(id)) {
        Some(u) => u.1.min(md.len()),
        None => md.len(),
    })
}

/// Live bytes and chunk usage of `r`.
pub fn utilization(r: &Records) -> Result<Utilization> {
    let mut live = 0u64;
    let mut chunks = BTreeSet::new();
    for i in 0..r.len() {
        let e = r.entry(i)?;
        live += e.length as u64;
        if e.length > 0 {
            chunks.insert(e.chunk);
        }
    }
    if let Some(m) = r.meta() {
        chunks.extend(m.chunks.unfull.iter().map(|u| u.0));
        if let Source::Dataset { dir } = r.source() {
            for e in std::fs::read_dir(dir.join("chunk"))
                .into_iter()
                .flatten()
                .flatten()
            {
                if let Some(id) = e.file_name().to_str().and_then(parse_chunk_name) {
                    if id < m.chunks.num {
                        chunks.insert(id);
                    }
                }
            }
        }
    }
    let mut used = 0;
    for &id in &chunks {
        used += written_part(r, id).unwrap_or(0);
    }
    Ok(Utilization::new(live, used, chunks.len() as u64))
}

/// `info` about an open handle.
pub fn info(r: &Records) -> Result<Info> {
    let (kind, order) = match r.source() {
        Source::Dataset { .. } => ("dataset", None),
        Source::Archive { order, .. } => ("archive", Some(order.name())),
    };
    Ok(Info {
        path: r.name().display().to_string(),
        kind,
        length: r.len(),
        dtype: r.dtype().name(),
        compress: r.compress().name(),
        order,
        chunk_records: r.meta().map(|m| m.chunks.size),
        chunk_max_bytes: r.meta().map(|m| m.chunks.max_bytes),
        utilization: utilization(r)?,
    })
}

/// Verify the dataset or archive table at `path`.
pub fn verify(path: &std::path::Path, progress: &Progress) -> Result<RecordsReport> {
    let mut problems = Vec::new();
    let mut warnings = Vec::new();
    let r = Records::open(path)?;
    warnings.extend(r.warnings().iter().cloned());
    let kind = match r.source() {
        Source::Dataset { .. } => "dataset",
        Source::Archive { .. } => "archive",
    };
    if let Source::Archive { archive, .. } = r.source() {
        if let Err(e) = table::check_fully(archive) {
            problems.push(e.to_string());
        }
    }
    if let (Some(m), Source::Dataset { dir }) = (r.meta(), r.source()) {
        for u in &m.chunks.unfull {
            let p = dir.join("chunk").join(format!("{}.zr", u.0));
            match std::fs::metadata(&p) {
                Ok(md) if md.len() < u.1 => problems.push(format!(
                    "{}: meta.json says {} bytes are written but the chunk has {}",
                    p.display(),
                    u.1,
                    md.len()
                )),
                Ok(_) => {}
                Err(_) => problems.push(format!(
                    "{}: unfull chunk {} of meta.json is missing",
                    p.display(),
                    u.0
                )),
            }
        }
        for e in std::fs::read_dir(dir.join("chunk"))
            .into_iter()
            .flatten()
            .flatten()
        {
            if let Some(id) = e.file_name().to_str().and_then(parse_chunk_name) {
                if id >= m.chunks.num {
                    warnings.push(format!(
                        "{}: left by an interrupted writer (chunk ids in use are below {}); \
                         the next writer removes it",
                        e.path().display(),
                        m.chunks.num
                    ));
                }
            }
        }
        if !m.redo.is_empty() || !m.retire.is_empty() {
            warnings.push(format!(
                "{}: an interrupted writer left work in meta.json (redo/retire); readers \
                 apply it and the next writer finishes it",
                dir.join("meta.json").display()
            ));
        }
    }
    // Entries in address order, checked on all cores.
    let n = r.len();
    let mut order: Vec<(Entry, u64)> = (0..n)
        .map(|i| (r.entry(i).unwrap_or_default(), i))
        .collect();
    order.sort_unstable_by_key(|(e, _)| (e.chunk, e.offset));
    let mut written: std::collections::HashMap<u32, Result<u64, String>> = Default::default();
    for (e, _) in &order {
        if e.length > 0 && !written.contains_key(&e.chunk) {
            written.insert(
                e.chunk,
                written_part(&r, e.chunk).map_err(|e| e.to_string()),
            );
        }
    }
    let compress = r.compress();
    let pool = crate::core::fork::pool(0)?;
    let found: Vec<(Vec<String>, u64, u64)> = pool.install(|| {
        order
            .par_chunks(1024)
            .map(|part| {
                let mut probs = Vec::new();
                let mut checked = 0;
                let mut no_crc = 0;
                let mut bytes = 0u64;
                for (e, i) in part {
                    checked += 1;
                    if e.length == 0 {
                        if let Err(err) = r.get_checked(*i) {
                            probs.push(format!("record {i}: {err}"));
                        }
                        continue;
                    }
                    bytes += e.length as u64;
                    match &written[&e.chunk] {
                        Err(msg) => {
                            probs.push(format!("record {i}: {msg}"));
                            continue;
                        }
                        Ok(w) => {
                            if e.end().is_none_or(|end| end > *w) {
                                probs.push(format!(
                                "record {i}: entry (chunk {}, offset {}, {} bytes) lies past the \
                                 written part of its chunk ({w} bytes)",
                                e.chunk, e.offset, e.length
                            ));
                                continue;
                            }
                        }
                    }
                    if compress != Compress::None {
                        // Decompressed too: a damaged frame is found even if its CRC
                        // was stored after the damage.
                        if let Err(err) = r.get_checked(*i) {
                            probs.push(format!("record {i}: {err}"));
                        }
                        continue;
                    }
                    let rec = match r.get(*i) {
                        Ok(x) => x,
                        Err(err) => {
                            probs.push(format!("record {i}: {err}"));
                            continue;
                        }
                    };
                    match r.stored_crc(*i).ok().flatten() {
                        Some(want) => {
                            let got = crc::crc32c(&rec);
                            if got != want {
                                probs.push(format!(
                                    "record {i}: CRC32C mismatch (stored {want}, computed {got})"
                                ));
                            }
                        }
                        None => no_crc += 1,
                    }
                }
                progress.add(part.len() as u64, bytes);
                (probs, checked, no_crc)
            })
            .collect()
    });
    let mut checked = 0;
    let mut no_crc = 0;
    for (p, c, m) in found {
        problems.extend(p);
        checked += c;
        no_crc += m;
    }
    let utilization = utilization(&r)?;
    Ok(RecordsReport {
        path: path.display().to_string(),
        kind,
        ok: problems.is_empty(),
        records: n,
        checked_records: checked,
        records_without_crc: no_crc,
        utilization,
        problems,
        warnings,
    })
}
