//! BVH (Biovision Hierarchy) motion-capture importer.
//!
//! # What is read
//! - `HIERARCHY` with one or more `ROOT`s, `JOINT`s nested to any depth, one
//!   `OFFSET` and one `CHANNELS` declaration per joint (in any order inside
//!   its braces), and `End Site` blocks. An End Site becomes a joint named
//!   `<parent>_end` with no channels, so the tip of every bone exists
//!   (unless [`BvhOptions::end_sites`] is `false`, which skips them).
//!   Joint names are the rest of the `ROOT` / `JOINT` line (they may contain
//!   spaces); a `{` at the end of that line is accepted.
//! - `CHANNELS n` followed by exactly `n` channel names, in any order and any
//!   subset of `Xposition Yposition Zposition Xrotation Yrotation Zrotation`
//!   (ASCII case-insensitive; `n` may be 0). A rotation channel may repeat
//!   (it is one more factor of the product below); a position channel may not.
//! - `MOTION`, `Frames: n`, `Frame Time: seconds`, then one line per frame with
//!   exactly one value per declared channel, in declaration order. Blank lines
//!   are skipped; the file must hold exactly `n` frame lines.
//!
//! # Conventions of the result
//! - **Rotation.** A joint's rotation is the product of its rotation channels
//!   in the order they are listed, `R = R1 · R2 · R3` acting on column vectors
//!   (so the last-listed channel is applied to a vector first). Angles are in
//!   degrees in the file. Quaternions are normalised; frame 0 has `w >= 0` and
//!   every later frame is on the hemisphere of the frame before (per joint), so
//!   interpolation between neighbouring frames takes the short arc.
//! - **Translation.** A joint's translation is its `OFFSET`. Each position
//!   channel *replaces* the matching component of the `OFFSET` in the clip,
//!   for roots (the usual convention) and for non-root joints alike (MakeHuman
//!   files put 6 channels on every joint and write the offset into them).
//!   The skeleton's rest pose is the `OFFSET`s with identity rotations.
//! - **Units.** Every length (offsets and position channels) is multiplied by
//!   [`BvhOptions::scale`]. The default 0.01 turns the centimetre-like units of
//!   CMU conversions into metres and sets [`Asset::units`] to `"metres"`; with
//!   a scale of exactly 1 the units are `"file units"`. (MakeHuman files use
//!   decimetres: pass `scale: 0.1` for metres.)
//! - **Clip.** One clip named after the file stem, sample rate
//!   `1 / Frame Time`, exactly the file's frames (no looping duplicate). A
//!   file with `Frames: 0` gives a skeleton, no clip and a warning.
//! - **Joint order.** The skeleton is in depth-first pre-order, which is the
//!   file's order; [`Asset::joint_map`] maps file order (End Sites included)
//!   to skeleton indices anyway.
//!
//! # Errors
//! Every problem is an [`ImportError`] at [`Location::Line`] (1-based) with a
//! message saying what is wrong: missing or misplaced keywords, truncated
//! files, unbalanced braces, unknown channel names, non-numeric, NaN or
//! infinite values, motion lines with the wrong number of values, frame-count
//! mismatches, a non-positive frame time, hierarchies with more than
//! [`MAX_JOINTS`] joints and a frame count whose clip would exceed
//! [`BvhOptions::memory_budget`] (reported at the `Frames:` line before
//! anything is allocated for it). Errors of the skeleton or clip builders
//! (`sinew_core::Error`) are reported at [`Location::File`]. Nothing panics on
//! any input.
//!
//! # Speed
//! One pass over the text, no allocation per token or per line; numbers go
//! through a hand-written decimal parser with an exact fast path (falling
//! back to `str::parse::<f64>` for long mantissas and large exponents).

use std::path::Path;

use sinew_core::math::flush_tiny;
use sinew_core::skeleton::{self, JointDef};
use sinew_core::{Error, Quat, Transform, Vec3, MAX_JOINTS};

use super::{fmt_keys, read_file, Asset, Budget, ImportError, Location, DEFAULT_MEMORY_BUDGET};
use crate::assets::{AlignedBytes, OwnedClip, OwnedSkeleton};

/// Options of the BVH importer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BvhOptions {
    /// Factor applied to every length (offsets and position channels); finite
    /// and > 0. The default, 0.01, converts the centimetre-like units of CMU
    /// conversions to metres.
    pub scale: f32,
    /// Whether each `End Site` becomes a joint (`<parent>_end`, the default).
    /// `false` skips them: the skeleton has the file's `ROOT`s and `JOINT`s
    /// only (a CMU clip's 43 instead of 57), every per-frame stage has fewer
    /// joints to process, and [`Asset::joint_map`] covers those joints only.
    /// End Sites carry no channels, so no motion is lost; only the bone tips.
    pub end_sites: bool,
    /// Bytes the import may allocate for the clip (`Frames:` × the
    /// skeleton's SoA blocks × 160 bytes), checked before reading the
    /// motion; [`DEFAULT_MEMORY_BUDGET`] by default.
    pub memory_budget: usize,
}

impl Default for BvhOptions {
    fn default() -> Self {
        BvhOptions {
            scale: 0.01,
            end_sites: true,
            memory_budget: DEFAULT_MEMORY_BUDGET,
        }
    }
}

/// Most frames a file with no channels at all may declare (its frames are
/// all the rest pose, so nothing in the file bounds their memory).
const MAX_FRAMES_WITHOUT_CHANNELS: usize = 1 << 16;

