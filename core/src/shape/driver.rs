//! Placeholder for the module's author; replaced before anything uses it.
