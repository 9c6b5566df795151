//! Vertex sources and sinks: separate attribute arrays or one interleaved
//! buffer, behind one private trait pair the kernels are monomorphised over.
//!
//! Blocks are read and written four vertices at a time; `count < 4` is the
//! tail, whose missing vertices read as zeros and are not written.

use super::{SkinInput, SkinOutput, SkinVertices, StridedVertices, StridedVerticesMut};
use crate::error::Error;
use crate::soa::check_len;

/// Four vertices' 3-vectors.
pub(crate) type Block3 = [[f32; 3]; 4];
/// Four vertices' 4-vectors.
pub(crate) type Block4 = [[f32; 4]; 4];
/// A source's position and normal arrays ([`Source::arrays`]).
pub(crate) type Arrays<'a> = (&'a [[f32; 3]], Option<&'a [[f32; 3]]>);
/// A sink's position and normal arrays ([`Sink::arrays_mut`]).
pub(crate) type ArraysMut<'a> = (&'a mut [[f32; 3]], Option<&'a mut [[f32; 3]]>);

/// Where the kernels read bind-space attributes from. (The `…4` items are
/// for the AVX2 kernels, which only x86-64 builds have.)
#[cfg_attr(
    not(all(target_arch = "x86_64", target_feature = "sse2")),
    allow(dead_code)
)]
pub(crate) trait Source {
    fn positions(&self, first: usize, count: usize) -> Block3;
    fn normals(&self, first: usize, count: usize) -> Block3;
    fn tangents(&self, first: usize, count: usize) -> Block4;
    /// How many vertices every attribute array holds at least
    /// (`usize::MAX` when the source does not say). The kernels bound their
    /// block loops by it, so that the block accessors below need no check
    /// of their own (a check per block would be a noticeable share of the
    /// AVX2 LBS kernel's instructions).
    #[inline(always)]
    fn len_bound(&self) -> usize {
        usize::MAX
    }
    /// Full block `b` (vertices `4b .. 4b + 4`).
    ///
    /// # Safety
    /// `4b + 4 <= self.len_bound()`.
    #[inline(always)]
    #[allow(unsafe_code)] // only a contract for the overrides
    unsafe fn block_positions(&self, b: usize) -> Block3 {
        self.positions(b * 4, 4)
    }
    /// Full block `b` (zeros without normals).
    ///
    /// # Safety
    /// As [`Source::block_positions`].
    #[inline(always)]
    #[allow(unsafe_code)] // only a contract for the overrides
    unsafe fn block_normals(&self, b: usize) -> Block3 {
        self.normals(b * 4, 4)
    }
    /// Full block `b` (zeros without tangents).
    ///
    /// # Safety
    /// As [`Source::block_positions`].
    #[inline(always)]
    #[allow(unsafe_code)] // only a contract for the overrides
    unsafe fn block_tangents(&self, b: usize) -> Block4 {
        self.tangents(b * 4, 4)
    }
    /// Full blocks `2b` and `2b + 1` (vertices `8b .. 8b + 8`).
    ///
    /// # Safety
    /// `8b + 8 <= self.len_bound()`.
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn block8_positions(&self, b: usize) -> (Block3, Block3) {
        // SAFETY: the caller's promise covers both blocks.
        unsafe { (self.block_positions(2 * b), self.block_positions(2 * b + 1)) }
    }
    /// Full blocks `2b` and `2b + 1` (zeros without normals).
    ///
    /// # Safety
    /// As [`Source::block8_positions`].
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn block8_normals(&self, b: usize) -> (Block3, Block3) {
        // SAFETY: the caller's promise covers both blocks.
        unsafe { (self.block_normals(2 * b), self.block_normals(2 * b + 1)) }
    }
    /// Whether attributes are interleaved: the 8-wide kernels then read a
    /// vertex's position or normal as 4 floats ([`Source::position4`]), not
    /// blocks of `xyz xyz …`.
    const INTERLEAVED: bool = false;
    /// The position and normal arrays, for kernels that load whole blocks
    /// straight from them (`None`: go through the block accessors).
    #[inline(always)]
    fn arrays(&self) -> Option<Arrays<'_>> {
        None
    }
    /// Vertex `v`'s position as 4 floats, the 4th whatever follows it in
    /// the buffer. Interleaved sources only.
    ///
    /// # Safety
    /// `v < self.len_bound()`.
    #[inline(always)]
    #[allow(unsafe_code)] // only a contract for the overrides
    unsafe fn position4(&self, _v: usize) -> [f32; 4] {
        [0.0; 4]
    }
    /// Vertex `v`'s normal as 4 floats, as [`Source::position4`] (zeros
    /// without normals).
    ///
    /// # Safety
    /// `v < self.len_bound()`.
    #[inline(always)]
    #[allow(unsafe_code)] // only a contract for the overrides
    unsafe fn normal4(&self, _v: usize) -> [f32; 4] {
        [0.0; 4]
    }
}

