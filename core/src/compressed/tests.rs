//! Unit tests of the container's internals: the bit reader, the rate
//! byte, the compact constant tracks, the writer and the validation of
//! rate bytes.
extern crate alloc;

use wide::f32x4;

use super::codec::{
    smallest_three_code, smallest_three_decode, smallest_three_rotation, smallest_three_split,
    unit_for_extent, MAX_QUANTIZED_BITS,
};
use super::decode::rates_x4;
use super::format::{
    component_rates, lane_frame_bits, read_bits, track_param_floats, CONST_ROT_PARAM_FLOATS,
    CONST_VEC_PARAM_FLOATS, RATE_DROP_SHIFT, ROT_PARAM_FLOATS, VEC_PARAM_FLOATS,
};
use super::writer::{BlockTrack, Header, LaneSegment, Writer};
use super::*;
use crate::math::Quat;
use crate::soa::detail::dot4;
use crate::soa::{SoaQuat, SoaVec3};

#[test]
fn smallest_three_worked_example() {
    // 30° about z: q = (0, 0, 0.2588, 0.9659); w is dropped.
    let q = Quat::new(0.0, 0.0, 0.258_819, 0.965_926);
    let (idx, kept) = smallest_three_split(q);
    assert_eq!(idx, 3);
    let codes = kept.map(|c| smallest_three_code(c, 10));
    assert_eq!(codes, [512, 512, 699]);
    let dec = codes.map(|c| smallest_three_decode(c, 10));
    assert!((dec[2] - 0.2592).abs() < 1e-4, "{dec:?}");
    assert!((dec[0] - 0.0007).abs() < 1e-4, "{dec:?}");
    let r = smallest_three_rotation(idx, dec[0], dec[1], dec[2]);
    assert!((r.w - 0.9658).abs() < 1e-4, "{r:?}");
    // Accurate small angle: 2·atan2(|v|, |w|) of the relative rotation.
    let d = q.conjugate() * r;
    let v = crate::math::sqrt_f32(d.x * d.x + d.y * d.y + d.z * d.z);
    let deg = (2.0 * libm::atan2f(v, libm::fabsf(d.w))).to_degrees();
    assert!((deg - 0.12).abs() < 0.01, "{deg}");
}

#[test]
fn bit_reader_reads_across_bytes() {
    let data = [0b1010_1100u8, 0b0000_0011, 0, 0, 0, 0, 0, 0, 0, 0];
    assert_eq!(read_bits(&data, 2, 4), 0b1011);
    assert_eq!(read_bits(&data, 6, 4), 0b1110);
    assert_eq!(read_bits(&data, 0, 0), 0);
    // Past the end: zero, never a panic.
    assert_eq!(read_bits(&data, 80, 8), 0);
}

#[test]
fn component_rates_take_one_bit_off_dropped_components() {
    let drops = |d: u8| d << RATE_DROP_SHIFT;
    assert_eq!(component_rates(10), [10, 10, 10]);
    assert_eq!(component_rates(10 | drops(0b101)), [9, 10, 9]);
    assert_eq!(component_rates(1 | drops(0b111)), [0, 0, 0]);
    assert_eq!(component_rates(23 | drops(0b010)), [23, 22, 23]);
    assert_eq!(component_rates(RAW_BITS), [RAW_BITS; 3]);
    assert_eq!(lane_frame_bits(true, true, [9, 10, 9]), 30);
    assert_eq!(lane_frame_bits(true, false, [9, 10, 9]), 28);
    assert_eq!(lane_frame_bits(false, false, [RAW_BITS; 3]), 96);
    assert_eq!(lane_frame_bits(true, true, [RAW_BITS; 3]), 128);
    // The lane-wise decoder's rates equal the reference's for every
    // valid rate byte.
    for byte in 0..=255u8 {
        let (rate, d) = (byte & 31, byte >> RATE_DROP_SHIFT);
        if (rate > MAX_QUANTIZED_BITS && rate != RAW_BITS)
            || (d != 0 && (rate == 0 || rate == RAW_BITS))
        {
            continue;
        }
        let x4 = rates_x4([u32::from(byte) | 0xab00; 4]);
        let want = component_rates(byte).map(u32::from);
        assert_eq!(x4.map(|v| v.to_array()[2]), want, "byte {byte:#x}");
    }
}

