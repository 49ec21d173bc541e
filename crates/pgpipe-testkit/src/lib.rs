//! Test clusters.
