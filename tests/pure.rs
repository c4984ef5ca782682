//! The pure modules on their own, with no database and no pgrx: their unit tests run here
//! (`cargo test --test pure`), which also proves they import nothing from pgrx.

#[path = "../src/claims.rs"]
mod claims;
#[path = "../src/model.rs"]
mod model;
#[path = "../src/tools/replace.rs"]
mod replace;
#[path = "../src/rest/route.rs"]
mod route;
#[path = "../src/tools/schema.rs"]
mod schema;
#[path = "../src/status.rs"]
mod status;
