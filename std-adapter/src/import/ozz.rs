//! ozz importer (in progress).
