//! `barecat tree`: Python barecat's `tree` (docs/FORMAT.md §8.4), streamed.
//!
//! The first line is the start path (without a trailing `/`) or `.`; then, level by
//! level, a directory's subdirectories (by name, each followed by its own subtree),
//! then its files (by name), drawn with `├── `/`└── ` and `│   `/`    `; then an
//! empty line and `D directories, F files` (D counts the start directory too).
//! `-L N` shows N levels; `-d` leaves files out (and the file count).
//!
//! Unlike Python barecat, counts of one are singular (`1 directory, 1 file`; Python
//! prints `1 directories, 1 files`, docs/FORMAT.md §11.20), and a start path that is not a
//! directory is an error (Python prints the path and `1 directories, 0 files`).

use std::io::Write;

use crate::core::archive::walk::{dir_info, ChildOrder, Walk, WalkEvent, WalkOptions};
use crate::core::archive::Archive;
use crate::core::error::{Error, Result};
use crate::core::path as mpath;

/// What to draw.
#[derive(Debug, Clone, Copy, Default)]
pub struct TreeOptions {
    /// `-L`: levels shown below the start.
    pub level: Option<usize>,
    /// `-d`: directories only.
    pub dirs_only: bool,
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Draw the tree below `start` to `out`; returns (directories, files) counted.
pub fn tree(
    archive: &Archive,
    start: &str,
    opts: TreeOptions,
    out: &mut dyn Write,
) -> Result<(u64, u64)> {
    let shown = start.trim_end_matches('/');
    let dir = dir_info(archive, &mpath::normalize(shown))?;
    let out_err = Error::output;
    writeln!(out, "{}", if shown.is_empty() { "." } else { shown }).map_err(out_err)?;
    let walk = Walk::new(
        archive,
        dir,
        WalkOptions {
            order: ChildOrder::Name,
            files_first: false,
            files: !opts.dirs_only,
            max_depth: opts.level,
            file_paths_only: true,
        },
    );
    let (mut dirs, mut files) = (1u64, 0u64);
    // For each open level: is its directory the last of its siblings?
    let mut lasts: Vec<bool> = Vec::new();
    let mut prefix = String::new();
    for ev in walk {
        let (name, depth, last, is_dir) = match ev? {
            WalkEvent::Dir { depth: 0, .. } | WalkEvent::End { .. } => continue,
            WalkEvent::Dir { info, depth, last } => (info.path, depth, last, true),
            WalkEvent::File { info, depth, last } => (info.path, depth, last, false),
        };
        if lasts.len() >= depth {
            lasts.truncate(depth - 1);
            prefix.clear();
            for &l in &lasts {
                prefix.push_str(if l { "    " } else { "│   " });
            }
        }
        let connector = if last { "└── " } else { "├── " };
        writeln!(out, "{prefix}{connector}{}", mpath::basename(&name)).map_err(out_err)?;
        if is_dir {
            dirs += 1;
            lasts.push(last);
            prefix.push_str(if last { "    " } else { "│   " });
        } else {
            files += 1;
        }
    }
    writeln!(out).map_err(out_err)?;
    if opts.dirs_only {
        writeln!(out, "{}", plural(dirs, "directory", "directories")).map_err(out_err)?;
    } else {
        writeln!(
            out,
            "{}, {}",
            plural(dirs, "directory", "directories"),
            plural(files, "file", "files")
        )
        .map_err(out_err)?;
    }
    Ok((dirs, files))
}
