//! ACP.
