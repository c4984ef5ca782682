//! The `/todo` writ's pure half: the grammar (`parse`), the text a model reads (`render`) and
//! matching a subject to an open todo (`resolve`).

pub mod parse;
pub mod render;
pub mod resolve;
