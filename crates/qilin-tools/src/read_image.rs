//! `read_image`: an image file as an image content block, downscaled when large.

use crate::file_access::{FileScope, blocking};
use crate::text_file::read_bytes;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use image::{ImageFormat, ImageReader, Limits};
use qilin_protocol::{CallPresentation, ContentBlock, Detail};
use qilin_tool::{Tool, ToolContext, ToolError, ToolResult};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::io::Cursor;

/// The longest side, in pixels, of an image sent to the model; larger images are downscaled.
pub const MAX_SIDE: u32 = 1568;
/// The most bytes of an image sent as it is; a larger file is re-encoded smaller.
pub const MAX_BYTES: usize = 3_750_000;
/// The largest file read at all.
const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// The most pixels an image may have to be decoded (read from its header first): 40
/// megapixels, 160 MB as RGBA.
pub const MAX_PIXELS: u64 = 40_000_000;
/// The longest side an image may have to be decoded.
pub const MAX_DECODED_SIDE: u32 = 20_000;
/// The most memory the decoder may allocate.
const MAX_DECODER_BYTES: u64 = 256 * 1024 * 1024;

/// Look at an image file.
///
/// Shows a PNG, JPEG, GIF or WebP file from the workspace. Images larger than 1568 pixels on
/// a side, or than about 3.75 MB, are downscaled. A GIF shows its first frame.
#[derive(qilin_tool::Tool)]
#[tool(name = "read_image", read_only, paths = ["path"])]
pub struct ReadImage;

/// Arguments of `read_image`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadImageArgs {
    /// The image file, relative to the workspace root (an absolute path must lie inside it).
    pub path: String,
}

/// The image as sent to the model.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ImageOutput {
    /// The file, relative to the workspace root.
    pub path: String,
    /// The media type of `data`: `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub media_type: String,
    /// Width in pixels of the image sent.
    pub width: u32,
    /// Height in pixels of the image sent.
    pub height: u32,
    /// Width in pixels of the file.
    pub original_width: u32,
    /// Height in pixels of the file.
    pub original_height: u32,
    /// True when the image was downscaled or re-encoded to fit the limits.
    pub downscaled: bool,
    /// The image bytes, base64 (standard alphabet, padded).
    pub data: String,
}

impl Tool for ReadImage {
    type Args = ReadImageArgs;
    type Output = ImageOutput;

    fn prompt_hint(&self) -> &str {
        "Use read_image to look at screenshots, diagrams, plots and other PNG, JPEG, GIF or \
         WebP files in the workspace; read cannot show images. Large images arrive \
         downscaled, so fine detail may be lost: crop first (e.g. with a script) when it \
         matters."
    }

    fn present(&self, args: &ReadImageArgs) -> CallPresentation {
        CallPresentation::new("View image", &args.path)
    }

    fn before_detail(&self, _args: &ReadImageArgs) -> Option<Detail> {
        None
    }

    fn detail(&self, _args: &ReadImageArgs, result: &ToolResult<ImageOutput>) -> Option<Detail> {
        match result {
            Ok(out) => Some(Detail::Text { text: summary(out) }),
            Err(error) => Some(Detail::Text {
                text: error.message.clone(),
            }),
        }
    }

    async fn call(&self, args: ReadImageArgs, cx: &ToolContext) -> ToolResult<ImageOutput> {
        let scope = FileScope::of(cx);
        blocking(move || {
            let (_, path) = scope.readable(&args.path)?;
            let bytes = read_bytes(
                &path,
                MAX_FILE_BYTES,
                "images that large are not read; make a smaller copy first",
            )?;
            prepare(path.relative().to_string(), bytes)
        })
        .await
    }

    fn content(&self, output: &ImageOutput) -> Vec<ContentBlock> {
        vec![
            ContentBlock::Image {
                media_type: output.media_type.clone(),
                data: output.data.clone(),
            },
            ContentBlock::text(summary(output)),
        ]
    }
}

