//! Maintenance commands: verify, defrag, merge, reports, and the drop-ins of Python
//! barecat's reshard, subset and upgrade.

mod defrag;
mod dropin;
mod merge;
mod reports;
mod verify;
