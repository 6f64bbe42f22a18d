//! The unified LLM client (SPEC §8, §11).

pub mod metrics;
pub mod translate;
