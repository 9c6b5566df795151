//! crowd
