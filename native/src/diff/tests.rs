use super::*;

fn udiff(old: &str, new: &str, context: usize) -> String {
    let options = DiffOptions {
        context,
        ..DiffOptions::default()
    };
    unified_diff(
        &Side {
            name: "a/f.txt",
            date: None,
            text: old,
        },
        &Side {
            name: "b/f.txt",
            date: None,
            text: new,
        },
        &options,
    )
}

#[test]
fn equal_texts_have_an_empty_diff() {
    assert_eq!(udiff("a\nb\n", "a\nb\n", 3), "");
    assert_eq!(
        diff_stats("x", "x", &DiffOptions::default()),
        DiffStats::default()
    );
}

#[test]
fn a_changed_line_in_the_middle() {
    let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
    let new = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n";
    assert_eq!(
        udiff(old, new, 1),
        "--- a/f.txt\n+++ b/f.txt\n@@ -4,3 +4,3 @@\n 4\n-5\n+five\n 6\n"
    );
}

#[test]
fn ranges_follow_gnu_diff() {
    // One line: no length; an empty side: the line before, then ",0".
    assert_eq!(
        udiff("a\n", "b\n", 3),
        "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+b\n"
    );
    assert_eq!(
        udiff("", "x\ny\n", 3),
        "--- a/f.txt\n+++ b/f.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n"
    );
    assert_eq!(
        udiff("a\nb\n", "a\n", 0),
        "--- a/f.txt\n+++ b/f.txt\n@@ -2 +1,0 @@\n-b\n"
    );
}

#[test]
fn a_missing_final_newline_is_marked() {
    assert_eq!(
        udiff("a\nb", "a\nb\n", 3),
        "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"
    );
}

#[test]
fn dates_follow_a_tab() {
    let options = DiffOptions::default();
    let text = unified_diff(
        &Side {
            name: "a",
            date: Some("2026-01-01 00:00:00"),
            text: "x\n",
        },
        &Side {
            name: "b",
            date: None,
            text: "y\n",
        },
        &options,
    );
    assert!(text.starts_with("--- a\t2026-01-01 00:00:00\n+++ b\n"));
}

#[test]
fn stats_count_lines_and_hunks() {
    let old: String = (0..100).map(|i| format!("{i}\n")).collect();
    let new = old
        .replace("10\n", "ten\n")
        .replace("90\n", "")
        .replace("50\n", "50\nnew\n");
    let stats = diff_stats(&old, &new, &DiffOptions::default());
    assert_eq!(
        stats,
        DiffStats {
            insertions: 2,
            deletions: 2,
            hunks: 3
        }
    );
    let merged = diff_stats(
        &old,
        &new,
        &DiffOptions {
            context: 40,
            ..DiffOptions::default()
        },
    );
    assert_eq!(merged.hunks, 1);
}

#[test]
fn algorithms_are_named() {
    assert_eq!(parse_algorithm("patience"), Ok(Algorithm::Patience));
    assert!(matches!(
        parse_algorithm("histogram"),
        Err(NativeFailure::InvalidValue(_))
    ));
}

#[test]
fn a_leading_deletion_before_a_changed_last_line_gets_the_right_header() {
    // Found by the Python property test against `patch`: `similar` placed the
    // deletion at new line 2, and the hunk header said +2,2.
    assert_eq!(
        udiff("b\na\na", "a\na\na\n", 1),
        "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n-b\n a\n-a\n\\ No newline at end of file\n+a\n+a\n"
    );
}
