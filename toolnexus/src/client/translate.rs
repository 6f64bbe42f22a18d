//! Single-turn translation (SPEC §11).
