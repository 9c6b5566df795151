//! bvh importer (in progress).
