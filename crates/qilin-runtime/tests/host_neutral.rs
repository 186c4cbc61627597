//! The library's errors say what is missing in words every host can show — a web page, an
//! application's own window — and leave the host's own remedy (a flag, a command) to the host.

mod support;

use qilin_runtime::RuntimeError;
use support::fixture;

/// Words that belong to the `qilin` command line, not to the library.
fn speaks_the_cli(message: &str) -> bool {
    message.contains("--") || message.contains("`qilin ")
}

#[tokio::test]
async fn a_session_with_no_model_names_the_agent_file_and_no_flag() {
    let f = fixture("name: a\ninstructions: Hi.\ntools: [read]\n");
    let Err(err) = f.builder().build().await else {
        panic!("a session without a model must not build");
    };
    assert!(
        matches!(&err, RuntimeError::NoModel { agent } if agent.ends_with("agent.agent")),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(message.contains("names no model"), "{message}");
    assert!(message.contains("`model:`"), "{message}");
    assert!(!speaks_the_cli(&message), "{message}");
}

#[tokio::test]
async fn an_unknown_session_is_named_without_a_command() {
    let f = fixture("name: a\ninstructions: Hi.\ntools: [read]\n");
    let Err(err) = f.runtime.resume("1-nothing").await else {
        panic!("no such session");
    };
    assert!(matches!(&err, RuntimeError::UnknownSession(id) if id == "1-nothing"));
    assert!(!speaks_the_cli(&err.to_string()), "{err}");
}
