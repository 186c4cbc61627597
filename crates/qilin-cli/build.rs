//! Rebuilds `qilin` when a folder it embeds changes, files added or removed included: the
//! built-in skills and the example workspace `qilin demo` unpacks.

fn main() {
    println!("cargo:rerun-if-changed=../qilin-tools/skills");
    println!("cargo:rerun-if-changed=../../examples/workspace");
}