/// Reads and imports a BVH file ([`from_slice`] over its bytes).
///
/// # Errors
/// The file cannot be read ([`Location::File`]), or as [`from_slice`].
pub fn load(path: &Path, opts: &BvhOptions) -> Result<Asset, ImportError> {
    from_slice(&read_file(path)?, path, opts)
}

/// Imports BVH text held in memory; `name` is the file it came from
/// (errors name it, the clip is named after its stem). The same name as
/// the glTF and ozz importers' in-memory entry points.
///
/// Invalid UTF-8 is replaced (U+FFFD) with a warning; it can only matter in
/// joint names, since anything else must be ASCII. See the
/// [module docs](self) for what is read and the conventions of the result.
///
/// # Errors
/// [`Location::File`] for an invalid `opts.scale` or a failure of the
/// skeleton/clip builders; [`Location::Line`] for everything wrong in the text.
pub fn from_slice(bytes: &[u8], name: &Path, opts: &BvhOptions) -> Result<Asset, ImportError> {
    match std::str::from_utf8(bytes) {
        Ok(text) => parse(text, name, opts),
        Err(_) => {
            let text = String::from_utf8_lossy(bytes);
            let mut asset = parse(&text, name, opts)?;
            asset
                .warnings
                .push("the file is not valid UTF-8; invalid bytes were replaced".to_owned());
            Ok(asset)
        }
    }
}

/// Imports BVH text (the work of [`from_slice`] once the bytes are text).
fn parse(text: &str, name: &Path, opts: &BvhOptions) -> Result<Asset, ImportError> {
    let scale = opts.scale;
    if !(scale.is_finite() && scale > 0.0) {
        return Err(ImportError::new(
            name,
            Location::File,
            format!("BVH scale must be finite and > 0, got {scale}"),
        ));
    }
    let mut p = Parser {
        text,
        bytes: text.as_bytes(),
        pos: 0,
        line: 1,
        file: name,
        scale,
        end_sites: opts.end_sites,
    };
    // A UTF-8 byte order mark is not part of the first keyword.
    if text.starts_with('\u{feff}') {
        p.pos = 3;
    }
    let mut h = p.hierarchy()?;
    if !opts.end_sites {
        drop_end_sites(&mut h);
    }
    let m = p.motion_header()?;
    let mut budget = Budget::new(opts.memory_budget);
    build(&mut p, &h, &m, &mut budget)
}

// ---------------------------------------------------------------------------
// Hierarchy
// ---------------------------------------------------------------------------

/// One channel of a joint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Channel {
    Pos(u8),
    Rot(u8),
}

/// A joint as read from the file (End Sites included).
struct RawJoint {
    name: String,
    parent: Option<usize>,
    /// Scaled OFFSET.
    offset: [f32; 3],
    /// First value of this joint in a motion line, and how many it owns.
    chan_start: usize,
    chan_count: usize,
    /// Line of the joint's keyword (for errors).
    line: usize,
    is_end: bool,
    has_offset: bool,
    has_channels: bool,
}

struct Hierarchy {
    joints: Vec<RawJoint>,
    /// How many of `joints` are End Sites.
    end_count: usize,
    /// All channels, in motion-line order.
    channels: Vec<Channel>,
}

struct MotionHeader {
    /// The declared count, saturated at `u64::MAX`: the budget, not the
    /// parser, decides whether it is too many.
    frames: u64,
    frames_line: usize,
    frame_time: f64,
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    /// 1-based line of `pos`.
    line: usize,
    file: &'a Path,
    scale: f32,
    /// [`BvhOptions::end_sites`]: End Sites are still parsed (and checked),
    /// then dropped, but do not count towards `MAX_JOINTS` when `false`.
    end_sites: bool,
}

/// ASCII whitespace as `u8::is_ascii_whitespace` defines it (space, tab, CR, LF, FF).
#[inline]
fn is_space(b: u8) -> bool {
    b.is_ascii_whitespace()
}

/// Whitespace that does not end a line.
#[inline]
fn is_inline_space(b: u8) -> bool {
    b != b'\n' && b.is_ascii_whitespace()
}

/// A token quoted for a message, shortened to at most 40 characters.
fn show(tok: &str) -> String {
    match tok.char_indices().nth(40) {
        Some((i, _)) => format!("'{}…'", &tok[..i]),
        None => format!("'{tok}'"),
    }
}

const AXES: [&str; 3] = ["X", "Y", "Z"];

fn channel_name(c: Channel) -> String {
    match c {
        Channel::Pos(a) => format!("{}position", AXES[a as usize % 3]),
        Channel::Rot(a) => format!("{}rotation", AXES[a as usize % 3]),
    }
}

fn parse_channel(tok: &str) -> Option<Channel> {
    let b = tok.as_bytes();
    if b.len() != 9 {
        return None;
    }
    let axis = match b[0] {
        b'X' | b'x' => 0,
        b'Y' | b'y' => 1,
        b'Z' | b'z' => 2,
        _ => return None,
    };
    let rest = &tok[1..];
    if rest.eq_ignore_ascii_case("position") {
        Some(Channel::Pos(axis))
    } else if rest.eq_ignore_ascii_case("rotation") {
        Some(Channel::Rot(axis))
    } else {
        None
    }
}

fn is_keyword(tok: &str) -> bool {
    matches!(
        tok,
        "{" | "}" | "JOINT" | "ROOT" | "End" | "OFFSET" | "CHANNELS" | "MOTION"
    )
}

impl<'a> Parser<'a> {
    fn err(&self, line: usize, msg: impl Into<String>) -> ImportError {
        ImportError::new(self.file, Location::Line(line), msg)
    }

