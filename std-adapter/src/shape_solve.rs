//! Blend-shape weight solving (work in progress).