/// A header of `joints` joints and `frames` frames at 30 fps, 16 frames
/// per segment.
fn header(joints: usize, frames: usize, rotation: RotationFormat) -> Header<'static> {
    Header {
        sample_rate: 30.0,
        joint_count: joints,
        frame_count: frames,
        segment_frames: 16,
        rotation,
        defaults: Defaults::Identity,
        name: "still",
    }
}

/// The container of these pieces (every code 0) in a 16-byte aligned
/// buffer of exactly its size.
fn written(
    header: Header<'_>,
    tracks: &[BlockTrack],
    lanes: &[LaneSegment],
) -> alloc::vec::Vec<u128> {
    let w = Writer::new(header, tracks, lanes).unwrap();
    let mut words = alloc::vec![0u128; w.size() / 16];
    let n = w
        .write(|_, _, _| [0; 4], bytemuck::cast_slice_mut(&mut words))
        .unwrap();
    assert_eq!(n, w.size());
    words
}

/// A block of three joints whose stored tracks have no animated lane
/// (translation, rotation and scale constants that are not the
/// defaults, one of them -0), over 40 frames, in the compact layout
/// ([`CONST_VEC_PARAM_FLOATS`] / [`CONST_ROT_PARAM_FLOATS`]).
fn constant_block(rotation: RotationFormat) -> alloc::vec::Vec<u128> {
    let constant = |min: [[f32; 4]; 3], w: [f32; 4]| BlockTrack::Stored {
        animated: 0,
        min,
        unit: [[0.0; 4]; 3],
        w,
        smallest_three: 0,
    };
    let h = core::f32::consts::FRAC_1_SQRT_2;
    let tracks = [
        // Translation x, y, z of lanes 0-3 (lane 3 is padding: identity).
        constant(
            [
                [1.5, -0.0, 2.0, 0.0],
                [-3.0, 0.25, 7.0, 0.0],
                [0.5, 1.0, -0.0, 0.0],
            ],
            [0.0; 4],
        ),
        // Rotation x, y, z, w: 90° about x, about y, and the identity.
        constant(
            [
                [h, 0.0, -0.0, 0.0],
                [0.0, h, 0.0, 0.0],
                [0.0, 0.0, 0.0, 0.0],
            ],
            [h, h, 1.0, 1.0],
        ),
        // Scale.
        constant(
            [
                [2.0, 1.0, 1.0, 1.0],
                [2.0, 0.5, 1.0, 1.0],
                [2.0, 1.0, 3.0, 1.0],
            ],
            [0.0; 4],
        ),
    ];
    let words = written(header(3, 40, rotation), &tracks, &[]);
    let bytes: &[u8] = bytemuck::cast_slice(&words);
    let (kinds, params) = (HEADER_BYTES, HEADER_BYTES + 16);
    assert_eq!(bytes[kinds..kinds + 3], [KIND_STORED; 3]);
    let floats = CONST_VEC_PARAM_FLOATS * 2 + CONST_ROT_PARAM_FLOATS;
    let stored: &[f32] = bytemuck::cast_slice(&bytes[params..params + 4 * floats]);
    assert_eq!(stored[..4], [1.5, -0.0, 2.0, 0.0]);
    assert_eq!(stored[24..28], [h, h, 1.0, 1.0]);
    words
}