    /// Line of the last character of the file (where "unexpected end of file" is).
    fn eof_line(&self) -> usize {
        let mut line = 1 + self.bytes.iter().filter(|&&b| b == b'\n').count();
        if self.bytes.last() == Some(&b'\n') {
            line -= 1;
        }
        line.max(1)
    }

    fn skip_space(&mut self) {
        while let Some(&b) = self.bytes.get(self.pos) {
            if b == b'\n' {
                self.line += 1;
            } else if !is_space(b) {
                break;
            }
            self.pos += 1;
        }
    }

    /// The next whitespace-separated token and its line.
    fn token(&mut self) -> Option<(&'a str, usize)> {
        self.skip_space();
        if self.pos >= self.bytes.len() {
            return None;
        }
        let start = self.pos;
        while self.pos < self.bytes.len() && !is_space(self.bytes[self.pos]) {
            self.pos += 1;
        }
        // Token ends are ASCII whitespace or the end, so they are char boundaries.
        Some((self.text.get(start..self.pos).unwrap_or(""), self.line))
    }

    /// The next token, or an "unexpected end of file" error saying what was expected.
    fn expect_token(&mut self, what: &str) -> Result<(&'a str, usize), ImportError> {
        match self.token() {
            Some(t) => Ok(t),
            None => Err(self.err(
                self.eof_line(),
                format!("unexpected end of file: expected {what} (truncated file?)"),
            )),
        }
    }

