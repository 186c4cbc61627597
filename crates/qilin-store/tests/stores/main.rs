//! The store tests: one conformance suite run against every store (memory, SQLite, a real
//! PostgreSQL), then what each store must do on its own (a killed process, a second process, a
//! locked or full database; two processes sharing PostgreSQL).

#[macro_use]
mod conformance;
mod memory;
#[cfg(feature = "postgres")]
mod postgres;
mod schedules;
mod sqlite;
mod support;
