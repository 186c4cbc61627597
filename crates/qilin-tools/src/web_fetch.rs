//! `web_fetch`: GET a web page and return it as Markdown (or text), with size and time caps
//! and a guard against non-public addresses.

use crate::address_guard::is_non_public;
use qilin_protocol::{CallPresentation, ContentBlock, Detail};
use qilin_tool::{Tool, ToolContext, ToolError, ToolResult};
use reqwest::Url;
use reqwest::header::{CONTENT_TYPE, LOCATION};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::time::Duration;

/// Redirects followed at most.
const MAX_REDIRECTS: usize = 10;
/// Characters of an error page's body quoted in the error.
const ERROR_BODY_CHARS: usize = 500;

/// How `web_fetch` may reach the network. A host service; without it the defaults apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebFetchConfig {
    /// Allow loopback, private and link-local addresses (default false: refused).
    pub allow_private: bool,
    /// The most bytes of a response read; the rest is cut with a note.
    pub max_bytes: usize,
    /// The longest a fetch may take, redirects included.
    pub timeout: Duration,
}

impl Default for WebFetchConfig {
    fn default() -> Self {
        WebFetchConfig {
            allow_private: false,
            max_bytes: 5 * 1024 * 1024,
            timeout: Duration::from_secs(30),
        }
    }
}

/// Fetch a web page or text resource by URL.
///
/// An HTTP(S) GET that returns HTML converted to Markdown, and other text (JSON, XML, plain
/// text, source code) as it is. Follows redirects. Binary content (images, PDFs, archives)
/// and addresses on private networks are refused.
#[derive(qilin_tool::Tool)]
#[tool(name = "web_fetch", read_only)]
pub struct WebFetch;

/// Arguments of `web_fetch`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebFetchArgs {
    /// The absolute `http://` or `https://` URL to fetch.
    pub url: String,
    /// Return an HTML page's source instead of converting it to Markdown (default false).
    pub raw: Option<bool>,
}

/// What was fetched.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WebFetchOutput {
    /// The URL the content came from, after redirects.
    pub url: String,
    /// The HTTP status code.
    pub status: u16,
    /// The response's content type, e.g. `text/html; charset=utf-8`.
    pub content_type: String,
    /// The content: Markdown for HTML (unless `raw`), else the text as served.
    pub content: String,
    /// Bytes of the response body read.
    pub bytes: usize,
    /// True when the body was larger than the size cap and was cut.
    pub truncated: bool,
}

enum Kind {
    Html,
    Text,
}

fn kind_of(content_type: &str, body: &[u8]) -> Option<Kind> {
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    match essence.as_str() {
        "text/html" | "application/xhtml+xml" => Some(Kind::Html),
        "" => std::str::from_utf8(body).ok().map(|_| Kind::Text),
        t if t.starts_with("text/")
            || t.ends_with("+json")
            || t.ends_with("+xml")
            || matches!(
                t,
                "application/json"
                    | "application/xml"
                    | "application/javascript"
                    | "application/x-javascript"
                    | "application/ecmascript"
                    | "application/x-sh"
                    | "application/toml"
                    | "application/yaml"
                    | "application/x-yaml"
            ) =>
        {
            Some(Kind::Text)
        }
        _ => None,
    }
}

/// Checks a URL's host against the address guard and returns the addresses to connect to.
async fn vetted_addresses(url: &Url, config: &WebFetchConfig) -> ToolResult<Vec<SocketAddr>> {
    let host = url
        .host_str()
        .ok_or_else(|| ToolError::invalid_arguments(format!("`{url}` has no host")))?;
    let port = url.port_or_known_default().unwrap_or(80);
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let addresses: Vec<SocketAddr> = match bare.parse() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => tokio::net::lookup_host((bare, port))
            .await
            .map_err(|err| ToolError::failed(format!("`{host}` could not be resolved: {err}")))?
            .collect(),
    };
    if addresses.is_empty() {
        return Err(ToolError::failed(format!(
            "`{host}` resolved to no address"
        )));
    }
    if !config.allow_private
        && let Some(blocked) = addresses.iter().find(|a| is_non_public(a.ip()))
    {
        return Err(ToolError::invalid_arguments(format!(
            "`{url}` leads to {}, a loopback, private or link-local address; web_fetch only \
             reaches public addresses",
            blocked.ip()
        )));
    }
    Ok(addresses)
}

/// A failed request as an error for the model: a timeout as such, anything else with the
/// chain of causes (the connection refused, the certificate rejected, ...).
fn request_error(url: &Url, err: &reqwest::Error, config: &WebFetchConfig) -> ToolError {
    if err.is_timeout() {
        return timed_out(url.as_str(), config.timeout);
    }
    let mut message = format!("GET `{url}` failed: {err}");
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        message.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    ToolError::failed(message)
}

fn timed_out(url: &str, limit: Duration) -> ToolError {
    ToolError::failed(format!(
        "`{url}` did not answer within {} s",
        limit.as_secs_f64()
    ))
}