    /// The rest of the current line, trimmed; leaves `pos` at its newline.
    fn rest_of_line(&mut self) -> &'a str {
        let start = self.pos;
        while self.pos < self.bytes.len() && self.bytes[self.pos] != b'\n' {
            self.pos += 1;
        }
        self.text.get(start..self.pos).unwrap_or("").trim()
    }

    /// A finite number for `what` (scaled by nothing).
    fn number(&mut self, what: &str) -> Result<f32, ImportError> {
        let (tok, line) = self.expect_token(what)?;
        match parse_number(tok.as_bytes()) {
            Ok(v) if (v as f32).is_finite() => Ok(v as f32),
            Ok(_) | Err(NumError::NonFinite) => {
                Err(self.err(line, format!("{what} {} is NaN or infinite", show(tok))))
            }
            Err(NumError::Syntax) => {
                Err(self.err(line, format!("{what} {} is not a number", show(tok))))
            }
        }
    }

    fn hierarchy(&mut self) -> Result<Hierarchy, ImportError> {
        match self.token() {
            Some(("HIERARCHY", _)) => {}
            Some((tok, line)) => {
                return Err(self.err(
                    line,
                    format!("missing HIERARCHY: the file starts with {}", show(tok)),
                ))
            }
            None => return Err(self.err(1, "empty file: missing HIERARCHY")),
        }
        let mut h = Hierarchy {
            joints: Vec::new(),
            end_count: 0,
            channels: Vec::new(),
        };
        loop {
            match self.token() {
                Some(("ROOT", line)) => self.root(&mut h, line)?,
                Some(("MOTION", line)) => {
                    if h.joints.is_empty() {
                        return Err(self.err(line, "HIERARCHY has no ROOT joint"));
                    }
                    return Ok(h);
                }
                Some(("}", line)) => {
                    return Err(self.err(line, "unbalanced braces: '}' without a matching '{'"))
                }
                Some((tok, line)) => {
                    let expected = if h.joints.is_empty() {
                        "ROOT"
                    } else {
                        "ROOT or MOTION"
                    };
                    return Err(self.err(line, format!("expected {expected}, found {}", show(tok))));
                }
                None => {
                    let what = if h.joints.is_empty() {
                        "missing ROOT"
                    } else {
                        "missing MOTION"
                    };
                    return Err(self.err(
                        self.eof_line(),
                        format!("unexpected end of file: {what} (truncated file?)"),
                    ));
                }
            }
        }
    }

    /// Adds a joint and consumes its opening brace.
    fn open_joint(
        &mut self,
        h: &mut Hierarchy,
        name: String,
        parent: Option<usize>,
        line: usize,
        is_end: bool,
        brace_on_line: bool,
    ) -> Result<usize, ImportError> {
        // Joints the skeleton will have before this one.
        let (counted, what) = if self.end_sites {
            (h.joints.len(), "End Sites included")
        } else {
            (h.joints.len() - h.end_count, "End Sites skipped")
        };
        if counted >= MAX_JOINTS && (self.end_sites || !is_end) {
            return Err(self.err(
                line,
                format!(
                    "the hierarchy has more than {MAX_JOINTS} joints (sinew's MAX_JOINTS, {what})"
                ),
            ));
        }
        h.end_count += usize::from(is_end);
        if !brace_on_line {
            match self.expect_token("'{'")? {
                ("{", _) => {}
                (tok, l) => {
                    return Err(self.err(
                        l,
                        format!("expected '{{' after {name}, found {}", show(tok)),
                    ))
                }
            }
        }
        h.joints.push(RawJoint {
            name,
            parent,
            offset: [0.0; 3],
            chan_start: 0,
            chan_count: 0,
            line,
            is_end,
            has_offset: false,
            has_channels: false,
        });
        Ok(h.joints.len() - 1)
    }

    /// Reads a joint name from the rest of the line; also reports a trailing `{`.
    fn joint_name(&mut self, keyword: &str, line: usize) -> Result<(String, bool), ImportError> {
        let rest = self.rest_of_line();
        let (name, brace) = match rest.strip_suffix('{') {
            Some(n) => (n.trim_end(), true),
            None => (rest, false),
        };
        if name.is_empty() {
            return Err(self.err(line, format!("{keyword} without a name")));
        }
        Ok((name.to_owned(), brace))
    }

    /// One ROOT and everything below it (iteratively: nesting depth costs no stack).
    fn root(&mut self, h: &mut Hierarchy, root_line: usize) -> Result<(), ImportError> {
        let (name, brace) = self.joint_name("ROOT", root_line)?;
        let root = self.open_joint(h, name, None, root_line, false, brace)?;
        let mut stack: Vec<usize> = vec![root];
        while let Some(&cur) = stack.last() {
            let Some((tok, line)) = self.token() else {
                let j = &h.joints[cur];
                return Err(self.err(
                    self.eof_line(),
                    format!(
                        "unexpected end of file inside {} opened at line {} (missing '}}'; truncated file?)",
                        describe(j),
                        j.line
                    ),
                ));
            };
            match tok {
                "OFFSET" => {
                    if h.joints[cur].has_offset {
                        return Err(self.err(
                            line,
                            format!("second OFFSET in {}", describe(&h.joints[cur])),
                        ));
                    }
                    let mut o = [0.0f32; 3];
                    for v in &mut o {
                        let x = self.number("OFFSET value")?;
                        *v = x * self.scale;
                        if !v.is_finite() {
                            return Err(self.err(line, "OFFSET value overflows after scaling"));
                        }
                    }
                    let j = &mut h.joints[cur];
                    j.offset = o;
                    j.has_offset = true;
                }
                "CHANNELS" => self.channels(h, cur, line)?,
                "JOINT" => {
                    if h.joints[cur].is_end {
                        return Err(self.err(line, "an End Site cannot have child joints"));
                    }
                    let (name, brace) = self.joint_name("JOINT", line)?;
                    let j = self.open_joint(h, name, Some(cur), line, false, brace)?;
                    stack.push(j);
                }
                "End" => {
                    if h.joints[cur].is_end {
                        return Err(self.err(line, "an End Site cannot have child joints"));
                    }
                    let rest = self.rest_of_line();
                    let (site, brace) = match rest.strip_suffix('{') {
                        Some(s) => (s.trim_end(), true),
                        None => (rest, false),
                    };
                    if site != "Site" {
                        return Err(
                            self.err(line, format!("expected 'End Site', found 'End {rest}'"))
                        );
                    }
                    let name = format!("{}_end", h.joints[cur].name);
                    let j = self.open_joint(h, name, Some(cur), line, true, brace)?;
                    stack.push(j);
                }
                "}" => {
                    let j = &h.joints[cur];
                    if !j.has_offset {
                        return Err(self.err(line, format!("missing OFFSET in {}", describe(j))));
                    }
                    if !j.has_channels && !j.is_end {
                        return Err(self.err(line, format!("missing CHANNELS in {}", describe(j))));
                    }
                    stack.pop();
                }
                "MOTION" | "ROOT" | "HIERARCHY" => {
                    let j = &h.joints[cur];
                    return Err(self.err(
                        line,
                        format!(
                            "unbalanced braces: {tok} inside {} opened at line {} (missing '}}')",
                            describe(j),
                            j.line
                        ),
                    ));
                }
                "{" => {
                    return Err(self.err(line, "unbalanced braces: '{' without a JOINT or End Site"))
                }
                _ => {
                    let expected = if h.joints[cur].is_end {
                        "OFFSET or '}'"
                    } else {
                        "OFFSET, CHANNELS, JOINT, End Site or '}'"
                    };
                    return Err(self.err(line, format!("expected {expected}, found {}", show(tok))));
                }
            }
        }
        Ok(())
    }

    fn channels(&mut self, h: &mut Hierarchy, cur: usize, line: usize) -> Result<(), ImportError> {
        if h.joints[cur].is_end {
            return Err(self.err(line, "an End Site cannot have CHANNELS"));
        }
        if h.joints[cur].has_channels {
            return Err(self.err(
                line,
                format!("second CHANNELS in {}", describe(&h.joints[cur])),
            ));
        }
        let (tok, tline) = self.expect_token("the CHANNELS count")?;
        let count = match parse_count(tok) {
            Some(n) => n,
            None => {
                return Err(self.err(
                    tline,
                    format!("CHANNELS count {} is not a non-negative integer", show(tok)),
                ))
            }
        };
        let start = h.channels.len();
        let mut pos_seen = [false; 3];
        for i in 0..count {
            let Some((tok, cline)) = self.token() else {
                return Err(self.err(
                    self.eof_line(),
                    format!("unexpected end of file: CHANNELS says {count} but lists {i} channel names (truncated file?)"),
                ));
            };
            let c = match parse_channel(tok) {
                Some(c) => c,
                None if is_keyword(tok) => {
                    return Err(self.err(
                        line,
                        format!("CHANNELS says {count} but lists {i} channel names"),
                    ))
                }
                None => {
                    return Err(self.err(
                        cline,
                        format!(
                            "bad channel name {} (expected Xposition, Yposition, Zposition, Xrotation, Yrotation or Zrotation)",
                            show(tok)
                        ),
                    ))
                }
            };
            if let Channel::Pos(a) = c {
                if pos_seen[a as usize] {
                    return Err(
                        self.err(cline, format!("channel {} listed twice", channel_name(c)))
                    );
                }
                pos_seen[a as usize] = true;
            }
            h.channels.push(c);
        }
        let j = &mut h.joints[cur];
        j.chan_start = start;
        j.chan_count = count;
        j.has_channels = true;
        Ok(())
    }

    /// Splits the next non-blank line into tokens; `None` at the end of the file.
    fn next_line_tokens(&mut self) -> Option<(std::str::SplitAsciiWhitespace<'a>, usize)> {
        loop {
            if self.pos >= self.bytes.len() {
                return None;
            }
            let line = self.line;
            let start = self.pos;
            while self.pos < self.bytes.len() && self.bytes[self.pos] != b'\n' {
                self.pos += 1;
            }
            let s = self.text.get(start..self.pos).unwrap_or("");
            if self.pos < self.bytes.len() {
                self.pos += 1;
                self.line += 1;
            }
            if !s.trim().is_empty() {
                return Some((s.split_ascii_whitespace(), line));
            }
        }
    }

    fn motion_header(&mut self) -> Result<MotionHeader, ImportError> {
        // The rest of the MOTION line.
        let motion_line = self.line;
        let rest = self.rest_of_line();
        if !rest.is_empty() {
            return Err(self.err(
                motion_line,
                format!("unexpected {} after MOTION", show(rest)),
            ));
        }
        let eof = |p: &Self, what: &str| {
            p.err(
                p.eof_line(),
                format!("unexpected end of file: missing '{what}' after MOTION (truncated file?)"),
            )
        };

        let (mut toks, frames_line) = self
            .next_line_tokens()
            .ok_or_else(|| eof(self, "Frames:"))?;
        let first = toks.next().unwrap_or("");
        let Some(inline) = first.strip_prefix("Frames:") else {
            return Err(self.err(
                frames_line,
                format!("missing 'Frames:' after MOTION, found {}", show(first)),
            ));
        };
        let value = if inline.is_empty() {
            toks.next().unwrap_or("")
        } else {
            inline
        };
        let frames = parse_frames(value).ok_or_else(|| {
            self.err(
                frames_line,
                format!(
                    "Frames: value {} is not a non-negative integer",
                    show(value)
                ),
            )
        })?;
        if let Some(extra) = toks.next() {
            return Err(self.err(
                frames_line,
                format!("unexpected {} after the frame count", show(extra)),
            ));
        }

        let (mut toks, time_line) = self
            .next_line_tokens()
            .ok_or_else(|| eof(self, "Frame Time:"))?;
        let first = toks.next().unwrap_or("");
        let second = toks.next().unwrap_or("");
        let inline = match (first, second.strip_prefix("Time:")) {
            ("Frame", Some(inline)) => inline,
            _ => {
                return Err(self.err(
                    time_line,
                    format!(
                        "missing 'Frame Time:' after 'Frames:', found {}",
                        show(first)
                    ),
                ))
            }
        };
        let value = if inline.is_empty() {
            toks.next().unwrap_or("")
        } else {
            inline
        };
        let frame_time = match parse_number(value.as_bytes()) {
            Ok(t) if t.is_finite() => t,
            Ok(_) | Err(NumError::NonFinite) => {
                return Err(self.err(
                    time_line,
                    format!("Frame Time {} is NaN or infinite", show(value)),
                ))
            }
            Err(NumError::Syntax) => {
                return Err(self.err(
                    time_line,
                    format!("Frame Time {} is not a number", show(value)),
                ))
            }
        };
        if frame_time <= 0.0 || !((1.0 / frame_time) as f32).is_finite() {
            return Err(self.err(
                time_line,
                format!(
                    "Frame Time must be a positive number of seconds, found {}",
                    show(value)
                ),
            ));
        }
        if let Some(extra) = toks.next() {
            return Err(self.err(
                time_line,
                format!("unexpected {} after the frame time", show(extra)),
            ));
        }
        Ok(MotionHeader {
            frames,
            frames_line,
            frame_time,
        })
    }
}