/// Where the kernels write skinned attributes to. (The `…4` items are for
/// the AVX2 kernels, which only x86-64 builds have.)
#[cfg_attr(
    not(all(target_arch = "x86_64", target_feature = "sse2")),
    allow(dead_code)
)]
pub(crate) trait Sink {
    fn set_positions(&mut self, first: usize, count: usize, v: &Block3);
    fn set_normals(&mut self, first: usize, count: usize, v: &Block3);
    fn set_tangents(&mut self, first: usize, count: usize, v: &Block4);
    /// How many vertices every attribute array holds at least, as
    /// [`Source::len_bound`].
    #[inline(always)]
    fn len_bound(&self) -> usize {
        usize::MAX
    }
    /// Writes full block `b` (vertices `4b .. 4b + 4`).
    ///
    /// # Safety
    /// `4b + 4 <= self.len_bound()`.
    #[inline(always)]
    #[allow(unsafe_code)] // only a contract for the overrides
    unsafe fn set_block_positions(&mut self, b: usize, v: &Block3) {
        self.set_positions(b * 4, 4, v);
    }
    /// Writes full block `b` (nothing without normals).
    ///
    /// # Safety
    /// As [`Sink::set_block_positions`].
    #[inline(always)]
    #[allow(unsafe_code)] // only a contract for the overrides
    unsafe fn set_block_normals(&mut self, b: usize, v: &Block3) {
        self.set_normals(b * 4, 4, v);
    }
    /// Writes full block `b` (nothing without tangents).
    ///
    /// # Safety
    /// As [`Sink::set_block_positions`].
    #[inline(always)]
    #[allow(unsafe_code)] // only a contract for the overrides
    unsafe fn set_block_tangents(&mut self, b: usize, v: &Block4) {
        self.set_tangents(b * 4, 4, v);
    }
    /// Whether attributes are interleaved: the 8-wide kernels then write a
    /// vertex's position or normal from 4 floats ([`Sink::set_position4`]).
    const INTERLEAVED: bool = false;
    /// The position and normal arrays, as [`Source::arrays`].
    #[inline(always)]
    fn arrays_mut(&mut self) -> Option<ArraysMut<'_>> {
        None
    }
    /// Writes `x`, `y`, `z` of `p` as vertex `v`'s position (not the 4th
    /// float). Interleaved sinks only.
    ///
    /// # Safety
    /// `v < self.len_bound()`.
    #[inline(always)]
    #[allow(unsafe_code)] // only a contract for the overrides
    unsafe fn set_position4(&mut self, _v: usize, _p: &[f32; 4]) {}
    /// Writes vertex `v`'s normal, as [`Sink::set_position4`] (nothing
    /// without normals).
    ///
    /// # Safety
    /// `v < self.len_bound()`.
    #[inline(always)]
    #[allow(unsafe_code)] // only a contract for the overrides
    unsafe fn set_normal4(&mut self, _v: usize, _n: &[f32; 4]) {}
}

