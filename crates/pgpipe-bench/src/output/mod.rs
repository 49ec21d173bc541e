//! Output formats: the terminal table, JSON, Markdown and SVG charts.

pub mod charts;
pub mod json;
pub mod markdown;
pub mod table;
