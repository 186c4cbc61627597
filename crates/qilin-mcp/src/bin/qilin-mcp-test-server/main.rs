//! `qilin-mcp-test-server`: a small MCP server speaking over stdio that qilin-mcp's tests (and
//! the `qilin` command's) start as a real server process — [`arith`], on `rmcp`, or with
//! `--hostile MODE` a hand-written server that misbehaves as a hostile one would
//! ([`hostile`]). With `FAIL_FIRST_START` naming a file that does not exist, it creates the
//! file and exits with an error before the handshake (a server down when a session starts, up
//! when tried again). It is a test fixture, not part of Qilin: no product binary ships it.

#![deny(clippy::unwrap_used, clippy::expect_used)]

mod arith;
mod hostile;

use rmcp::ServiceExt;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|arg| arg == "--hostile") {
        let mode = args.get(at + 1).map(String::as_str).unwrap_or_default();
        return Ok(hostile::serve(mode)?);
    }
    if let Some(marker) = std::env::var_os("FAIL_FIRST_START")
        && !std::path::Path::new(&marker).exists()
    {
        std::fs::write(&marker, "failed once\n")?;
        eprintln!("failing my first start on purpose");
        std::process::exit(1);
    }
    let running = arith::TestServer::default()
        .serve(rmcp::transport::stdio())
        .await?;
    running.waiting().await?;
    Ok(())
}
