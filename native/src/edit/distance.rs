//! Levenshtein distance on characters: bit-parallel (Myers 1999 / Hyyrö 2003) when
//! the pattern fits in 64 characters, the two-row dynamic programme otherwise.
//! `apply_edit` computes one distance per (file line, search line) pair, so this
//! is its inner loop.

use std::collections::HashMap;

/// A pattern prepared for many distance computations.
pub struct Pattern {
    chars: Vec<char>,
    /// For each character, the bit set of its positions in the pattern.
    ascii: [u64; 128],
    other: HashMap<char, u64>,
}

impl Pattern {
    pub fn new(text: &str) -> Self {
        let chars: Vec<char> = text.chars().collect();
        let mut ascii = [0u64; 128];
        let mut other = HashMap::new();
        if chars.len() <= 64 {
            for (index, ch) in chars.iter().enumerate() {
                let bit = 1u64 << index;
                match usize::try_from(u32::from(*ch)) {
                    Ok(code) if code < 128 => ascii[code] |= bit,
                    _ => *other.entry(*ch).or_insert(0) |= bit,
                }
            }
        }
        Self {
            chars,
            ascii,
            other,
        }
    }

    pub fn len(&self) -> usize {
        self.chars.len()
    }

    fn mask(&self, ch: char) -> u64 {
        match usize::try_from(u32::from(ch)) {
            Ok(code) if code < 128 => self.ascii[code],
            _ => self.other.get(&ch).copied().unwrap_or(0),
        }
    }

    /// Edit distance between the pattern and `text` (both as characters).
    pub fn distance(&self, text: &[char]) -> usize {
        let m = self.chars.len();
        if m == 0 {
            return text.len();
        }
        if text.is_empty() {
            return m;
        }
        if m <= 64 {
            self.bit_parallel(text)
        } else {
            two_rows(&self.chars, text)
        }
    }

    fn bit_parallel(&self, text: &[char]) -> usize {
        let m = self.chars.len();
        let last = 1u64 << (m - 1);
        let (mut pv, mut mv) = (if m == 64 { u64::MAX } else { (1u64 << m) - 1 }, 0u64);
        let mut score = m;
        for &ch in text {
            let eq = self.mask(ch);
            let xv = eq | mv;
            let xh = (((eq & pv).wrapping_add(pv)) ^ pv) | eq;
            let mut ph = mv | !(xh | pv);
            let mut mh = pv & xh;
            if ph & last != 0 {
                score += 1;
            } else if mh & last != 0 {
                score -= 1;
            }
            ph = (ph << 1) | 1;
            mh <<= 1;
            pv = mh | !(xv | ph);
            mv = ph & xv;
        }
        score
    }
}

fn two_rows(a: &[char], b: &[char]) -> usize {
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        current[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitute.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(a: &str, b: &str) -> usize {
        let b_chars: Vec<char> = b.chars().collect();
        let fast = Pattern::new(a).distance(&b_chars);
        let a_chars: Vec<char> = a.chars().collect();
        let slow = if a_chars.is_empty() {
            b_chars.len()
        } else {
            two_rows(&a_chars, &b_chars)
        };
        assert_eq!(fast, slow, "{a:?} vs {b:?}");
        fast
    }

    #[test]
    fn known_distances() {
        assert_eq!(both("kitten", "sitting"), 3);
        assert_eq!(both("", "abc"), 3);
        assert_eq!(both("abc", ""), 3);
        assert_eq!(both("flaw", "lawn"), 2);
        assert_eq!(both("héllo wörld", "hello world"), 2);
        assert_eq!(both("same", "same"), 0);
    }

    #[test]
    fn bit_parallel_agrees_with_the_table_up_to_64_chars_and_beyond() {
        let alphabet = ['a', 'b', 'c', 'é', ' '];
        let mut seed = 12345u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        for _ in 0..500 {
            let a: String = (0..next() % 80).map(|_| alphabet[next() % 5]).collect();
            let b: String = (0..next() % 80).map(|_| alphabet[next() % 5]).collect();
            both(&a, &b);
        }
    }
}