/// Full block `b` of `s` (vertices `4b .. 4b + 4`).
///
/// # Safety
/// `4b + 4 <= s.len()`.
#[inline(always)]
#[allow(unsafe_code)]
unsafe fn load_block<const W: usize>(s: &[[f32; W]], b: usize) -> [[f32; W]; 4] {
    debug_assert!(4 * b + 4 <= s.len());
    // SAFETY: the four vertices are in `s` (the caller's promise).
    unsafe {
        s.as_ptr()
            .add(4 * b)
            .cast::<[[f32; W]; 4]>()
            .read_unaligned()
    }
}

/// Writes full block `b` of `d`.
///
/// # Safety
/// `4b + 4 <= d.len()`.
#[inline(always)]
#[allow(unsafe_code)]
unsafe fn store_block<const W: usize>(d: &mut [[f32; W]], b: usize, v: &[[f32; W]; 4]) {
    debug_assert!(4 * b + 4 <= d.len());
    // SAFETY: the four vertices are in `d` (the caller's promise).
    unsafe {
        d.as_mut_ptr()
            .add(4 * b)
            .cast::<[[f32; W]; 4]>()
            .write_unaligned(*v)
    }
}

/// The shortest length of `first` and the present `rest`.
#[inline(always)]
fn min_len(first: usize, rest: [Option<usize>; 2]) -> usize {
    rest.iter()
        .fold(first, |m, r| m.min(r.unwrap_or(usize::MAX)))
}

/// Vertices `first .. first + count` of `s` (`count <= 4`), zero-padded.
#[inline(always)]
pub(crate) fn load<T: Copy + Default, const W: usize>(
    s: &[[T; W]],
    first: usize,
    count: usize,
) -> [[T; W]; 4] {
    if count == 4 {
        if let Some(c) = s.get(first..).and_then(|s| s.first_chunk::<4>()) {
            return *c;
        }
    }
    let mut out = [[T::default(); W]; 4];
    for (o, v) in out.iter_mut().zip(s.iter().skip(first).take(count)) {
        *o = *v;
    }
    out
}

#[inline(always)]
fn store<const W: usize>(d: &mut [[f32; W]], first: usize, count: usize, v: &[[f32; W]; 4]) {
    if count == 4 {
        if let Some(c) = d.get_mut(first..).and_then(|s| s.first_chunk_mut::<4>()) {
            *c = *v;
            return;
        }
    }
    for (o, x) in d.iter_mut().skip(first).take(count).zip(v) {
        *o = *x;
    }
}

impl Source for SkinVertices<'_> {
    #[inline(always)]
    fn arrays(&self) -> Option<Arrays<'_>> {
        Some((self.positions, self.normals))
    }
    #[inline(always)]
    fn len_bound(&self) -> usize {
        min_len(
            self.positions.len(),
            [self.normals.map(<[_]>::len), self.tangents.map(<[_]>::len)],
        )
    }
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn block_positions(&self, b: usize) -> Block3 {
        // SAFETY: `4b + 4 <= self.len_bound() <= positions.len()`.
        unsafe { load_block(self.positions, b) }
    }
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn block_normals(&self, b: usize) -> Block3 {
        // SAFETY: `4b + 4 <= self.len_bound() <= n.len()`.
        self.normals
            .map_or([[0.0; 3]; 4], |n| unsafe { load_block(n, b) })
    }
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn block_tangents(&self, b: usize) -> Block4 {
        // SAFETY: `4b + 4 <= self.len_bound() <= t.len()`.
        self.tangents
            .map_or([[0.0; 4]; 4], |t| unsafe { load_block(t, b) })
    }
    // One test of the option for both blocks (the default's two tests show
    // up in the AVX2 LBS kernel's instruction count).
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn block8_normals(&self, b: usize) -> (Block3, Block3) {
        let zero = [[0.0; 3]; 4];
        // SAFETY: blocks `2b` and `2b + 1` end at `8b + 8 <=
        // self.len_bound() <= n.len()`.
        self.normals.map_or((zero, zero), |n| unsafe {
            (load_block(n, 2 * b), load_block(n, 2 * b + 1))
        })
    }
    #[inline(always)]
    fn positions(&self, first: usize, count: usize) -> Block3 {
        load(self.positions, first, count)
    }
    #[inline(always)]
    fn normals(&self, first: usize, count: usize) -> Block3 {
        self.normals
            .map_or([[0.0; 3]; 4], |n| load(n, first, count))
    }
    #[inline(always)]
    fn tangents(&self, first: usize, count: usize) -> Block4 {
        self.tangents
            .map_or([[0.0; 4]; 4], |t| load(t, first, count))
    }
}