fn describe(j: &RawJoint) -> String {
    if j.is_end {
        // The name is "<parent>_end".
        let parent = j.name.strip_suffix("_end").unwrap_or(&j.name);
        format!("the End Site of {}", show(parent))
    } else {
        format!("joint {}", show(&j.name))
    }
}

/// A non-negative decimal integer (ASCII digits only, at most 9 of them).
fn parse_count(tok: &str) -> Option<usize> {
    let b = tok.as_bytes();
    if b.is_empty() || b.len() > 9 || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0usize, |n, &d| n * 10 + (d - b'0') as usize))
}

/// A frame count: ASCII digits, any number of them, saturating at
/// `u64::MAX` (a count that large is refused by the memory budget, with
/// its size, rather than called "not a number").
fn parse_frames(tok: &str) -> Option<u64> {
    let b = tok.as_bytes();
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0u64, |n, &d| {
        n.saturating_mul(10).saturating_add(u64::from(d - b'0'))
    }))
}

// ---------------------------------------------------------------------------
// Numbers
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NumError {
    /// Not a decimal number.
    Syntax,
    /// A spelling of NaN or infinity (`nan`, `inf`, `1.#INF`, ...).
    NonFinite,
}

/// Powers of ten that are exact in f64.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Parses a decimal number: `[+-] digits [. digits] [(e|E) [+-] digits]`,
/// with digits on at least one side of the point.
///
/// Mantissas below 2^53 with a decimal exponent within ±22 are computed
/// exactly rounded (one multiplication or division of exact f64 values);
/// everything else goes through `str::parse::<f64>`. May return an infinity
/// when the value overflows.
#[inline]
fn parse_number(t: &[u8]) -> Result<f64, NumError> {
    let n = t.len();
    let mut i = 0;
    let neg = match t.first() {
        Some(b'-') => {
            i = 1;
            true
        }
        Some(b'+') => {
            i = 1;
            false
        }
        _ => false,
    };
    let mut mant: u64 = 0;
    let mut exp: i64 = 0;
    let mut digits = false;
    let mut inexact = false;
    while i < n && t[i].is_ascii_digit() {
        if mant < 100_000_000_000_000_000 {
            mant = mant * 10 + u64::from(t[i] - b'0');
        } else {
            exp += 1;
            inexact = true;
        }
        digits = true;
        i += 1;
    }
    if i < n && t[i] == b'.' {
        i += 1;
        while i < n && t[i].is_ascii_digit() {
            if mant < 100_000_000_000_000_000 {
                mant = mant * 10 + u64::from(t[i] - b'0');
                exp -= 1;
            } else {
                inexact = true;
            }
            digits = true;
            i += 1;
        }
    }
    if !digits {
        return Err(classify(t));
    }
    if i < n && (t[i] == b'e' || t[i] == b'E') {
        i += 1;
        let eneg = match t.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let mut e: i64 = 0;
        let mut edigits = false;
        while i < n && t[i].is_ascii_digit() {
            e = (e * 10 + i64::from(t[i] - b'0')).min(1_000_000);
            edigits = true;
            i += 1;
        }
        if !edigits {
            return Err(NumError::Syntax);
        }
        exp += if eneg { -e } else { e };
    }
    if i != n {
        return Err(classify(t));
    }
    if mant == 0 {
        return Ok(if neg { -0.0 } else { 0.0 });
    }
    let v = if !inexact && mant < (1u64 << 53) && (-22..=22).contains(&exp) {
        let m = mant as f64;
        if exp >= 0 {
            m * POW10[exp as usize]
        } else {
            m / POW10[(-exp) as usize]
        }
    } else {
        // The syntax was checked above, so this is ASCII and parses.
        let s = std::str::from_utf8(t).map_err(|_| NumError::Syntax)?;
        let v: f64 = s.parse().map_err(|_| NumError::Syntax)?;
        return Ok(v);
    };
    Ok(if neg { -v } else { v })
}

