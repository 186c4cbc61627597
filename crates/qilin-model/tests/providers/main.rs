//! The providers against local servers replaying each provider's streaming wire format, and
//! the scripted model.

mod anthropic;
mod compat;
mod faults;
mod openai;
mod scripted;
mod select;
mod support;