async fn fetch(args: &WebFetchArgs, config: &WebFetchConfig) -> ToolResult<WebFetchOutput> {
    let mut url = Url::parse(&args.url).map_err(|err| {
        ToolError::invalid_arguments(format!(
            "`url` `{}` is not a valid absolute URL ({err}); give e.g. `https://example.com/page`",
            args.url
        ))
    })?;
    for _ in 0..=MAX_REDIRECTS {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ToolError::invalid_arguments(format!(
                "`{url}` uses the `{}` scheme; web_fetch reaches only http and https URLs",
                url.scheme()
            )));
        }
        let addresses = vetted_addresses(&url, config).await?;
        // No proxy, whatever the environment says: a proxy would resolve the host again
        // itself, after the address guard, and so re-open DNS rebinding to private addresses.
        let mut client = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("Qilin/", env!("CARGO_PKG_VERSION"), " (web_fetch)"))
            .timeout(config.timeout);
        if let Some(host) = url.host_str()
            && host.parse::<std::net::IpAddr>().is_err()
        {
            client = client.resolve_to_addrs(host, &addresses);
        }
        let client = client
            .build()
            .map_err(|err| ToolError::failed(format!("the HTTP client could not start: {err}")))?;
        let mut response = client
            .get(url.clone())
            .header(
                "accept",
                "text/html, text/markdown, text/plain, application/json, */*;q=0.5",
            )
            .send()
            .await
            .map_err(|err| request_error(&url, &err, config))?;
        let status = response.status();
        if status.is_redirection() {
            let location = response
                .headers()
                .get(LOCATION)
                .and_then(|l| l.to_str().ok())
                .ok_or_else(|| {
                    ToolError::failed(format!("`{url}` redirected ({status}) without a location"))
                })?;
            url = url.join(location).map_err(|err| {
                ToolError::failed(format!(
                    "`{url}` redirected to an invalid URL `{location}`: {err}"
                ))
            })?;
            continue;
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|t| t.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let mut body = Vec::new();
        let mut truncated = false;
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|err| request_error(&url, &err, config))?
        {
            let room = config.max_bytes - body.len();
            if chunk.len() > room {
                body.extend_from_slice(&chunk[..room]);
                truncated = true;
                break;
            }
            body.extend_from_slice(&chunk);
        }
        let kind = kind_of(&content_type, &body).ok_or_else(|| {
            ToolError::invalid_arguments(format!(
                "`{url}` returned `{content_type}` ({} bytes), which is not text; web_fetch \
                 shows HTML and text only (download it with bash if you need the file)",
                body.len()
            ))
        })?;
        let text = String::from_utf8_lossy(&body).into_owned();
        let content = match kind {
            Kind::Html if args.raw != Some(true) => htmd::convert(&text).map_err(|err| {
                ToolError::failed(format!("the HTML of `{url}` could not be converted: {err}"))
            })?,
            _ => text,
        };
        if !status.is_success() {
            let quoted: String = content.chars().take(ERROR_BODY_CHARS).collect();
            return Err(ToolError::failed(format!(
                "GET `{url}` returned {status}. The page says:\n{quoted}"
            )));
        }
        return Ok(WebFetchOutput {
            url: url.to_string(),
            status: status.as_u16(),
            content_type,
            content,
            bytes: body.len(),
            truncated,
        });
    }
    Err(ToolError::failed(format!(
        "`{}` redirected more than {MAX_REDIRECTS} times",
        args.url
    )))
}

impl Tool for WebFetch {
    type Args = WebFetchArgs;
    type Output = WebFetchOutput;

    fn prompt_hint(&self) -> &str {
        "Use web_fetch to read documentation, an issue or an API response at a URL you know \
         (from the user, the workspace, or an earlier page). HTML pages arrive as Markdown; \
         pass `raw: true` only when you need the markup. It cannot log in, run JavaScript or \
         reach private network addresses, and long pages are cut: prefer the most specific \
         URL. Do not invent URLs."
    }

    fn present(&self, args: &WebFetchArgs) -> CallPresentation {
        CallPresentation::new("Fetch", &args.url)
    }

    fn before_detail(&self, _args: &WebFetchArgs) -> Option<Detail> {
        None
    }

    fn detail(&self, _args: &WebFetchArgs, result: &ToolResult<WebFetchOutput>) -> Option<Detail> {
        match result {
            Ok(out) => Some(Detail::Markdown {
                markdown: out.content.clone(),
            }),
            Err(error) => Some(Detail::Text {
                text: error.message.clone(),
            }),
        }
    }

    async fn call(&self, args: WebFetchArgs, cx: &ToolContext) -> ToolResult<WebFetchOutput> {
        let config = cx
            .service::<WebFetchConfig>()
            .map(|c| (*c).clone())
            .unwrap_or_default();
        let limit = config.timeout;
        tokio::time::timeout(limit, fetch(&args, &config))
            .await
            .map_err(|_| timed_out(&args.url, limit))?
    }

    fn content(&self, output: &WebFetchOutput) -> Vec<ContentBlock> {
        let mut text = format!(
            "{} ({}, {} bytes)\n\n{}",
            output.url, output.content_type, output.bytes, output.content
        );
        if output.truncated {
            text.push_str("\n[qilin: the page was larger than the size cap and was cut here]\n");
        }
        vec![ContentBlock::text(text)]
    }
}
