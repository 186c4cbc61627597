//! `read`, `read_image`, `write` and `edit` through the execution layer.

mod common;

use common::harness;
use qilin_protocol::{ContentBlock, Detail, ErrorCode, EventBody};
use serde_json::json;

#[tokio::test]
async fn read_numbers_lines_and_pages_with_offset_and_limit() {
    let mut h = harness();
    let body: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    h.write("src/notes.txt", &body);
    let (output, text) = h.ok("read", json!({"path": "src/notes.txt"})).await;
    assert_eq!(output["text"], body);
    assert_eq!(output["total_lines"], 10);
    assert!(text.starts_with("     1\tline 1\n     2\tline 2\n"));
    let (output, text) = h
        .ok(
            "read",
            json!({"path": "src/notes.txt", "offset": 4, "limit": 2}),
        )
        .await;
    assert_eq!(output["first_line"], 4);
    assert_eq!(output["last_line"], 5);
    assert_eq!(
        text,
        "     4\tline 4\n     5\tline 5\n[lines 4-5 of 10; use offset/limit to read more]\n"
    );
    let start = h
        .drain()
        .into_iter()
        .filter_map(|e| match e.body {
            EventBody::ToolStart(start) => Some(start.presentation),
            _ => None,
        })
        .next_back()
        .unwrap();
    assert_eq!(
        (start.action.as_str(), start.remark.as_str()),
        ("Read", "src/notes.txt:4-5")
    );
    let message = h
        .err(
            "read",
            json!({"path": "src/notes.txt", "offset": 11}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(message.contains("only 10 lines"), "{message}");
}

#[tokio::test]
async fn read_cuts_long_lines_and_refuses_binary_and_image_files() {
    let h = harness();
    h.write("long.txt", format!("short\n{}\n", "y".repeat(2500)));
    let (output, text) = h.ok("read", json!({"path": "long.txt"})).await;
    assert_eq!(output["cut_lines"], json!([2]));
    assert!(text.contains("[line cut: 500 more characters]"));
    h.write("blob.bin", [0u8, 1, 2, 3, 0, 255]);
    let message = h
        .err(
            "read",
            json!({"path": "blob.bin"}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(message.contains("`blob.bin` is a binary file"), "{message}");
    h.write("shot.png", png(4, 4));
    let message = h
        .err(
            "read",
            json!({"path": "shot.png"}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(message.contains("read_image"), "{message}");
}

#[tokio::test]
async fn a_missing_file_suggests_near_names() {
    let h = harness();
    h.write("src/config.rs", "x");
    let message = h
        .err(
            "read",
            json!({"path": "src/confg.rs"}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(
        message.contains("`src/confg.rs` does not exist"),
        "{message}"
    );
    assert!(
        message.contains("did you mean `src/config.rs`"),
        "{message}"
    );
    let message = h
        .err("read", json!({"path": "src"}), ErrorCode::InvalidArguments)
        .await;
    assert!(message.contains("is a folder"), "{message}");
}

#[tokio::test]
async fn write_creates_folders_then_replaces_atomically() {
    let h = harness();
    let (output, text) = h
        .ok(
            "write",
            json!({"path": "a/b/new.txt", "content": "hello\n"}),
        )
        .await;
    assert_eq!(
        output,
        json!({"path": "a/b/new.txt", "bytes_written": 6, "action": "created"})
    );
    assert_eq!(text, "Created `a/b/new.txt` (6 bytes).");
    let (output, _) = h
        .ok("write", json!({"path": "a/b/new.txt", "content": "bye"}))
        .await;
    assert_eq!(output["action"], "replaced");
    assert_eq!(h.read("a/b/new.txt"), "bye");
    let leftovers: Vec<_> = std::fs::read_dir(h.path("a/b")).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "a temporary file was left behind");
}

#[tokio::test]
async fn edit_replaces_once_and_returns_a_diff_with_counts() {
    let mut h = harness();
    h.write("lib.rs", "fn a() {}\nfn b() {}\nfn c() {}\n");
    let (output, text) = h
        .ok(
            "edit",
            json!({"path": "lib.rs", "old_string": "fn b() {}", "new_string": "fn b() {\n    a();\n}"}),
        )
        .await;
    assert_eq!(
        h.read("lib.rs"),
        "fn a() {}\nfn b() {\n    a();\n}\nfn c() {}\n"
    );
    assert_eq!(output["replacements"], 1);
    assert_eq!(output["lines"], json!([2]));
    assert_eq!(
        (output["added"].as_u64(), output["removed"].as_u64()),
        (Some(3), Some(1))
    );
    assert!(
        text.contains("-fn b() {}\n+fn b() {\n+    a();\n+}\n"),
        "{text}"
    );
    let detail = h.drain().into_iter().find_map(|e| match e.body {
        EventBody::ToolResult(result) => result.detail,
        _ => None,
    });
    assert!(
        matches!(detail, Some(Detail::Diff { added: 3, removed: 1, ref path, .. }) if path == "lib.rs")
    );
}

#[tokio::test]
async fn edit_names_the_count_and_lines_when_not_unique_or_not_found() {
    let h = harness();
    h.write("x.txt", "foo\nbar\nfoo\nbaz foo\n");
    let message = h
        .err(
            "edit",
            json!({"path": "x.txt", "old_string": "foo", "new_string": "qux"}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(message.contains("occurs 3 times"), "{message}");
    assert!(message.contains("lines 1, 3, 4"), "{message}");
    let message = h
        .err(
            "edit",
            json!({"path": "x.txt", "old_string": "nothing", "new_string": "qux"}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(
        message.contains("not found") && message.contains("0 occurrences"),
        "{message}"
    );
    assert_eq!(h.read("x.txt"), "foo\nbar\nfoo\nbaz foo\n");
    let (output, _) = h
        .ok(
            "edit",
            json!({"path": "x.txt", "old_string": "foo", "new_string": "qux", "replace_all": true}),
        )
        .await;
    assert_eq!(output["replacements"], 3);
    assert_eq!(h.read("x.txt"), "qux\nbar\nqux\nbaz qux\n");
    let message = h
        .err(
            "edit",
            json!({"path": "x.txt", "old_string": "bar", "new_string": "bar"}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(message.contains("identical"));
}

fn png(width: u32, height: u32) -> Vec<u8> {
    let image = image::RgbImage::from_fn(width, height, |x, y| {
        image::Rgb([(x % 256) as u8, (y % 256) as u8, 128])
    });
    let mut out = std::io::Cursor::new(Vec::new());
    image.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

#[tokio::test]
async fn read_image_returns_an_image_block_with_media_type_and_dimensions() {
    let h = harness();
    let bytes = png(40, 30);
    h.write("pics/small.png", &bytes);
    let outcome = h
        .call("read_image", json!({"path": "pics/small.png"}))
        .await;
    let output = outcome.output.unwrap();
    assert_eq!(output["media_type"], "image/png");
    assert_eq!(
        (output["width"].as_u64(), output["height"].as_u64()),
        (Some(40), Some(30))
    );
    assert_eq!(output["downscaled"], false);
    let ContentBlock::Image { media_type, data } = &outcome.content[0] else {
        panic!("expected an image block first: {:?}", outcome.content);
    };
    assert_eq!(media_type, "image/png");
    use base64::Engine;
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(data)
            .unwrap(),
        bytes
    );
    assert!(common::text(&outcome.content).contains("40x30 image/png"));
}

#[tokio::test]
async fn read_image_downscales_a_large_image_and_refuses_text() {
    let h = harness();
    h.write("big.png", png(3000, 1500));
    let (output, text) = h.ok("read_image", json!({"path": "big.png"})).await;
    assert_eq!(output["downscaled"], true);
    assert_eq!(
        (output["width"].as_u64(), output["height"].as_u64()),
        (Some(1568), Some(784))
    );
    assert_eq!(output["original_width"], 3000);
    assert!(text.contains("downscaled from 3000x1500"));
    h.write("notes.txt", "just text");
    let message = h
        .err(
            "read_image",
            json!({"path": "notes.txt"}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(
        message.contains("not a PNG, JPEG, GIF or WebP image"),
        "{message}"
    );
    h.write("broken.png", b"\x89PNG\r\n\x1a\nbroken");
    let message = h
        .err(
            "read_image",
            json!({"path": "broken.png"}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(message.contains("could not be decoded"), "{message}");
}

#[tokio::test]
async fn read_image_knows_jpeg_gif_and_webp() {
    let h = harness();
    let image = image::DynamicImage::ImageRgb8(image::RgbImage::from_fn(20, 10, |x, _| {
        image::Rgb([x as u8 * 10, 0, 0])
    }));
    for (name, format, media_type) in [
        ("a.jpg", image::ImageFormat::Jpeg, "image/jpeg"),
        ("a.gif", image::ImageFormat::Gif, "image/gif"),
        ("a.webp", image::ImageFormat::WebP, "image/webp"),
    ] {
        let mut bytes = std::io::Cursor::new(Vec::new());
        let encodable = match format {
            image::ImageFormat::WebP => image::DynamicImage::ImageRgba8(image.to_rgba8()),
            _ => image.clone(),
        };
        encodable.write_to(&mut bytes, format).unwrap();
        h.write(name, bytes.into_inner());
        let (output, _) = h.ok("read_image", json!({"path": name})).await;
        assert_eq!(output["media_type"], media_type, "{name}");
        assert_eq!(
            (output["width"].as_u64(), output["height"].as_u64()),
            (Some(20), Some(10))
        );
    }
}
