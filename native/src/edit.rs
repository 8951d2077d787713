//! Search/replace edits as coding agents send them: exact match first, then
//! ignoring whitespace differences, then the most similar block of lines.
//!
//! An edit must land in exactly one place: two or more exact (or whitespace-
//! tolerant) matches, or two similar blocks within [`AMBIGUITY_MARGIN`] of each
//! other, raise `EditAmbiguous`; nothing good enough raises `EditNoMatch`. Both
//! messages name line ranges, so the agent can fix its search text.

mod distance;

use crate::errors::{NativeFailure, NativeResult};
use distance::Pattern;

pub const DEFAULT_THRESHOLD: f64 = 0.9;
/// A second fuzzy candidate this close to the best makes the edit ambiguous.
pub const AMBIGUITY_MARGIN: f64 = 0.02;
/// How many places an ambiguity message lists.
const SHOWN: usize = 5;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchKind {
    Exact,
    Whitespace,
    Fuzzy,
}

impl MatchKind {
    pub fn name(self) -> &'static str {
        match self {
            Self::Exact => "exact",
            Self::Whitespace => "whitespace",
            Self::Fuzzy => "fuzzy",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct EditOutcome {
    pub text: String,
    pub kind: MatchKind,
    /// 1-based, inclusive: the lines of the original text that were replaced.
    pub start_line: usize,
    pub end_line: usize,
    /// 1.0 for exact and whitespace matches.
    pub similarity: f64,
}

/// Replaces the one place in `text` that matches `search` with `replace`.
pub fn apply_edit(
    text: &str,
    search: &str,
    replace: &str,
    threshold: f64,
) -> NativeResult<EditOutcome> {
    if search.trim().is_empty() {
        return Err(NativeFailure::InvalidValue(
            "the search text is empty".into(),
        ));
    }
    if !(threshold > 0.0 && threshold <= 1.0) {
        return Err(NativeFailure::InvalidValue(format!(
            "threshold must be in (0, 1], not {threshold}"
        )));
    }
    if let Some(outcome) = exact(text, search, replace)? {
        return Ok(outcome);
    }
    let lines = TextLines::new(text);
    let wanted = SearchLines::new(search);
    if let Some(outcome) = whitespace(&lines, &wanted, replace)? {
        return Ok(outcome);
    }
    fuzzy(&lines, &wanted, replace, threshold)
}

fn exact(text: &str, search: &str, replace: &str) -> NativeResult<Option<EditOutcome>> {
    let mut found = Vec::new();
    let mut from = 0;
    // Overlapping occurrences count: "aa" in "aaa" could mean either place.
    while let Some(offset) = text[from..].find(search) {
        let at = from + offset;
        found.push(at);
        from = at + text[at..].chars().next().map_or(1, char::len_utf8);
    }
    let line_of = |byte: usize| text[..byte].matches('\n').count() + 1;
    let span = |at: usize| {
        let last = search.strip_suffix('\n').unwrap_or(search);
        (line_of(at), line_of(at) + last.matches('\n').count())
    };
    match found.as_slice() {
        [] => Ok(None),
        [at] => {
            let (start_line, end_line) = span(*at);
            let edited = format!("{}{replace}{}", &text[..*at], &text[at + search.len()..]);
            Ok(Some(EditOutcome {
                text: edited,
                kind: MatchKind::Exact,
                start_line,
                end_line,
                similarity: 1.0,
            }))
        }
        many => {
            let spans: Vec<(usize, usize)> = many.iter().map(|at| span(*at)).collect();
            Err(NativeFailure::EditAmbiguous(format!(
                "the search text occurs {} times ({}); include more surrounding lines to pick one",
                many.len(),
                describe(&spans)
            )))
        }
    }
}

/// The text's lines (with their endings, to rebuild it) and their normalized form.
struct TextLines<'a> {
    raw: Vec<&'a str>,
    normal: Vec<String>,
}

impl<'a> TextLines<'a> {
    fn new(text: &'a str) -> Self {
        let raw: Vec<&str> = text.split_inclusive('\n').collect();
        let normal = raw.iter().map(|line| normalize(line)).collect();
        Self { raw, normal }
    }
}

/// The search's non-blank block of lines, normalized, and its first indentation.
struct SearchLines {
    normal: Vec<String>,
    indent: String,
}

impl SearchLines {
    fn new(search: &str) -> Self {
        let raw: Vec<&str> = search.lines().collect();
        let first = raw.iter().position(|l| !l.trim().is_empty()).unwrap_or(0);
        let last = raw
            .iter()
            .rposition(|l| !l.trim().is_empty())
            .map_or(0, |i| i + 1);
        let block = raw.get(first..last).unwrap_or_default();
        Self {
            normal: block.iter().map(|line| normalize(line)).collect(),
            indent: block
                .first()
                .map_or("", |line| indentation(line))
                .to_owned(),
        }
    }
}

/// Whitespace runs collapsed to one space, ends trimmed.
fn normalize(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn indentation(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

fn whitespace(
    lines: &TextLines<'_>,
    wanted: &SearchLines,
    replace: &str,
) -> NativeResult<Option<EditOutcome>> {
    let k = wanted.normal.len();
    let starts: Vec<usize> = (0..(lines.raw.len() + 1).saturating_sub(k))
        .filter(|&start| lines.normal[start..start + k] == wanted.normal[..])
        .collect();
    match starts.as_slice() {
        [] => Ok(None),
        [start] => Ok(Some(replace_lines(
            lines,
            *start,
            k,
            wanted,
            replace,
            MatchKind::Whitespace,
            1.0,
        ))),
        many => {
            let spans: Vec<(usize, usize)> = many.iter().map(|s| (s + 1, s + k)).collect();
            Err(NativeFailure::EditAmbiguous(format!(
                "the search text matches {} places when whitespace is ignored ({}); \
                 include more surrounding lines to pick one",
                many.len(),
                describe(&spans)
            )))
        }
    }
}

fn fuzzy(
    lines: &TextLines<'_>,
    wanted: &SearchLines,
    replace: &str,
    threshold: f64,
) -> NativeResult<EditOutcome> {
    let k = wanted.normal.len();
    if lines.raw.len() < k {
        return Err(NativeFailure::EditNoMatch(format!(
            "the search text was not found: it has {k} lines and the text only {}",
            lines.raw.len()
        )));
    }
    let mut scored = window_scores(lines, wanted);
    // Best first; among equals the earliest, so the choice is deterministic.
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let (best, score) = scored[0];
    if score < threshold {
        return Err(NativeFailure::EditNoMatch(format!(
            "the search text was not found: no exact or whitespace-tolerant match, and the most \
             similar lines, {}, are {:.1}% similar (threshold {:.1}%)",
            describe(&[(best + 1, best + k)]),
            score * 100.0,
            threshold * 100.0
        )));
    }
    let rivals: Vec<(usize, f64)> = scored
        .iter()
        .copied()
        .filter(|&(start, s)| {
            s >= threshold && s >= score - AMBIGUITY_MARGIN && start.abs_diff(best) >= k
        })
        .collect();
    if !rivals.is_empty() {
        let places: Vec<String> = std::iter::once((best, score))
            .chain(rivals.iter().copied())
            .take(SHOWN)
            .map(|(s, sim)| format!("{} ({:.1}%)", describe(&[(s + 1, s + k)]), sim * 100.0))
            .collect();
        return Err(NativeFailure::EditAmbiguous(format!(
            "the search text is about equally similar to {} places: {}; \
             include more surrounding lines to pick one",
            rivals.len() + 1,
            places.join(", ")
        )));
    }
    Ok(replace_lines(
        lines,
        best,
        k,
        wanted,
        replace,
        MatchKind::Fuzzy,
        score,
    ))
}

/// Similarity of each `k`-line window to the search: one minus the summed edit
/// distances of aligned lines over their summed lengths (so long lines weigh more).
fn window_scores(lines: &TextLines<'_>, wanted: &SearchLines) -> Vec<(usize, f64)> {
    let k = wanted.normal.len();
    let windows = lines.raw.len() + 1 - k;
    let text: Vec<Vec<char>> = lines.normal.iter().map(|l| l.chars().collect()).collect();
    let mut distance = vec![0usize; windows];
    let mut length = vec![0usize; windows];
    for (j, line) in wanted.normal.iter().enumerate() {
        let pattern = Pattern::new(line);
        for start in 0..windows {
            let other = &text[start + j];
            distance[start] += pattern.distance(other);
            length[start] += pattern.len().max(other.len());
        }
    }
    (0..windows)
        .map(|start| {
            let similarity = match length[start] {
                0 => 1.0,
                total => 1.0 - distance[start] as f64 / total as f64,
            };
            (start, similarity)
        })
        .collect()
}

/// Replaces lines `start..start + count`, moving the replacement to the file's
/// indentation and line endings.
fn replace_lines(
    lines: &TextLines<'_>,
    start: usize,
    count: usize,
    wanted: &SearchLines,
    replace: &str,
    kind: MatchKind,
    similarity: f64,
) -> EditOutcome {
    let window = &lines.raw[start..start + count];
    let file_indent = window
        .iter()
        .find(|line| !line.trim().is_empty())
        .map_or("", |line| indentation(line));
    let mut block = reindent(replace, &wanted.indent, file_indent);
    let last = window.last().copied().unwrap_or("");
    let ending = if last.ends_with("\r\n") { "\r\n" } else { "\n" };
    if ending == "\r\n" {
        block = block.replace("\r\n", "\n").replace('\n', "\r\n");
    }
    if last.ends_with('\n') && !block.is_empty() && !block.ends_with('\n') {
        block.push_str(ending);
    } else if !last.ends_with('\n') {
        let trimmed = block.strip_suffix(ending).unwrap_or(&block).len();
        block.truncate(trimmed);
    }
    let text = [
        &lines.raw[..start].concat(),
        block.as_str(),
        &lines.raw[start + count..].concat(),
    ]
    .concat();
    EditOutcome {
        text,
        kind,
        start_line: start + 1,
        end_line: start + count,
        similarity,
    }
}

fn reindent(replace: &str, from: &str, to: &str) -> String {
    if from == to {
        return replace.to_owned();
    }
    replace
        .split_inclusive('\n')
        .map(|line| match line.strip_prefix(from) {
            Some(rest) if !line.trim().is_empty() => format!("{to}{rest}"),
            _ => line.to_owned(),
        })
        .collect()
}

/// "lines 3-5, 9-11" (at most [`SHOWN`] ranges).
fn describe(spans: &[(usize, usize)]) -> String {
    let shown: Vec<String> = spans
        .iter()
        .take(SHOWN)
        .map(|&(a, b)| {
            if a == b {
                format!("{a}")
            } else {
                format!("{a}-{b}")
            }
        })
        .collect();
    let more = spans.len().saturating_sub(SHOWN);
    let noun = if spans.len() == 1 && spans[0].0 == spans[0].1 {
        "line"
    } else {
        "lines"
    };
    let tail = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!("{noun} {}{tail}", shown.join(", "))
}

#[cfg(test)]
mod tests;
