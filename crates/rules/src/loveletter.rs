//! Love Letter (placeholder while the engine is written).