/// Stored tracks without an animated lane keep only their constants
/// and decode to exactly those, -0 included, rotations too (no nlerp
/// rounding), at any time, with either rotation format, through the
/// sampler (the AVX2 decoder where the CPU has it) and the portable
/// decoder; the scalar reference, which interpolates them, agrees
/// within rounding. The layout with units is corrupt for them.
#[test]
fn constant_tracks_store_and_decode_their_constants() {
    let h = core::f32::consts::FRAC_1_SQRT_2;
    let want = SoaTransform {
        translation: SoaVec3 {
            x: f32x4::new([1.5, -0.0, 2.0, 0.0]),
            y: f32x4::new([-3.0, 0.25, 7.0, 0.0]),
            z: f32x4::new([0.5, 1.0, -0.0, 0.0]),
        },
        rotation: SoaQuat {
            x: f32x4::new([h, 0.0, -0.0, 0.0]),
            y: f32x4::new([0.0, h, 0.0, 0.0]),
            z: f32x4::new([0.0; 4]),
            w: f32x4::new([h, h, 1.0, 1.0]),
        },
        scale: SoaVec3 {
            x: f32x4::new([2.0, 1.0, 1.0, 1.0]),
            y: f32x4::new([2.0, 0.5, 1.0, 1.0]),
            z: f32x4::new([2.0, 1.0, 3.0, 1.0]),
        },
    };
    let bits = |t: &SoaTransform| -> [[u32; 4]; 10] { bytemuck::cast(*t) };
    // The scalar reference nlerps rotations, which may round: compared apart.
    let near = |a: &SoaQuat, b: &SoaQuat| {
        let d = dot4(a, b).to_array();
        d.iter().all(|d| (d - 1.0).abs() < 1e-6)
    };
    for rotation in [
        RotationFormat::DropW,
        RotationFormat::SmallestThree,
        RotationFormat::PerLane,
    ] {
        let words = constant_block(rotation);
        let clip = CompressedClip::from_bytes(bytemuck::cast_slice(&words)).unwrap();
        assert_eq!(clip.animated_lane_count(), 0);
        for t in [0.0, 0.4, 1.0 / 3.0, 1.3] {
            let mut out = [SoaTransform::IDENTITY];
            clip.sample(t, crate::clip::TimeMode::Clamp, &mut out)
                .unwrap();
            assert_eq!(bits(&out[0]), bits(&want), "{rotation:?} t {t}");
            let crate::clip::Bracket {
                before: i0,
                after: i1,
                alpha,
            } = clip.locate(t, crate::clip::TimeMode::Clamp).unwrap();
            let mut portable = [SoaTransform::IDENTITY];
            let at = [clip.frame_at(i0), clip.frame_at(i1)];
            clip.decode_blend_as(&at, alpha, None, &mut portable);
            assert_eq!(bits(&portable[0]), bits(&want), "{rotation:?} t {t}");
        }
        let mut out = [SoaTransform::IDENTITY];
        clip.decode_frame(5, &[], &mut out).unwrap();
        assert_eq!(bits(&out[0]), bits(&want));
        let mut reference = [SoaTransform::IDENTITY];
        let rest = [SoaTransform::IDENTITY];
        reference::sample(
            &clip,
            0.3,
            crate::clip::TimeMode::Clamp,
            &rest,
            &mut reference,
        )
        .unwrap();
        let mut r = reference[0];
        assert!(near(&r.rotation, &want.rotation), "{rotation:?}");
        r.rotation = want.rotation;
        // Its lerp (a + (b - a) t) turns -0 into +0: compared as numbers.
        let floats = |t: &SoaTransform| -> [[f32; 4]; 10] { bytemuck::cast(*t) };
        assert_eq!(floats(&r), floats(&want), "{rotation:?}");
    }
    // A track claiming an animated lane needs that lane's metadata in
    // every segment: refused by the writer without it, and by the reader
    // when a kind byte is edited to claim no animated lane.
    let animated = BlockTrack::Stored {
        animated: 1,
        min: [[0.0; 4]; 3],
        unit: [[0.0; 4]; 3],
        w: [0.0; 4],
        smallest_three: 0,
    };
    let tracks = [animated, BlockTrack::Default, BlockTrack::Default];
    assert!(matches!(
        Writer::new(header(3, 40, RotationFormat::DropW), &tracks, &[]),
        Err(Error::BadLength { .. })
    ));
    let mut words = one_lane(7);
    let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut words);
    // The joint block's rotation holds the defaults in its constant lanes
    // (identity), so it is not stored; the animated lane is the packed
    // block's (kind 3 + 1).
    assert_eq!(bytes[HEADER_BYTES + 1], KIND_DEFAULT);
    assert_eq!(bytes[HEADER_BYTES + 4], KIND_STORED | 1 << 4);
    bytes[HEADER_BYTES + 4] = KIND_STORED;
    let e = CompressedClip::from_bytes(bytes).map(|_| ());
    let what = "track kinds do not match the header's counts";
    assert_eq!(e, Err(Error::Corrupt { what }));
    assert_eq!(track_param_floats(true, 0), CONST_ROT_PARAM_FLOATS);
    assert_eq!(
        track_param_floats(false, 0b0100_0000),
        CONST_VEC_PARAM_FLOATS
    );
    assert_eq!(track_param_floats(true, 0b0001), ROT_PARAM_FLOATS);
    assert_eq!(track_param_floats(false, 0b1000), VEC_PARAM_FLOATS);
}