/// Why a token that is not a plain decimal number was rejected.
#[cold]
fn classify(t: &[u8]) -> NumError {
    let s = t
        .strip_prefix(b"-")
        .or_else(|| t.strip_prefix(b"+"))
        .unwrap_or(t);
    let lower: Vec<u8> = s.iter().map(u8::to_ascii_lowercase).collect();
    let special = lower.starts_with(b"nan")
        || lower.starts_with(b"inf")
        || lower.windows(4).any(|w| w == b"#inf" || w == b"#ind")
        || lower.windows(5).any(|w| w == b"#qnan" || w == b"#snan");
    if special {
        NumError::NonFinite
    } else {
        NumError::Syntax
    }
}

// ---------------------------------------------------------------------------
// Motion and assembly
// ---------------------------------------------------------------------------

/// A joint with channels, ready for the per-frame loop.
struct Animated {
    /// Index of its x translation in a frame's floats (block * 40 + lane).
    base: usize,
    chan_start: usize,
    chan_end: usize,
    offset: [f32; 3],
    has_position: bool,
    name_index: usize,
}

/// Floats per SoA block and the offsets of the components in one.
const BLOCK_FLOATS: usize = 40;
const QX: usize = 12;
const QY: usize = 16;
const QZ: usize = 20;
const QW: usize = 24;

const HALF_DEG_TO_RAD: f32 = std::f32::consts::PI / 360.0;

/// `q * (s·axis, c)` for a rotation about one coordinate axis.
#[inline(always)]
fn mul_axis(q: [f32; 4], axis: u8, s: f32, c: f32) -> [f32; 4] {
    let [x, y, z, w] = q;
    match axis {
        0 => [w * s + x * c, y * c + z * s, z * c - y * s, w * c - x * s],
        1 => [x * c - z * s, w * s + y * c, z * c + x * s, w * c - y * s],
        _ => [x * c + y * s, y * c - x * s, w * s + z * c, w * c - z * s],
    }
}

fn core_error(file: &Path, what: &str, e: Error) -> ImportError {
    ImportError::new(file, Location::File, format!("{what}: {e}"))
}

#[cold]
fn core_alloc_error(file: &Path, e: std::collections::TryReserveError) -> ImportError {
    ImportError::new(
        file,
        Location::File,
        format!("cannot allocate the clip's keys: {e}"),
    )
}

/// Removes the End Sites from a parsed hierarchy ([`BvhOptions::end_sites`]
/// `false`). They own no channels and no joint has one as its parent (the
/// parser refuses children in an End Site), so only the parent indices of
/// the other joints change.
fn drop_end_sites(h: &mut Hierarchy) {
    let mut kept = 0;
    let new_index: Vec<usize> = h
        .joints
        .iter()
        .map(|j| {
            let i = kept;
            kept += usize::from(!j.is_end);
            i
        })
        .collect();
    h.joints.retain(|j| !j.is_end);
    for j in &mut h.joints {
        j.parent = j.parent.and_then(|p| new_index.get(p).copied());
    }
    h.end_count = 0;
}

