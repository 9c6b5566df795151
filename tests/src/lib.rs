//! Integration, property and fuzz tests for sinew.
//!
//! The tests live in `tests/` (one file per kernel: `blend`, `fk`,
//! `skeleton`, `clip`, plus `alloc` for the no-allocation guarantee and
//! `procedural` for the embedded humanoid); shared helpers live in
//! `support/mod.rs` and are included by each test file with `#[path]`.