impl Source for SkinInput<'_> {
    #[inline(always)]
    fn arrays(&self) -> Option<Arrays<'_>> {
        Some((self.positions, self.normals))
    }
    #[inline(always)]
    fn positions(&self, first: usize, count: usize) -> Block3 {
        self.vertices().positions(first, count)
    }
    #[inline(always)]
    fn normals(&self, first: usize, count: usize) -> Block3 {
        self.vertices().normals(first, count)
    }
    #[inline(always)]
    fn tangents(&self, first: usize, count: usize) -> Block4 {
        self.vertices().tangents(first, count)
    }
}

impl Sink for SkinOutput<'_> {
    #[inline(always)]
    fn arrays_mut(&mut self) -> Option<ArraysMut<'_>> {
        Some((self.positions, self.normals.as_deref_mut()))
    }
    #[inline(always)]
    fn len_bound(&self) -> usize {
        min_len(
            self.positions.len(),
            [
                self.normals.as_deref().map(<[_]>::len),
                self.tangents.as_deref().map(<[_]>::len),
            ],
        )
    }
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn set_block_positions(&mut self, b: usize, v: &Block3) {
        // SAFETY: `4b + 4 <= self.len_bound() <= positions.len()`.
        unsafe { store_block(self.positions, b, v) }
    }
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn set_block_normals(&mut self, b: usize, v: &Block3) {
        if let Some(n) = self.normals.as_deref_mut() {
            // SAFETY: `4b + 4 <= self.len_bound() <= n.len()`.
            unsafe { store_block(n, b, v) }
        }
    }
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn set_block_tangents(&mut self, b: usize, v: &Block4) {
        if let Some(t) = self.tangents.as_deref_mut() {
            // SAFETY: `4b + 4 <= self.len_bound() <= t.len()`.
            unsafe { store_block(t, b, v) }
        }
    }
    #[inline(always)]
    fn set_positions(&mut self, first: usize, count: usize, v: &Block3) {
        store(self.positions, first, count, v);
    }
    #[inline(always)]
    fn set_normals(&mut self, first: usize, count: usize, v: &Block3) {
        if let Some(n) = self.normals.as_deref_mut() {
            store(n, first, count, v);
        }
    }
    #[inline(always)]
    fn set_tangents(&mut self, first: usize, count: usize, v: &Block4) {
        if let Some(t) = self.tangents.as_deref_mut() {
            store(t, first, count, v);
        }
    }
}

#[inline(always)]
fn load_strided<const W: usize>(
    data: &[f32],
    stride: usize,
    offset: usize,
    first: usize,
    count: usize,
) -> [[f32; W]; 4] {
    let mut out = [[0.0; W]; 4];
    for (i, o) in out.iter_mut().enumerate().take(count) {
        let at = (first + i) * stride + offset;
        if let Some(c) = data.get(at..).and_then(|s| s.first_chunk::<W>()) {
            *o = *c;
        }
    }
    out
}

#[inline(always)]
fn store_strided<const W: usize>(
    data: &mut [f32],
    stride: usize,
    offset: usize,
    first: usize,
    count: usize,
    v: &[[f32; W]; 4],
) {
    for (i, x) in v.iter().enumerate().take(count) {
        let at = (first + i) * stride + offset;
        if let Some(c) = data.get_mut(at..).and_then(|s| s.first_chunk_mut::<W>()) {
            *c = *x;
        }
    }
}

/// How many vertices `v` of a buffer of `len` floats have `w` floats at
/// `v * stride + offset` inside it.
#[inline(always)]
fn strided_count(len: usize, stride: usize, offset: usize, w: usize) -> usize {
    match len.checked_sub(offset + w) {
        Some(rest) if stride > 0 => rest / stride + 1,
        _ => 0,
    }
}

