//! dash
