//! Rebuilds the crate when the built-in skills it embeds (`include_dir!` of
//! `qilin-tools/skills`) change, files added or removed included, so an added skill is in the
//! next binary without anything else having to change.

fn main() {
    println!("cargo::rerun-if-changed=../qilin-tools/skills");
}
