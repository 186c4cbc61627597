use qilin_tool::{Tool, ToolInfo};

/// Finds a customer by name.
///
/// Second paragraph.
#[derive(Tool)]
#[tool(name = "crm_lookup", code_mode_only, read_only = true, paths = ["folder", "edits.path"])]
struct CrmLookup;

fn main() {
    assert_eq!(CrmLookup::NAME, "crm_lookup");
    assert_eq!(CrmLookup::DESCRIPTION, "Finds a customer by name.\n\nSecond paragraph.");
    assert!(CrmLookup::CODE_MODE_ONLY);
    assert!(CrmLookup::READ_ONLY);
    assert_eq!(CrmLookup::PATH_ARGUMENTS, ["folder", "edits.path"]);
}
