//! Batteries.