/// A one-joint, one-frame container whose rotation lane has rate byte
/// `rate_byte` (and as many stream bytes as that rate needs).
fn one_lane(rate_byte: u8) -> alloc::vec::Vec<u128> {
    let mut unit = [[0.0f32; 4]; 3];
    unit[0][0] = 0.001; // x unit of lane 0
    let rotation = BlockTrack::Stored {
        animated: 1,
        min: [[0.0; 4]; 3],
        unit,
        w: [1.0; 4], // w of the constant lanes
        smallest_three: 0,
    };
    let tracks = [BlockTrack::Default, rotation, BlockTrack::Default];
    let lane = LaneSegment {
        range: [0, 10, 0, 0, 0, 0],
        rate: rate_byte & 31,
        drops: rate_byte >> RATE_DROP_SHIFT,
        ..LaneSegment::default()
    };
    let words = written(header(1, 1, RotationFormat::DropW), &tracks, &[lane]);
    let bits = lane_frame_bits(true, false, component_rates(rate_byte));
    let clip = CompressedClip::from_validated_bytes(bytemuck::cast_slice(&words)).unwrap();
    assert_eq!(clip.data_bytes(), (bits as usize).div_ceil(8) + 8);
    words
}

#[test]
fn invalid_rate_bytes_are_corrupt() {
    let open = |b: u8| {
        let w = one_lane(b);
        CompressedClip::from_bytes(bytemuck::cast_slice(&w)).map(|_| ())
    };
    assert_eq!(open(7 | 0b011 << RATE_DROP_SHIFT), Ok(()));
    assert_eq!(open(MAX_QUANTIZED_BITS), Ok(()));
    for (byte, what) in [
        (24, "bit rate out of range"),
        (30, "bit rate out of range"),
        (
            0b100 << RATE_DROP_SHIFT,
            "component drops on a 0-bit or verbatim lane",
        ),
        (
            RAW_BITS | 1 << RATE_DROP_SHIFT,
            "component drops on a 0-bit or verbatim lane",
        ),
    ] {
        assert_eq!(open(byte), Err(Error::Corrupt { what }), "byte {byte:#x}");
    }
}

#[test]
fn unit_covers_the_extent() {
    for (min, ext) in [(0.0f32, 1.0f32), (-0.7, 1.3), (123.4, 0.001), (-2.0, 4.0)] {
        let u = unit_for_extent(min, ext);
        assert!(min + 255.0 * u >= min + ext, "{min} {ext}");
    }
    assert_eq!(unit_for_extent(5.0, 0.0), 0.0);
}

/// An animated rotation lane's format slot (the constant lanes' `w`
/// float) holds a known code the header's format allows; anything else
/// is corrupt, and a container of the previous version is refused by its
/// version.
#[test]
fn lane_format_slots_are_validated() {
    // `one_lane`'s packed rotation track is the first stored one (its
    // joint block holds only defaults): its format slot for lane 0 is clip
    // constant 24.
    let slot = HEADER_BYTES + 16 + 4 * 24;
    let open = |rotation: u32, value: f32| {
        let mut w = one_lane(7);
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut w);
        assert_eq!(bytes[slot..slot + 4], 0.0f32.to_le_bytes());
        bytes[36..40].copy_from_slice(&rotation.to_le_bytes());
        bytes[slot..slot + 4].copy_from_slice(&value.to_le_bytes());
        let clip = CompressedClip::from_bytes(bytes).map(|c| c.rotation_format());
        // Tracks decode with their own lane's format: a smallest-three
        // lane reads two more bits per frame, which `one_lane`'s stream
        // does not have (the stream size check refuses it).
        clip
    };
    let differs = Err(Error::Corrupt {
        what: "lane rotation format differs from the header's",
    });
    let unknown = Err(Error::Corrupt {
        what: "unknown lane rotation format",
    });
    let stream = Err(Error::Corrupt {
        what: "segment table does not match the bit rates",
    });
    assert_eq!(open(0, 0.0), Ok(RotationFormat::DropW));
    assert_eq!(open(2, 0.0), Ok(RotationFormat::PerLane));
    assert_eq!(open(0, 1.0), differs);
    assert_eq!(open(1, 0.0), differs);
    assert_eq!(open(2, 1.0), stream);
    for bad in [-0.0, 0.5, 2.0, f32::MIN_POSITIVE] {
        assert_eq!(open(2, bad), unknown, "{bad}");
    }
    assert_eq!(
        open(3, 0.0),
        Err(Error::Corrupt {
            what: "unknown rotation format"
        })
    );
    let mut w = one_lane(7);
    let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut w);
    bytes[8..12].copy_from_slice(&6u32.to_le_bytes());
    assert_eq!(
        CompressedClip::from_bytes(bytes).map(|_| ()),
        Err(Error::UnsupportedVersion { found: 6 })
    );
}