/// Block `b`'s attribute of `W` floats at `offset` in each vertex.
///
/// # Safety
/// `(4b + 3) * stride + offset + W <= data.len()`.
#[inline(always)]
#[allow(unsafe_code)]
unsafe fn load_block_strided<const W: usize>(
    data: &[f32],
    stride: usize,
    offset: usize,
    b: usize,
) -> [[f32; W]; 4] {
    debug_assert!((4 * b + 3) * stride + offset + W <= data.len());
    // SAFETY: the caller's promise covers the last (farthest) vertex.
    core::array::from_fn(|i| unsafe {
        data.as_ptr()
            .add((4 * b + i) * stride + offset)
            .cast::<[f32; W]>()
            .read_unaligned()
    })
}

/// Writes block `b`'s attribute of `W` floats at `offset` in each vertex.
///
/// # Safety
/// As [`load_block_strided`].
#[inline(always)]
#[allow(unsafe_code)]
unsafe fn store_block_strided<const W: usize>(
    data: &mut [f32],
    stride: usize,
    offset: usize,
    b: usize,
    v: &[[f32; W]; 4],
) {
    debug_assert!((4 * b + 3) * stride + offset + W <= data.len());
    for (i, x) in v.iter().enumerate() {
        // SAFETY: the caller's promise covers the last (farthest) vertex.
        unsafe {
            data.as_mut_ptr()
                .add((4 * b + i) * stride + offset)
                .cast::<[f32; W]>()
                .write_unaligned(*x)
        }
    }
}

/// The 4 floats at `at` (a vertex's 3-float attribute and the float after
/// it).
///
/// # Safety
/// `at + 4 <= data.len()`.
#[inline(always)]
#[allow(unsafe_code)]
#[cfg_attr(
    not(all(target_arch = "x86_64", target_feature = "sse2")),
    allow(dead_code)
)]
unsafe fn load4(data: &[f32], at: usize) -> [f32; 4] {
    debug_assert!(at + 4 <= data.len());
    // SAFETY: the caller's promise.
    unsafe { data.as_ptr().add(at).cast::<[f32; 4]>().read_unaligned() }
}

/// Writes the first 3 of `v` at `at`.
///
/// # Safety
/// `at + 3 <= data.len()`.
#[inline(always)]
#[allow(unsafe_code)]
#[cfg_attr(
    not(all(target_arch = "x86_64", target_feature = "sse2")),
    allow(dead_code)
)]
unsafe fn store3(data: &mut [f32], at: usize, v: &[f32; 4]) {
    debug_assert!(at + 3 <= data.len());
    // SAFETY: the caller's promise.
    unsafe {
        data.as_mut_ptr()
            .add(at)
            .cast::<[f32; 3]>()
            .write_unaligned([v[0], v[1], v[2]])
    }
}

