//! Criterion benches live in `benches/`; shared bench data builders are in `sinew_std::synthetic`.