fn build(
    p: &mut Parser<'_>,
    h: &Hierarchy,
    m: &MotionHeader,
    budget: &mut Budget,
) -> Result<Asset, ImportError> {
    let file = p.file;
    let n = h.joints.len();
    let defs: Vec<JointDef<'_>> = h
        .joints
        .iter()
        .map(|j| JointDef {
            name: &j.name,
            parent: j.parent,
            rest: Transform::from_translation_rotation(
                Vec3::new(j.offset[0], j.offset[1], j.offset[2]),
                Quat::IDENTITY,
            ),
        })
        .collect();
    let mut remap = vec![0u16; n];
    let mut bytes = AlignedBytes::zeroed(skeleton::required_size(&defs));
    skeleton::build(&defs, bytes.as_mut_slice(), Some(&mut remap))
        .map_err(|e| core_error(file, "cannot build the skeleton", e))?;
    let skeleton = OwnedSkeleton::from_bytes(bytes.as_slice())
        .map_err(|e| core_error(file, "cannot build the skeleton", e))?;
    let template = skeleton.view().rest_pose().to_vec();
    let soa = template.len();

    let animated: Vec<Animated> = h
        .joints
        .iter()
        .enumerate()
        .filter(|(_, j)| j.chan_count > 0)
        .map(|(i, j)| {
            let k = remap[i] as usize;
            let chans = &h.channels[j.chan_start..j.chan_start + j.chan_count];
            Animated {
                base: (k / 4) * BLOCK_FLOATS + k % 4,
                chan_start: j.chan_start,
                chan_end: j.chan_start + j.chan_count,
                offset: j.offset,
                has_position: chans.iter().any(|c| matches!(c, Channel::Pos(_))),
                name_index: i,
            }
        })
        .collect();

    let total = h.channels.len();
    let mut warnings = Vec::new();
    if p.scale != 1.0 {
        warnings.extend(size_warning(&skeleton.view(), p.scale));
    }
    if total == 0 && m.frames > MAX_FRAMES_WITHOUT_CHANNELS as u64 {
        return Err(p.err(
            m.frames_line,
            format!("Frames: {} is too many for a file without channels (at most {MAX_FRAMES_WITHOUT_CHANNELS})", m.frames),
        ));
    }
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "bvh".to_owned());
    // The clip the header asks for is charged before any motion line is
    // read, so that a huge count is refused at its line with its size.
    let frame_bytes = std::mem::size_of_val(template.as_slice()) as u64;
    budget
        .take(
            m.frames.saturating_mul(frame_bytes),
            format_args!("clip {stem:?}: {}", fmt_keys(m.frames, n, soa)),
        )
        .map_err(|msg| p.err(m.frames_line, msg))?;
    // Within the budget, so within `usize`.
    let frames = usize::try_from(m.frames).unwrap_or(usize::MAX);
    // Each value takes at least two bytes, which bounds the frames really
    // present: a file that declares more than it holds reserves only those.
    let remaining = p.bytes.len().saturating_sub(p.pos);
    let likely = if total == 0 {
        frames
    } else {
        frames.min(remaining / (2 * total) + 1)
    };
    let mut keys = Vec::new();
    keys.try_reserve_exact(likely.saturating_mul(soa))
        .map_err(|e| core_alloc_error(file, e))?;
    let mut vals = vec![0.0f32; total];
    let mut prev = vec![[0.0f32, 0.0, 0.0, 1.0]; animated.len()];
    let scale = p.scale;
    let text_bytes = p.bytes;
    let mut pos = p.pos;
    let mut line = p.line;
    let mut done = 0usize;

    while pos < text_bytes.len() {
        let this_line = line;
        let mut count = 0usize;
        // Tokens of one line.
        loop {
            while pos < text_bytes.len() && is_inline_space(text_bytes[pos]) {
                pos += 1;
            }
            if pos >= text_bytes.len() || text_bytes[pos] == b'\n' {
                break;
            }
            let start = pos;
            while pos < text_bytes.len() && !is_space(text_bytes[pos]) {
                pos += 1;
            }
            if count < total && done < frames {
                let tok = &text_bytes[start..pos];
                let v = match parse_number(tok) {
                    Ok(v) => v as f32,
                    Err(e) => return Err(value_error(p, this_line, tok, e)),
                };
                if !v.is_finite() {
                    return Err(value_error(p, this_line, tok, NumError::NonFinite));
                }
                vals[count] = v;
            }
            count += 1;
        }
        if pos < text_bytes.len() {
            pos += 1;
            line += 1;
        }
        if count == 0 {
            continue;
        }
        if done == frames {
            return Err(p.err(
                this_line,
                format!("more frame lines than 'Frames: {frames}' declares (frame count mismatch)"),
            ));
        }
        if count != total {
            return Err(p.err(
                this_line,
                format!("motion line has {count} values, expected {total} (one per channel declared in HIERARCHY)"),
            ));
        }

        let at = keys.len();
        keys.extend_from_slice(&template);
        let fl: &mut [f32] = bytemuck::cast_slice_mut(&mut keys[at..]);
        for (a, q_prev) in animated.iter().zip(prev.iter_mut()) {
            let mut t = a.offset;
            let mut q = [0.0f32, 0.0, 0.0, 1.0];
            for (&c, &v) in h.channels[a.chan_start..a.chan_end]
                .iter()
                .zip(&vals[a.chan_start..a.chan_end])
            {
                match c {
                    Channel::Pos(axis) => t[axis as usize % 3] = v * scale,
                    Channel::Rot(axis) => {
                        let (s, co) = (v * HALF_DEG_TO_RAD).sin_cos();
                        q = mul_axis(q, axis, s, co);
                    }
                }
            }
            let len2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
            let mut inv = 1.0 / len2.sqrt();
            let reference = if done == 0 {
                [0.0, 0.0, 0.0, 1.0]
            } else {
                *q_prev
            };
            let dot = q[0] * reference[0]
                + q[1] * reference[1]
                + q[2] * reference[2]
                + q[3] * reference[3];
            if dot < 0.0 {
                inv = -inv;
            }
            // Noise angles (CMU files hold 3.9e-19 and 2.0e-16 degrees)
            // give products of sines down to 6e-39, subnormal: such
            // components are flushed to zero, so that sampling never
            // multiplies them (positions stay as the file wrote them).
            let q = [q[0] * inv, q[1] * inv, q[2] * inv, q[3] * inv].map(flush_tiny);
            *q_prev = q;
            if a.has_position {
                if !(t[0].is_finite() && t[1].is_finite() && t[2].is_finite()) {
                    return Err(p.err(
                        this_line,
                        format!(
                            "position of joint {} overflows after scaling",
                            show(&h.joints[a.name_index].name)
                        ),
                    ));
                }
                fl[a.base] = t[0];
                fl[a.base + 4] = t[1];
                fl[a.base + 8] = t[2];
            }
            fl[a.base + QX] = q[0];
            fl[a.base + QY] = q[1];
            fl[a.base + QZ] = q[2];
            fl[a.base + QW] = q[3];
        }
        done += 1;
    }
    p.pos = pos;
    p.line = line;

    if total == 0 {
        for _ in 0..frames {
            keys.extend_from_slice(&template);
        }
    } else if done < frames {
        return Err(p.err(
            m.frames_line,
            format!("'Frames: {frames}' but the file ends after {done} frame lines (frame count mismatch; truncated file?)"),
        ));
    }

    let rate = (1.0 / m.frame_time) as f32;
    let mut clips = Vec::new();
    if frames == 0 {
        warnings.push("the file has 'Frames: 0'; no clip was made".to_owned());
    } else {
        clips.push(
            OwnedClip::new(stem, rate, soa, keys)
                .map_err(|e| core_error(file, "cannot build the clip", e))?,
        );
    }
    let joint_map = remap;
    Ok(Asset {
        source: file.to_path_buf(),
        skeleton,
        joint_map,
        clips,
        meshes: Vec::new(),
        warnings,
        units: if scale == 1.0 { "file units" } else { "metres" },
    })
}

