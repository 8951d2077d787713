//! Shannon entropy in bits per character.

/// Summed in first-occurrence order, exactly like the Python reference, so both
/// sides round the same way near a threshold.
pub fn shannon_entropy(value: &str) -> f64 {
    let mut counts: Vec<(char, usize)> = Vec::new();
    let mut length = 0usize;
    for ch in value.chars() {
        length += 1;
        match counts.iter_mut().find(|(seen, _)| *seen == ch) {
            Some((_, count)) => *count += 1,
            None => counts.push((ch, 1)),
        }
    }
    let mut total = 0.0;
    for (_, count) in counts {
        let share = count as f64 / length as f64;
        total -= share * share.log2();
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entropy_of_known_strings() {
        assert_eq!(shannon_entropy(""), 0.0);
        assert_eq!(shannon_entropy("aaaa"), 0.0);
        assert!((shannon_entropy("abcd") - 2.0).abs() < 1e-12);
        assert!((shannon_entropy("abcdefgh") - 3.0).abs() < 1e-12);
        assert!(shannon_entropy("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY") > 4.0);
    }
}
