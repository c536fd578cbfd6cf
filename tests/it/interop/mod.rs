//! Python barecat 0.3.1 (from PyPI) and our programs on the same archives: both
//! directions, listings, rsync.

mod listing;
mod python;
mod rsync;
