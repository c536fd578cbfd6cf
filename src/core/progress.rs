//! Progress reporting for long operations: an indicatif bar on stderr, drawn only
//! when stderr is a terminal and the user did not ask for quiet; otherwise free.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Files and bytes done, with a rate and (when the totals are known) an ETA.
pub struct Progress {
    bar: Option<ProgressBar>,
    files: std::sync::atomic::AtomicU64,
}

impl Progress {
    /// A bar labelled `verb` ("adding", "verifying", …). `total_bytes` enables the
    /// percentage and ETA. Nothing is drawn unless `enabled` and stderr is a terminal.
    pub fn new(enabled: bool, verb: &str, total_bytes: Option<u64>) -> Progress {
        let bar = (enabled && std::io::stderr().is_terminal()).then(|| {
            let bar = match total_bytes {
                Some(total) => ProgressBar::new(total).with_style(bar_style()),
                None => ProgressBar::no_length().with_style(
                    ProgressStyle::with_template(
                        "{prefix} {spinner} {bytes} {binary_bytes_per_sec} {msg} {elapsed}",
                    )
                    .expect("valid template"),
                ),
            };
            bar.set_draw_target(ProgressDrawTarget::stderr_with_hz(8));
            bar.set_prefix(verb.to_string());
            bar.enable_steady_tick(Duration::from_millis(250));
            bar
        });
        Progress {
            bar,
            files: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// A progress that never draws.
    pub fn hidden() -> Progress {
        Progress::new(false, "", None)
    }

    /// Count `files` more files and `bytes` more bytes.
    pub fn add(&self, files: u64, bytes: u64) {
        let n = self
            .files
            .fetch_add(files, std::sync::atomic::Ordering::Relaxed)
            + files;
        if let Some(bar) = &self.bar {
            bar.inc(bytes);
            bar.set_message(format!("{n} files"));
        }
    }

    /// Set the known total of bytes (for a percentage and an ETA).
    pub fn set_total(&self, bytes: u64) {
        if let Some(bar) = &self.bar {
            bar.set_length(bytes);
            bar.set_style(bar_style());
        }
    }

    /// Print a line above the bar (or to stderr when there is no bar).
    pub fn println(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
    }

    /// Remove the bar.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

fn bar_style() -> ProgressStyle {
    ProgressStyle::with_template(
        "{prefix} {wide_bar} {bytes}/{total_bytes} {binary_bytes_per_sec} {msg} eta {eta}",
    )
    .expect("valid template")
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}
