//! Embeds the web client when it is built: with `web/app/dist/index.html` present the crate is
//! compiled with `cfg(qilin_web_app)` and `include_dir!` takes the folder; without it the
//! server's page says how to build the client. The Rust build never runs npm.

use std::path::Path;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(qilin_web_app)");
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let web = Path::new(&manifest).join("../../web");
    let dist = web.join("app/dist");
    if dist.join("index.html").is_file() {
        println!("cargo::rustc-cfg=qilin_web_app");
    }
    // Rebuild when the client is built or rebuilt: watch the nearest folder that exists.
    let watched = [dist.clone(), web.join("app"), web]
        .into_iter()
        .find(|folder| folder.is_dir());
    match watched {
        Some(folder) => println!("cargo::rerun-if-changed={}", folder.display()),
        None => println!("cargo::rerun-if-changed=build.rs"),
    }
}
