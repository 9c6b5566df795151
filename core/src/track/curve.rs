//! Filled in by its own change; declared here so the module list is settled.
