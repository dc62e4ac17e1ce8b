//! resp
