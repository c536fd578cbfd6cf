//! Reliability: readers beside writers, commands killed at random instants, I/O
//! faults, corrupt and hostile input.

mod concurrency;
mod corruption;
mod crash;
mod crash_edit;
mod crash_inplace;
mod faults;
mod hostile;
mod records;
