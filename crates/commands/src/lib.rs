//! The command runtime, in layers whose dependencies only point down
//! (docs/ARCHITECTURE.md, "Layers"; `scripts/check-layers` enforces it):
//!
//! | layer | holds | may use |
//! |---|---|---|
//! | [`registry`] | the one place that names every family and config group; builds the table | everything |
//! | [`families`] | one module per command family | services, kernel, base; never another family |
//! | [`runtime`] | dispatch and cron | services, kernel, base; handlers only through the table |
//! | [`services`] | operations shared by families and the runtime | kernel, base |
//! | [`kernel`] | the command contract, `Server`/`Client` state, registries | base, store, collections, resp |
//! | [`base`] | parsing, clock, error texts, glob, FFI wrappers | std and external crates |
//!
//! The network layer (crate `server`) builds a [`kernel::server::Server`]
//! with [`registry::build_server`] and calls [`runtime::dispatch::execute`]
//! for each parsed command; everything Redis-visible happens here.

pub mod base;
pub mod families;
pub mod kernel;
pub mod registry;
pub mod runtime;
pub mod services;

/// Redis version Petrel reports for compatibility (HELLO, INFO redis_version).
pub const REDIS_VERSION: &str = "7.0.15";
/// Petrel's own version.
pub const PETREL_VERSION: &str = env!("CARGO_PKG_VERSION");
