//! Love Letter strategies (pending the engine).