/// A warning when the rest pose, at `scale` metres per file unit, spans
/// less than 0.5 m or more than 5 m: for a human figure the file unit is
/// then not the one `scale` assumes (CMU's MotionBuilder-friendly
/// conversions are in 1/0.45 inch, MakeHuman's in decimetres), and every
/// length-based setting (a compression bound in cm, a shell) would be off
/// by that factor. `None` for a plausible size or a single point.
fn size_warning(skeleton: &sinew_core::Skeleton<'_>, scale: f32) -> Option<String> {
    let mut models = vec![sinew_core::Mat4::IDENTITY; skeleton.joint_count()];
    let job = sinew_core::fk::FkJob::new(skeleton, skeleton.rest_pose());
    sinew_core::fk::local_to_model(&job, &mut models).ok()?;
    let (mut lo, mut hi) = ([f32::MAX; 3], [f32::MIN; 3]);
    for m in &models {
        for i in 0..3 {
            lo[i] = lo[i].min(m.cols[3][i]);
            hi[i] = hi[i].max(m.cols[3][i]);
        }
    }
    let size = (0..3).map(|i| hi[i] - lo[i]).fold(0.0f32, f32::max);
    if size == 0.0 || (0.5..=5.0).contains(&size) {
        return None;
    }
    Some(format!(
        "the rest pose spans {size:.2} m with {scale} m per file unit: if this is a human figure, \
         the file is in another unit (CMU's MotionBuilder-friendly files are in 1/0.45 inch: \
         --bvh-scale 0.05644; MakeHuman's in decimetres: --bvh-scale 0.1), and lengths such as \
         a compression bound apply to the wrong size"
    ))
}

#[cold]
fn value_error(p: &Parser<'_>, line: usize, tok: &[u8], e: NumError) -> ImportError {
    let tok = String::from_utf8_lossy(tok);
    match e {
        NumError::NonFinite => p.err(
            line,
            format!("motion value {} is NaN or infinite", show(&tok)),
        ),
        NumError::Syntax => p.err(line, format!("motion value {} is not a number", show(&tok))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_parse_like_std() {
        for s in [
            "0",
            "-0",
            "1",
            "-1.5",
            ".5",
            "-.25",
            "5.",
            "+3",
            "1e3",
            "1E-3",
            "-2.47945e-15",
            "0.00833333",
            ".0083333",
            "57.4159",
            "123456789012345678901234",
            "1e-300",
            "1e300",
            "3.4028235e38",
            "0.1",
            "0.000001",
            "-161.151",
        ] {
            let want: f64 = s.parse().unwrap();
            assert_eq!(parse_number(s.as_bytes()), Ok(want), "{s}");
        }
        for s in [
            "", "-", ".", "e5", "1e", "1.2.3", "1-", "abc", "0x10", "1e+",
        ] {
            assert_eq!(parse_number(s.as_bytes()), Err(NumError::Syntax), "{s}");
        }
        for s in ["nan", "NaN", "-inf", "Infinity", "1.#INF", "-1.#IND"] {
            assert_eq!(parse_number(s.as_bytes()), Err(NumError::NonFinite), "{s}");
        }
        assert_eq!(parse_number(b"1e999"), Ok(f64::INFINITY));
    }

    #[test]
    fn axis_products_match_hamilton() {
        let q = Quat::new(0.1, -0.7, 0.3, 0.6).normalize();
        for axis in 0u8..3 {
            let (s, c) = (0.4f32.sin(), 0.4f32.cos());
            let mut b = [0.0; 4];
            b[axis as usize] = s;
            let want = q * Quat::new(b[0], b[1], b[2], c);
            let got = mul_axis(q.to_array(), axis, s, c);
            for (g, w) in got.iter().zip(want.to_array()) {
                assert!((g - w).abs() < 1e-6, "axis {axis}");
            }
        }
    }
}
