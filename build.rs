//! Links libarchive when the `libarchive` feature is on (the default): found with
//! pkg-config, so that a machine without its development files fails here with a
//! message saying what to install, not at link time with `-larchive` not found.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CARGO_FEATURE_LIBARCHIVE");
    if std::env::var_os("CARGO_FEATURE_LIBARCHIVE").is_none() {
        return;
    }
    #[cfg(feature = "libarchive")]
    if let Err(e) = pkg_config::Config::new()
        .atleast_version("3.3")
        .probe("libarchive")
    {
        panic!(
            "the `libarchive` feature (on by default: it reads 7z, rar, ISO 9660, cpio, \
             ar, xar, cab, lha and rpm) needs libarchive 3.3 or later with its \
             development files: install libarchive-dev (Debian, Ubuntu) or \
             libarchive-devel (Fedora), or build with --no-default-features. \
             pkg-config said: {e}"
        );
    }
}
