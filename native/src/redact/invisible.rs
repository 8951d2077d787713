//! Characters that do not show (zero-width space, joiners, word joiner, BOM, soft
//! hyphen): a token split by one reads as whole on screen and must be found whole.

const INVISIBLE: [char; 6] = [
    '\u{200B}', '\u{200C}', '\u{200D}', '\u{2060}', '\u{FEFF}', '\u{AD}',
];

/// Text without its invisible characters, and where each byte came from.
pub struct Visible {
    pub text: String,
    /// For each byte of `text`, its byte offset in the original.
    from: Vec<usize>,
}

impl Visible {
    /// The original byte offset of byte `at` of the stripped text.
    pub fn original(&self, at: usize) -> usize {
        self.from[at]
    }
}

/// `None` when `text` has no invisible character (the common case, one scan).
pub fn strip(text: &str) -> Option<Visible> {
    if !text.contains(INVISIBLE) {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut from = Vec::with_capacity(text.len());
    for (offset, c) in text.char_indices() {
        if INVISIBLE.contains(&c) {
            continue;
        }
        out.push(c);
        from.extend(offset..offset + c.len_utf8());
    }
    Some(Visible { text: out, from })
}
