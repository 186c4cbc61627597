use crate::support::{first_request, response};
use qilin_model::{ModelSpec, SelectError};
use std::path::PathBuf;

#[test]
fn the_three_forms_parse() {
    assert_eq!(
        "openai:gpt-4.1".parse::<ModelSpec>().unwrap(),
        ModelSpec::OpenAi {
            model: "gpt-4.1".into()
        }
    );
    assert_eq!(
        "anthropic:claude-sonnet-4-5".parse::<ModelSpec>().unwrap(),
        ModelSpec::Anthropic {
            model: "claude-sonnet-4-5".into()
        }
    );
    assert_eq!(
        "scripted:examples/demo.yaml".parse::<ModelSpec>().unwrap(),
        ModelSpec::Scripted {
            path: PathBuf::from("examples/demo.yaml")
        }
    );
    assert_eq!(
        "openai:qwen3:8b".parse::<ModelSpec>().unwrap(),
        ModelSpec::OpenAi {
            model: "qwen3:8b".into()
        },
        "a model name may hold a colon"
    );
}

#[test]
fn anything_else_is_a_clear_error() {
    let message = |spec: &str| spec.parse::<ModelSpec>().unwrap_err().to_string();
    assert_eq!(
        message("gpt-4.1"),
        "model `gpt-4.1`: names no provider; expected openai:NAME, anthropic:NAME or scripted:FILE"
    );
    assert_eq!(
        message("gemini:pro"),
        "model `gemini:pro`: unknown provider `gemini`; expected openai:NAME, anthropic:NAME or \
         scripted:FILE"
    );
    assert_eq!(
        message("openai:"),
        "model `openai:`: has no model name after `openai:`; expected openai:NAME, \
         anthropic:NAME or scripted:FILE"
    );
    assert_eq!(
        message("scripted: "),
        "model `scripted: `: has no file after `scripted:`; expected openai:NAME, \
         anthropic:NAME or scripted:FILE"
    );
}

#[test]
fn a_provider_without_its_settings_is_an_error() {
    let spec: ModelSpec = "anthropic:claude".parse().unwrap();
    match spec.connect_with(|_| None) {
        Err(SelectError::Provider(err)) => {
            assert!(err.to_string().contains("ANTHROPIC_API_KEY"), "{err}")
        }
        other => panic!("expected a configuration error, got {other:?}"),
    }
    let spec: ModelSpec = "scripted:/nonexistent/demo.yaml".parse().unwrap();
    assert!(matches!(
        spec.connect_with(|_| None),
        Err(SelectError::Script(_))
    ));
}

#[tokio::test]
async fn a_scripted_spec_plays_its_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("demo.yaml");
    std::fs::write(&path, "turns:\n  - say: Hello from the script.\n").expect("write");
    let spec = format!("scripted:{}", path.display());
    let selected = qilin_model::select_model(&spec).expect("selected");
    assert_eq!(selected.model, path.display().to_string());
    let answer = response(selected.provider.stream(first_request(&selected.model))).await;
    assert_eq!(answer.text, "Hello from the script.");

    let spec: ModelSpec = "openai:llama3".parse().unwrap();
    let local = spec
        .connect_with(|name| (name == "OPENAI_BASE_URL").then(|| "http://127.0.0.1:9/v1".into()))
        .expect("a local server needs no key");
    assert_eq!(local.model, "llama3");
}
