use super::*;

fn edit(text: &str, search: &str, replace: &str) -> NativeResult<EditOutcome> {
    apply_edit(text, search, replace, DEFAULT_THRESHOLD)
}

fn message(result: NativeResult<EditOutcome>) -> NativeFailure {
    result.expect_err("expected an error")
}

#[test]
fn exact_matches_replace_in_place() {
    let out = edit("a\nfoo(1)\nb\n", "foo(1)", "foo(2)").expect("edit");
    assert_eq!(out.text, "a\nfoo(2)\nb\n");
    assert_eq!(
        (out.kind, out.start_line, out.end_line),
        (MatchKind::Exact, 2, 2)
    );
    let out = edit("x\ny\nz\n", "y\nz\n", "Y\n").expect("edit");
    assert_eq!(
        (out.text.as_str(), out.start_line, out.end_line),
        ("x\nY\n", 2, 3)
    );
}

#[test]
fn repeated_exact_text_is_ambiguous_with_line_ranges() {
    let failure = message(edit("x = 1\ny\nx = 1\n", "x = 1", "x = 2"));
    let NativeFailure::EditAmbiguous(text) = failure else {
        panic!("{failure:?}")
    };
    assert!(text.contains("2 times (lines 1, 3)"), "{text}");
    // Overlapping occurrences are two places too.
    assert!(matches!(
        edit("aaa", "aa", "b"),
        Err(NativeFailure::EditAmbiguous(_))
    ));
}

#[test]
fn whitespace_differences_are_tolerated_and_indentation_follows_the_file() {
    let text = "def f():\n    if x:\n        return  1\n    return 2\n";
    let search = "if x:\n    return 1\n";
    let replace = "if x:\n    return 10\n";
    let out = edit(text, search, replace).expect("edit");
    assert_eq!(out.kind, MatchKind::Whitespace);
    assert_eq!((out.start_line, out.end_line), (2, 3));
    assert_eq!(
        out.text,
        "def f():\n    if x:\n        return 10\n    return 2\n"
    );
}

#[test]
fn crlf_files_keep_crlf() {
    let text = "a\r\n  b  c\r\nd\r\n";
    let out = edit(text, "b c", "B\nC").expect("edit");
    assert_eq!(out.kind, MatchKind::Whitespace);
    assert_eq!(out.text, "a\r\n  B\r\n  C\r\nd\r\n");
}

#[test]
fn fuzzy_matches_find_a_slightly_different_block() {
    let text = "fn main() {\n    let total = compute(1, 2);\n    println!(\"{}\", total);\n}\n";
    let search = "    let total = compute(1, 3);\n    println!(\"{}\", total);\n";
    let out = edit(text, search, "    run();\n").expect("edit");
    assert_eq!(out.kind, MatchKind::Fuzzy);
    assert_eq!((out.start_line, out.end_line), (2, 3));
    assert!(out.similarity > 0.9 && out.similarity < 1.0);
    assert_eq!(out.text, "fn main() {\n    run();\n}\n");
}

#[test]
fn nothing_similar_is_no_match_naming_the_best_candidate() {
    let text = "alpha\nbeta\ngamma\n";
    let failure = message(edit(text, "betb\nzzzzzzzzzzzz\n", "x"));
    let NativeFailure::EditNoMatch(text) = failure else {
        panic!("{failure:?}")
    };
    assert!(text.contains("lines 2-3"), "{text}");
    assert!(text.contains("threshold 90.0%"), "{text}");
}

#[test]
fn two_equally_similar_blocks_are_ambiguous() {
    let block = "call_service(alpha, beta, gamma)\nlog_result(value)\n";
    let text = format!("{block}sep\n{block}");
    let search = "call_service(alpha, beta, gamme)\nlog_result(value)\n";
    let failure = message(edit(&text, search, "x\n"));
    let NativeFailure::EditAmbiguous(text) = failure else {
        panic!("{failure:?}")
    };
    assert!(
        text.contains("lines 1-2") && text.contains("lines 4-5"),
        "{text}"
    );
}

#[test]
fn bad_arguments_are_value_errors() {
    assert!(matches!(
        edit("a", " \n", "b"),
        Err(NativeFailure::InvalidValue(_))
    ));
    assert!(matches!(
        apply_edit("a", "a", "b", 1.5),
        Err(NativeFailure::InvalidValue(_))
    ));
    assert!(matches!(
        edit("", "abc", "b"),
        Err(NativeFailure::EditNoMatch(_))
    ));
}

#[test]
fn the_end_of_a_file_without_newline_stays_without() {
    let out = edit("a\n  last", "last", "final").expect("edit");
    assert_eq!(out.text, "a\n  final");
    let out = edit("a\n  l a s t", "l  a s t\n", "final\n").expect("edit");
    assert_eq!(out.text, "a\n  final");
}