impl Source for StridedVertices<'_> {
    const INTERLEAVED: bool = true;
    /// The vertices whose position, normal and tangent can be read as 4
    /// floats each (all but the last one when an attribute ends its vertex).
    #[inline(always)]
    fn len_bound(&self) -> usize {
        let count = |o: usize| strided_count(self.data.len(), self.stride, o, 4);
        min_len(
            count(self.position),
            [self.normal.map(count), self.tangent.map(count)],
        )
    }
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn block_positions(&self, b: usize) -> Block3 {
        // SAFETY: `4b + 4 <= self.len_bound()`, so vertex `4b + 3`'s
        // position (4 floats, more than the 3 read) is in `data`.
        unsafe { load_block_strided(self.data, self.stride, self.position, b) }
    }
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn block_normals(&self, b: usize) -> Block3 {
        // SAFETY: `4b + 4 <= self.len_bound()`, so vertex `4b + 3`'s
        // normal is in `data`.
        self.normal.map_or([[0.0; 3]; 4], |o| unsafe {
            load_block_strided(self.data, self.stride, o, b)
        })
    }
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn block_tangents(&self, b: usize) -> Block4 {
        // SAFETY: `4b + 4 <= self.len_bound()`, so vertex `4b + 3`'s
        // tangent is in `data`.
        self.tangent.map_or([[0.0; 4]; 4], |o| unsafe {
            load_block_strided(self.data, self.stride, o, b)
        })
    }
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn position4(&self, v: usize) -> [f32; 4] {
        // SAFETY: `v < self.len_bound()`, so the 4 floats are in `data`.
        unsafe { load4(self.data, v * self.stride + self.position) }
    }
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn normal4(&self, v: usize) -> [f32; 4] {
        // SAFETY: `v < self.len_bound()`, so the 4 floats are in `data`.
        self.normal.map_or([0.0; 4], |o| unsafe {
            load4(self.data, v * self.stride + o)
        })
    }
    #[inline(always)]
    fn positions(&self, first: usize, count: usize) -> Block3 {
        load_strided(self.data, self.stride, self.position, first, count)
    }
    #[inline(always)]
    fn normals(&self, first: usize, count: usize) -> Block3 {
        self.normal.map_or([[0.0; 3]; 4], |o| {
            load_strided(self.data, self.stride, o, first, count)
        })
    }
    #[inline(always)]
    fn tangents(&self, first: usize, count: usize) -> Block4 {
        self.tangent.map_or([[0.0; 4]; 4], |o| {
            load_strided(self.data, self.stride, o, first, count)
        })
    }
}

impl Sink for StridedVerticesMut<'_> {
    const INTERLEAVED: bool = true;
    /// The vertices whose position and normal (3 floats) and tangent (4)
    /// can be written.
    #[inline(always)]
    fn len_bound(&self) -> usize {
        let count = |o: usize, w: usize| strided_count(self.data.len(), self.stride, o, w);
        min_len(
            count(self.position, 3),
            [
                self.normal.map(|o| count(o, 3)),
                self.tangent.map(|o| count(o, 4)),
            ],
        )
    }
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn set_block_positions(&mut self, b: usize, v: &Block3) {
        // SAFETY: `4b + 4 <= self.len_bound()`, so vertex `4b + 3`'s
        // position is in `data`.
        unsafe { store_block_strided(self.data, self.stride, self.position, b, v) }
    }
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn set_block_normals(&mut self, b: usize, v: &Block3) {
        if let Some(o) = self.normal {
            // SAFETY: `4b + 4 <= self.len_bound()`, so vertex `4b + 3`'s
            // normal is in `data`.
            unsafe { store_block_strided(self.data, self.stride, o, b, v) }
        }
    }
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn set_block_tangents(&mut self, b: usize, v: &Block4) {
        if let Some(o) = self.tangent {
            // SAFETY: `4b + 4 <= self.len_bound()`, so vertex `4b + 3`'s
            // tangent is in `data`.
            unsafe { store_block_strided(self.data, self.stride, o, b, v) }
        }
    }
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn set_position4(&mut self, v: usize, p: &[f32; 4]) {
        // SAFETY: `v < self.len_bound()`, so the 3 floats are in `data`.
        unsafe { store3(self.data, v * self.stride + self.position, p) }
    }
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn set_normal4(&mut self, v: usize, n: &[f32; 4]) {
        if let Some(o) = self.normal {
            // SAFETY: `v < self.len_bound()`, so the 3 floats are in `data`.
            unsafe { store3(self.data, v * self.stride + o, n) }
        }
    }
    #[inline(always)]
    fn set_positions(&mut self, first: usize, count: usize, v: &Block3) {
        store_strided(self.data, self.stride, self.position, first, count, v);
    }
    #[inline(always)]
    fn set_normals(&mut self, first: usize, count: usize, v: &Block3) {
        if let Some(o) = self.normal {
            store_strided(self.data, self.stride, o, first, count, v);
        }
    }
    #[inline(always)]
    fn set_tangents(&mut self, first: usize, count: usize, v: &Block4) {
        if let Some(o) = self.tangent {
            store_strided(self.data, self.stride, o, first, count, v);
        }
    }
}