/// A per-lane block whose rotation track mixes drop-W and smallest-three
/// lanes writes each lane's format in its slot and its index bits only
/// for smallest-three lanes; the reference decoder, the sampler and the
/// portable decoder read each lane in its own format.
#[test]
fn mixed_rotation_tracks_decode_each_lane_in_its_format() {
    let unit = [[0.002f32, 0.002, 0.002, 0.0]; 3];
    let rotation = BlockTrack::Stored {
        animated: 0b0111,
        min: [[-0.1, -0.1, -0.1, 0.0]; 3],
        unit,
        w: [0.0, 0.0, 0.0, 1.0],
        smallest_three: 0b0101,
    };
    let tracks = [BlockTrack::Default, rotation, BlockTrack::Default];
    let lane = LaneSegment {
        range: [0, 200, 10, 100, 20, 50],
        rate: 5,
        ..LaneSegment::default()
    };
    let lanes = [lane; 3 * 2];
    let header = Header {
        sample_rate: 30.0,
        joint_count: 3,
        frame_count: 20,
        segment_frames: 16,
        rotation: RotationFormat::PerLane,
        defaults: Defaults::Identity,
        name: "mixed",
    };
    let w = Writer::new(header, &tracks, &lanes).unwrap();
    let mut words = alloc::vec![0u128; w.size() / 16];
    let mut n = 0u32;
    // Codes that vary by frame and lane; index 3 then 0 then 1 for the
    // smallest-three lanes (whose dropped component is then x or y).
    w.write(
        |_, f, k| {
            n = n.wrapping_mul(1_103_515_245).wrapping_add(12345);
            [n >> 3, n >> 11, n >> 19, [3, 0, 1][(f + k) % 3]]
        },
        bytemuck::cast_slice_mut(&mut words),
    )
    .unwrap();
    let bytes: &[u8] = bytemuck::cast_slice(&words);
    // The packed rotation track's format slots: clip constants 24 to 28
    // (the joint block's lanes are animated or identity padding, so it
    // stores nothing).
    let slots: &[f32] =
        bytemuck::cast_slice(&bytes[HEADER_BYTES + 16 + 96..HEADER_BYTES + 16 + 112]);
    assert_eq!(slots, [1.0, 0.0, 1.0, 1.0]);
    let clip = CompressedClip::from_bytes(bytes).unwrap();
    // Two smallest-three lanes of 15 + 2 bits, one drop-W lane of 15.
    assert_eq!(clip.seg_table[1], 17 + 15 + 17);
    let rest = [SoaTransform::IDENTITY];
    for t in [0.0, 0.1, 0.25, 0.55] {
        let mode = crate::clip::TimeMode::Clamp;
        let mut out = [SoaTransform::IDENTITY];
        clip.sample(t, mode, &mut out).unwrap();
        let crate::clip::Bracket {
            before: i0,
            after: i1,
            alpha,
        } = clip.locate(t, mode).unwrap();
        let at = [clip.frame_at(i0), clip.frame_at(i1)];
        let mut portable = [SoaTransform::IDENTITY];
        clip.decode_blend_as(&at, alpha, None, &mut portable);
        let bits = |t: &SoaTransform| -> [[u32; 4]; 10] { bytemuck::cast(*t) };
        assert_eq!(bits(&out[0]), bits(&portable[0]), "t {t}");
        let mut reference = [SoaTransform::IDENTITY];
        reference::sample(&clip, t, mode, &rest, &mut reference).unwrap();
        let (a, b) = (out[0].rotation, reference[0].rotation);
        for (x, y) in [(a.x, b.x), (a.y, b.y), (a.z, b.z), (a.w, b.w)] {
            let (x, y) = (x.to_array(), y.to_array());
            for l in 0..4 {
                assert!((x[l] - y[l]).abs() < 1e-5, "t {t} lane {l}: {x:?} {y:?}");
            }
        }
        // The constant lane keeps its w.
        assert_eq!(out[0].rotation.w.to_array()[3], 1.0);
    }
}