fn summary(out: &ImageOutput) -> String {
    let mut text = format!(
        "`{}`: {}x{} {}",
        out.path, out.width, out.height, out.media_type
    );
    if out.downscaled {
        text.push_str(&format!(
            " (downscaled from {}x{})",
            out.original_width, out.original_height
        ));
    }
    text
}

fn prepare(path: String, bytes: Vec<u8>) -> ToolResult<ImageOutput> {
    let not_image = |reason: String| {
        ToolError::invalid_arguments(format!(
            "`{path}` is not a PNG, JPEG, GIF or WebP image ({reason}); use `read` for text files"
        ))
    };
    let format = image::guess_format(&bytes).map_err(|err| not_image(err.to_string()))?;
    let media_type = match format {
        ImageFormat::Png => "image/png",
        ImageFormat::Jpeg => "image/jpeg",
        ImageFormat::Gif => "image/gif",
        ImageFormat::WebP => "image/webp",
        other => return Err(not_image(format!("it is {other:?}"))),
    };
    let (width, height) = ImageReader::with_format(Cursor::new(&bytes), format)
        .into_dimensions()
        .map_err(|err| {
            ToolError::invalid_arguments(format!(
                "`{path}` could not be decoded as {media_type}: {err}"
            ))
        })?;
    if u64::from(width) * u64::from(height) > MAX_PIXELS || width.max(height) > MAX_DECODED_SIDE {
        return Err(ToolError::invalid_arguments(format!(
            "`{path}` is {width}x{height} pixels, over the limit of {MAX_PIXELS} pixels \
             ({MAX_DECODED_SIDE} on a side) that read_image decodes; make a smaller copy \
             first (e.g. with a script)"
        )));
    }
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_DECODED_SIDE);
    limits.max_image_height = Some(MAX_DECODED_SIDE);
    limits.max_alloc = Some(MAX_DECODER_BYTES);
    let mut reader = ImageReader::with_format(Cursor::new(&bytes), format);
    reader.limits(limits);
    let decoded = reader.decode().map_err(|err| {
        ToolError::invalid_arguments(format!(
            "`{path}` could not be decoded as {media_type}: {err}"
        ))
    })?;
    let (original_width, original_height) = (decoded.width(), decoded.height());
    let fits =
        original_width <= MAX_SIDE && original_height <= MAX_SIDE && bytes.len() <= MAX_BYTES;
    if fits {
        return Ok(ImageOutput {
            path,
            media_type: media_type.to_string(),
            width: original_width,
            height: original_height,
            original_width,
            original_height,
            downscaled: false,
            data: STANDARD.encode(&bytes),
        });
    }
    let mut side = MAX_SIDE;
    loop {
        let resized = if original_width > side || original_height > side {
            decoded.resize(side, side, image::imageops::FilterType::Triangle)
        } else {
            decoded.clone()
        };
        let (encoded, media_type) = encode(&resized, format).map_err(|err| {
            ToolError::failed(format!(
                "`{path}` could not be re-encoded after downscaling: {err}"
            ))
        })?;
        if encoded.len() <= MAX_BYTES || side <= 256 {
            return Ok(ImageOutput {
                path,
                media_type: media_type.to_string(),
                width: resized.width(),
                height: resized.height(),
                original_width,
                original_height,
                downscaled: true,
                data: STANDARD.encode(&encoded),
            });
        }
        side = side * 3 / 4;
    }
}

/// Encodes a downscaled image: JPEG stays JPEG, everything else becomes PNG.
fn encode(
    image: &image::DynamicImage,
    format: ImageFormat,
) -> image::ImageResult<(Vec<u8>, &'static str)> {
    let mut out = Cursor::new(Vec::new());
    if format == ImageFormat::Jpeg {
        image.to_rgb8().write_to(&mut out, ImageFormat::Jpeg)?;
        Ok((out.into_inner(), "image/jpeg"))
    } else {
        image.write_to(&mut out, ImageFormat::Png)?;
        Ok((out.into_inner(), "image/png"))
    }
}
