//! Drives a provider's decoder over a streamed HTTP response.

use crate::error::excerpt;
use crate::provider::ModelStream;
use crate::sse::{SseEvent, SseParser};
use crate::transport::{HttpTransport, error_chain};
use crate::{ModelError, ModelEvent};
use futures_util::StreamExt;
use qilin_protocol::Usage;
use reqwest::header::HeaderMap;
use std::collections::VecDeque;
use std::sync::Arc;

/// Turns one provider's SSE events into model events.
pub(crate) trait SseDecoder: Send + 'static {
    /// Reads one event, appending what it means to `out`.
    fn decode(&mut self, event: &SseEvent, out: &mut Vec<ModelEvent>) -> Result<(), ModelError>;
    /// Whether the stream's end marker was read (nothing after it is read).
    fn finished(&self) -> bool;
    /// The end marker, named for [`ModelError::TruncatedStream`].
    fn end_marker(&self) -> &'static str;
    /// Usage the provider announced that no [`ModelEvent::Usage`] has carried yet; taking it
    /// marks it reported. Called when the stream fails, so a failed answer still counts the
    /// tokens it cost.
    fn take_unreported_usage(&mut self) -> Option<Usage>;
}

/// A request ready to send.
pub(crate) struct PreparedRequest {
    /// The endpoint.
    pub url: String,
    /// The provider's headers (authentication, version).
    pub headers: HeaderMap,
    /// The JSON body.
    pub body: Vec<u8>,
}

struct Reading<D> {
    response: reqwest::Response,
    parser: SseParser,
    decoder: D,
    queue: VecDeque<Result<ModelEvent, ModelError>>,
    ended: bool,
}

impl<D: SseDecoder> Reading<D> {
    /// Queues the error that ends the stream, after the usage announced but not yet
    /// reported.
    fn fail(&mut self, err: ModelError) {
        if let Some(usage) = self.decoder.take_unreported_usage() {
            self.queue.push_back(Ok(ModelEvent::Usage(usage)));
        }
        self.queue.push_back(Err(err));
    }
}

enum State<D> {
    Unsent(Arc<HttpTransport>, PreparedRequest, D),
    Reading(Arc<HttpTransport>, Box<Reading<D>>),
    Done,
}

/// Sends `request` when first polled and streams the decoded answer. Ends with an error when
/// the body stops before the decoder saw its end marker, when no chunk arrives within the
/// idle timeout, or when a chunk cannot be decoded; before that error comes the usage the
/// provider announced and no event reported yet.
pub(crate) fn sse_stream<D: SseDecoder>(
    transport: Arc<HttpTransport>,
    request: PreparedRequest,
    decoder: D,
) -> ModelStream {
    futures_util::stream::unfold(
        State::Unsent(transport, request, decoder),
        |state| async move { next(state).await },
    )
    .boxed()
}

async fn next<D: SseDecoder>(
    mut state: State<D>,
) -> Option<(Result<ModelEvent, ModelError>, State<D>)> {
    loop {
        state = match state {
            State::Done => return None,
            State::Unsent(transport, request, decoder) => {
                match transport
                    .post(&request.url, &request.headers, &request.body)
                    .await
                {
                    Ok(response) => State::Reading(
                        transport,
                        Box::new(Reading {
                            response,
                            parser: SseParser::default(),
                            decoder,
                            queue: VecDeque::new(),
                            ended: false,
                        }),
                    ),
                    Err(err) => return Some((Err(err), State::Done)),
                }
            }
            State::Reading(transport, mut reading) => {
                if let Some(item) = reading.queue.pop_front() {
                    let after = if item.is_err() {
                        State::Done
                    } else {
                        State::Reading(transport, reading)
                    };
                    return Some((item, after));
                }
                if reading.decoder.finished() {
                    return None;
                }
                if reading.ended {
                    let err = ModelError::TruncatedStream {
                        provider: transport.provider(),
                        expected: reading.decoder.end_marker(),
                    };
                    reading.fail(err);
                } else {
                    read_chunk(&transport, &mut reading).await;
                }
                State::Reading(transport, reading)
            }
        };
    }
}

/// Reads the next body chunk into the queue (events, or the error that ends the stream).
async fn read_chunk<D: SseDecoder>(transport: &HttpTransport, reading: &mut Reading<D>) {
    let provider = transport.provider();
    let timeout = transport.idle_timeout();
    let chunk = match tokio::time::timeout(timeout, reading.response.chunk()).await {
        Err(_) => Err(ModelError::IdleTimeout { provider, timeout }),
        Ok(Err(err)) => Err(ModelError::Read {
            provider,
            reason: error_chain(&err),
        }),
        Ok(Ok(chunk)) => Ok(chunk),
    };
    let mut events = Vec::new();
    let parsed = match chunk {
        Err(err) => {
            reading.fail(err);
            return;
        }
        Ok(Some(bytes)) => reading.parser.feed(&bytes, &mut events),
        Ok(None) => {
            reading.ended = true;
            reading.parser.finish(&mut events);
            Ok(())
        }
    };
    let mut decoded = Vec::new();
    for event in &events {
        if reading.decoder.finished() {
            break;
        }
        if let Err(err) = reading.decoder.decode(event, &mut decoded) {
            reading.queue.extend(decoded.drain(..).map(Ok));
            reading.fail(err);
            return;
        }
    }
    reading.queue.extend(decoded.into_iter().map(Ok));
    if let Err(line) = parsed
        && !reading.decoder.finished()
    {
        reading.fail(ModelError::InvalidChunk {
            provider,
            reason: "a line is not valid UTF-8".to_owned(),
            chunk: excerpt(&line),
        });
    }
}
