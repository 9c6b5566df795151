//! gltf importer (in progress).