/// Animated lanes live in the packed blocks, each type's in its joints'
/// order: the container of two animated rotation lanes (joints 1 and 4 of
/// five) stores one packed rotation track and the two joints; a packed
/// lane moved into a joint block, joints out of order or past the clip,
/// and more packed blocks than joint blocks are corrupt.
#[test]
fn packed_lanes_are_validated() {
    let mut unit = [[0.0f32; 4]; 3];
    unit[0] = [0.001; 4];
    let animated = |mask: u8| BlockTrack::Stored {
        animated: mask,
        min: [[0.0; 4]; 3],
        unit,
        w: [1.0; 4],
        smallest_three: 0,
    };
    let tracks = [
        BlockTrack::Default,
        animated(0b0010),
        BlockTrack::Default,
        BlockTrack::Default,
        animated(0b0001),
        BlockTrack::Default,
    ];
    let lane = LaneSegment {
        range: [0, 10, 0, 0, 0, 0],
        rate: 4,
        ..LaneSegment::default()
    };
    let words = written(header(5, 3, RotationFormat::DropW), &tracks, &[lane; 2]);
    let good: &[u8] = bytemuck::cast_slice(&words);
    let clip = CompressedClip::from_bytes(good).unwrap();
    // Both joint blocks hold only identity besides their animated lanes:
    // nothing stored there; one packed block with a two-lane rotation.
    assert_eq!(
        clip.kinds,
        [0, 0, 0, 0, 0, 0, 0, KIND_STORED | 0b11 << 4, 0]
    );
    assert_eq!(clip.dest, [1, 4]);
    assert_eq!(clip.block_track_kind(0, 1), Some(KIND_STORED | 0b0010 << 4));
    assert_eq!(clip.block_track_kind(1, 1), Some(KIND_STORED | 0b0001 << 4));
    // Kinds at 64, clip constants at 80 (one 28-float track), joints at 192.
    let dest = 80 + 4 * ROT_PARAM_FLOATS;
    assert_eq!(good[dest..dest + 4], [1, 0, 4, 0]);
    let edited = |f: &dyn Fn(&mut [u8])| {
        let mut w = words.clone();
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut w);
        f(bytes);
        CompressedClip::from_bytes(bytes).map(|_| ())
    };
    let order = Err(Error::Corrupt {
        what: "packed lane joints out of order or range",
    });
    assert_eq!(
        edited(&|b| b[dest..dest + 4].copy_from_slice(&[4, 0, 1, 0])),
        order
    );
    assert_eq!(edited(&|b| b[dest + 2] = 5), order);
    assert_eq!(
        edited(&|b| {
            b[HEADER_BYTES + 7] = KIND_DEFAULT;
            b[HEADER_BYTES + 1] = KIND_STORED | 0b11 << 4;
        }),
        Err(Error::Corrupt {
            what: "animated lane in a joint block"
        })
    );
    assert_eq!(
        edited(&|b| b[56] = 3),
        Err(Error::Corrupt {
            what: "more packed blocks than joint blocks"
        })
    );
}

/// A prefix decode reads the packed blocks up to the last one with a lane
/// inside the prefix, and no further.
#[test]
fn prefix_decodes_read_only_the_packed_blocks_they_need() {
    let mut unit = [[0.0f32; 4]; 3];
    unit[0] = [0.001; 4];
    let animated = |mask: u8, w: f32| BlockTrack::Stored {
        animated: mask,
        min: [[0.0; 4]; 3],
        unit,
        w: [w; 4],
        smallest_three: 0,
    };
    let d = || BlockTrack::Default;
    // Rotations of joints 0, 1, 2 and 4, 5 (two packed rotation tracks);
    // the translation of joint 17 (one packed translation track).
    let tracks = [
        [d(), animated(0b0111, 1.0), d()],
        [d(), animated(0b0011, 1.0), d()],
        [d(), d(), d()],
        [d(), d(), d()],
        [animated(0b0010, 0.0), d(), d()],
    ];
    let lane = LaneSegment {
        range: [0, 10, 0, 0, 0, 0],
        rate: 4,
        ..LaneSegment::default()
    };
    let words = written(
        header(20, 3, RotationFormat::DropW),
        tracks.as_flattened(),
        &[lane; 6],
    );
    let clip = CompressedClip::from_bytes(bytemuck::cast_slice(&words)).unwrap();
    let all = clip.packed_kinds();
    assert_eq!(all.len(), 6);
    assert_eq!(clip.dest, [17, 0, 1, 2, 4, 5]);
    // Packed block 0 holds joints 0-4 and 17, block 1 joint 5.
    assert!(clip.packed_kinds_for(0).is_empty());
    assert_eq!(clip.packed_kinds_for(1), &all[..3]);
    for blocks in 2..=5 {
        assert_eq!(clip.packed_kinds_for(blocks), all, "{blocks} blocks");
    }
}
