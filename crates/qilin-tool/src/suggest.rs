/// The candidates closest to `name`, best first, at most `limit` of them.
///
/// A candidate qualifies when it contains `name` (or `name` contains it), or when its edit
/// distance is small for its length; used for "did you mean" in every error about a name.
pub fn closest_names<'a, I>(name: &str, candidates: I, limit: usize) -> Vec<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let needle = name.to_ascii_lowercase();
    let mut scored: Vec<(usize, &'a str)> = candidates
        .into_iter()
        .filter_map(|candidate| {
            let lower = candidate.to_ascii_lowercase();
            let distance = strsim::damerau_levenshtein(&needle, &lower);
            let close = distance <= (needle.len().max(lower.len()) / 3).max(1);
            let contains =
                needle.len() >= 3 && (lower.contains(&needle) || needle.contains(&lower));
            (close || contains).then_some((distance, candidate))
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(limit).map(|(_, c)| c).collect()
}

#[cfg(test)]
mod tests {
    use super::closest_names;

    #[test]
    fn typos_and_fragments_find_their_names() {
        let names = ["grep", "glob", "read", "read_image", "write"];
        assert_eq!(closest_names("gerp", names, 3), vec!["grep"]);
        assert_eq!(closest_names("image", names, 3), vec!["read_image"]);
        assert_eq!(closest_names("Read", names, 1), vec!["read"]);
        assert!(closest_names("kubernetes", names, 3).is_empty());
    }
}