/// What a validated call computes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Plan {
    pub vertices: usize,
    pub normals: bool,
    pub tangents: bool,
}

/// Checks the attribute arrays against `n` vertices. A missing input
/// attribute that the output asks for counts as an array of length 0.
pub(crate) fn check_arrays(
    n: usize,
    input: &SkinVertices<'_>,
    out: &SkinOutput<'_>,
) -> Result<Plan, Error> {
    check_len("positions", n, input.positions.len())?;
    if let Some(x) = input.normals {
        check_len("normals", n, x.len())?;
    }
    if let Some(x) = input.tangents {
        check_len("tangents", n, x.len())?;
    }
    check_len("output positions", n, out.positions.len())?;
    let normals = out.normals.is_some();
    let tangents = out.tangents.is_some();
    if let Some(x) = out.normals.as_deref() {
        check_len("normals", n, input.normals.map_or(0, <[_]>::len))?;
        check_len("output normals", n, x.len())?;
    }
    if let Some(x) = out.tangents.as_deref() {
        check_len("tangents", n, input.tangents.map_or(0, <[_]>::len))?;
        check_len("output tangents", n, x.len())?;
    }
    Ok(Plan {
        vertices: n,
        normals,
        tangents,
    })
}

fn check_attr(
    stride: usize,
    offset: Option<usize>,
    width: usize,
    what: &'static str,
) -> Result<(), Error> {
    match offset {
        Some(o) if o.checked_add(width).is_none_or(|end| end > stride) => {
            Err(Error::InvalidLayout { what })
        }
        _ => Ok(()),
    }
}

fn overlap(a: Option<usize>, wa: usize, b: Option<usize>, wb: usize) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a < b + wb && b < a + wa,
        _ => false,
    }
}

/// Checks two interleaved layouts against `n` vertices.
pub(crate) fn check_strided(
    n: usize,
    src: &StridedVertices<'_>,
    dst: &StridedVerticesMut<'_>,
) -> Result<Plan, Error> {
    if src.stride == 0 {
        return Err(Error::InvalidLayout {
            what: "source stride is 0",
        });
    }
    if dst.stride == 0 {
        return Err(Error::InvalidLayout {
            what: "destination stride is 0",
        });
    }
    check_attr(
        src.stride,
        Some(src.position),
        3,
        "source position exceeds the stride",
    )?;
    check_attr(
        src.stride,
        src.normal,
        3,
        "source normal exceeds the stride",
    )?;
    check_attr(
        src.stride,
        src.tangent,
        4,
        "source tangent exceeds the stride",
    )?;
    check_attr(
        dst.stride,
        Some(dst.position),
        3,
        "destination position exceeds the stride",
    )?;
    check_attr(
        dst.stride,
        dst.normal,
        3,
        "destination normal exceeds the stride",
    )?;
    check_attr(
        dst.stride,
        dst.tangent,
        4,
        "destination tangent exceeds the stride",
    )?;
    let pos = Some(dst.position);
    if overlap(pos, 3, dst.normal, 3)
        || overlap(pos, 3, dst.tangent, 4)
        || overlap(dst.normal, 3, dst.tangent, 4)
    {
        return Err(Error::InvalidLayout {
            what: "destination attributes overlap",
        });
    }
    let src_len = n.checked_mul(src.stride).ok_or(Error::InvalidLayout {
        what: "source size overflows",
    })?;
    let dst_len = n.checked_mul(dst.stride).ok_or(Error::InvalidLayout {
        what: "destination size overflows",
    })?;
    check_len("source vertices", src_len, src.data.len())?;
    check_len("destination vertices", dst_len, dst.data.len())?;
    if dst.normal.is_some() && src.normal.is_none() {
        check_len("normals", n, 0)?;
    }
    if dst.tangent.is_some() && src.tangent.is_none() {
        check_len("tangents", n, 0)?;
    }
    Ok(Plan {
        vertices: n,
        normals: dst.normal.is_some(),
        tangents: dst.tangent.is_some(),
    })
}
