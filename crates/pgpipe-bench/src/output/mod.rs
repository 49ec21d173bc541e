//! Output formats: the terminal table, JSON and Markdown.

pub mod json;
pub mod markdown;
pub mod table;
