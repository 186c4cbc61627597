//! Rebuilds `qilin` when the example workspace `qilin demo` unpacks (`include_dir!`) changes,
//! files added or removed included. The built-in skills are embedded, and watched, by
//! `qilin-runtime`.

fn main() {
    println!("cargo::rerun-if-changed=../../examples/workspace");
}
