//! Search: `GET /api/search`, ranked hits over what every session of the store recorded.

use crate::ServerState;
use crate::api::SearchSessions;
use crate::error::ApiError;
use crate::extract::ApiQuery;
use axum::Json;
use axum::extract::State;
use qilin_store::search::{DEFAULT_SEARCH_PAGE, MAX_SEARCH_PAGE};
use qilin_store::{SearchPage, SearchQuery};

/// `GET /api/search`: a page of hits, best first.
pub async fn search(
    State(state): State<ServerState>,
    ApiQuery(query): ApiQuery<SearchSessions>,
) -> Result<Json<SearchPage>, ApiError> {
    let limit = query
        .limit
        .map_or(DEFAULT_SEARCH_PAGE, |limit| limit as usize);
    if !(1..=MAX_SEARCH_PAGE).contains(&limit) {
        return Err(ApiError::bad_request(
            "invalid_query",
            format!("`limit` is {limit}; give 1 to {MAX_SEARCH_PAGE}"),
        ));
    }
    let sessions = query
        .sessions
        .iter()
        .flat_map(|ids| ids.split(','))
        .map(str::trim)
        .filter(|id| !id.is_empty())
        .map(str::to_string)
        .collect();
    let page = state
        .store()
        .search(&SearchQuery {
            text: query.q,
            sessions,
            workspace: None,
            agent: given(query.agent),
            tool: given(query.tool),
            status: query.status,
            after: given(query.after),
            before: given(query.before),
            limit,
            cursor: given(query.cursor),
        })
        .await?;
    Ok(Json(page))
}

/// A text parameter as the search reads it: one given empty (`cursor=`, as a form sends an
/// empty field) is not given.
fn given(value: Option<String>) -> Option<String> {
    value.filter(|text| !text.is_empty())
}
