//! The host is bounded too: an edit cannot grow a file without limit, an image is measured
//! from its header before it is decoded, and a huge diff is summarised.

mod common;

use common::harness;
use qilin_protocol::ErrorCode;
use serde_json::json;

#[tokio::test]
async fn an_edit_whose_result_is_too_large_is_refused_and_the_file_kept() {
    let h = harness();
    let body = "a\n".repeat(25_000);
    h.write("small.txt", &body);
    let message = h
        .err(
            "edit",
            json!({
                "path": "small.txt",
                "old_string": "a",
                "new_string": "b".repeat(4096),
                "replace_all": true
            }),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(message.contains("limit for edited files"), "{message}");
    assert!(message.contains("25000 replacements"), "{message}");
    assert_eq!(h.read("small.txt"), body);
}

#[tokio::test]
async fn an_edit_of_every_line_of_a_large_file_shows_a_summary_not_a_huge_diff() {
    let h = harness();
    let body: String = (0..80_000).map(|i| format!("value_{i} = {i}\n")).collect();
    h.write("big.py", &body);
    let (output, _) = h
        .ok(
            "edit",
            json!({"path": "big.py", "old_string": "value_", "new_string": "amount_", "replace_all": true}),
        )
        .await;
    assert_eq!(output["replacements"], 80_000);
    let diff = output["diff"].as_str().unwrap();
    assert!(diff.contains("too large to show line by line"), "{diff}");
    assert_eq!(output["lines"][79_999], 80_000);
    assert!(h.read("big.py").starts_with("amount_0 = 0\n"));
}

/// A PNG whose header claims `width` x `height` pixels, with no pixel data behind it.
fn png_header(width: u32, height: u32) -> Vec<u8> {
    let mut header = width.to_be_bytes().to_vec();
    header.extend(height.to_be_bytes());
    header.extend([8, 6, 0, 0, 0]);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    for (kind, data) in [
        (b"IHDR", header),
        (b"IDAT", Vec::new()),
        (b"IEND", Vec::new()),
    ] {
        let mut chunk = kind.to_vec();
        chunk.extend(&data);
        png.extend((data.len() as u32).to_be_bytes());
        png.extend(&chunk);
        png.extend(crc32(&chunk).to_be_bytes());
    }
    png
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xffff_ffffu32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[tokio::test]
async fn an_image_too_large_to_decode_is_refused_from_its_header() {
    let h = harness();
    h.write("huge.png", png_header(30_000, 30_000));
    let message = h
        .err(
            "read_image",
            json!({"path": "huge.png"}),
            ErrorCode::InvalidArguments,
        )
        .await;
    assert!(message.contains("30000x30000 pixels"), "{message}");
    assert!(message.contains("over the limit"), "{message}");
}
