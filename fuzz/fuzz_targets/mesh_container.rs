//! A skinned-mesh container (`SINEWMSH`): `SkinnedMesh::from_bytes`
//! returns an error, or a mesh whose arrays agree in length, whose indices
//! name vertices, and whose checked influences skin it: with identity
//! palettes, LBS (separate arrays), DQS (an interleaved buffer) and their
//! mix each give back the bind-space vertices within the weight-sum
//! tolerance; the palettes of its inverse binds skin it without error,
//! and DQS gives the same result with a pair table as without.
//! The same bytes one byte off 16-byte alignment are an error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sinew_core::mesh::SkinnedMesh;
use sinew_core::skin::{
    dqs_palette, lbs_palette, DualQuat, Mat3x4, SkinAttributes, SkinJob, SkinMethod, SkinOutput,
    SkinVertices, StridedVertices, StridedVerticesMut, WEIGHT_SUM_TOLERANCE,
};
use sinew_core::Mat4;

/// Vertices up to this size skin without overflow.
const BOUND: f32 = 1e30;

/// Panics unless `got` is `want` scaled by a weight sum within tolerance.
fn assert_close(got: &[f32], want: &[f32], what: &str, v: usize) {
    let size = want.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    if size > BOUND {
        return;
    }
    for (g, w) in got.iter().zip(want) {
        assert!(g.is_finite(), "{what}: vertex {v} is {got:?}");
        assert!(
            (g - w).abs() <= 2.0 * WEIGHT_SUM_TOLERANCE * size + 1e-6,
            "{what}: vertex {v} is {got:?}, bind space {want:?}"
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let bytes = sinew_fuzz::aligned(data);
    let bytes = bytes.as_slice();
    if bytes.len() > 1 {
        assert!(
            SkinnedMesh::from_bytes(&bytes[1..]).is_err(),
            "misaligned bytes accepted"
        );
    }
    let Ok(m) = SkinnedMesh::from_bytes(bytes) else {
        return;
    };
    let (v, joints) = (m.vertex_count(), m.joint_count());
    let influences = m.influences();
    assert_eq!(influences.len(), v);
    assert_eq!(influences.joint_count(), joints);
    assert_eq!(m.positions().len(), v);
    assert_eq!(m.inverse_binds().len(), joints);
    let (has_normals, has_tangents) = (!m.normals().is_empty(), !m.tangents().is_empty());
    assert!(!has_normals || m.normals().len() == v);
    assert!(!has_tangents || m.tangents().len() == v);
    assert!(
        m.indices().iter().all(|&i| (i as usize) < v),
        "an index past the vertices"
    );
    let all_finite = |f: &[f32]| f.iter().all(|x| x.is_finite());
    assert!(all_finite(bytemuck::cast_slice(m.positions())));
    assert!(all_finite(bytemuck::cast_slice(m.normals())));
    assert!(all_finite(bytemuck::cast_slice(m.tangents())));
    assert!(all_finite(bytemuck::cast_slice(m.inverse_binds())));

    // LBS over separate arrays, identity palette.
    let lbs = vec![Mat3x4::IDENTITY; joints];
    let mut positions = vec![[0.0f32; 3]; v];
    let mut normals = vec![[0.0f32; 3]; if has_normals { v } else { 0 }];
    let mut tangents = vec![[0.0f32; 4]; if has_tangents { v } else { 0 }];
    let input = SkinVertices {
        positions: m.positions(),
        normals: has_normals.then(|| m.normals()),
        tangents: has_tangents.then(|| m.tangents()),
    };
    let output = SkinOutput {
        positions: &mut positions,
        normals: has_normals.then_some(&mut normals[..]),
        tangents: has_tangents.then_some(&mut tangents[..]),
    };
    let attributes = SkinAttributes::Arrays { input, output };
    SkinJob::lbs(&lbs, &influences, attributes)
        .run()
        .expect("LBS of a checked mesh");
    for i in 0..v {
        assert_close(&positions[i], &m.positions()[i], "LBS position", i);
        if has_normals {
            assert_close(&normals[i], &m.normals()[i], "LBS normal", i);
        }
        if has_tangents {
            assert_close(&tangents[i][..3], &m.tangents()[i][..3], "LBS tangent", i);
            assert_eq!(
                tangents[i][3].to_bits(),
                m.tangents()[i][3].to_bits(),
                "tangent w"
            );
        }
    }

    // DQS over an interleaved buffer (position, normal, tangent, one spare
    // float that must be left alone), identity palette.
    let stride = 3 + 3 * usize::from(has_normals) + 4 * usize::from(has_tangents) + 1;
    let normal_at = has_normals.then_some(3);
    let tangent_at = has_tangents.then_some(3 + 3 * usize::from(has_normals));
    let mut interleaved = vec![0.0f32; v * stride];
    for i in 0..v {
        let vertex = &mut interleaved[i * stride..(i + 1) * stride];
        vertex[..3].copy_from_slice(&m.positions()[i]);
        if let Some(at) = normal_at {
            vertex[at..at + 3].copy_from_slice(&m.normals()[i]);
        }
        if let Some(at) = tangent_at {
            vertex[at..at + 4].copy_from_slice(&m.tangents()[i]);
        }
        vertex[stride - 1] = 42.0;
    }
    let mut skinned = vec![-1.0f32; v * stride];
    let dqs = vec![DualQuat::IDENTITY; joints];
    let attributes = SkinAttributes::Strided {
        input: StridedVertices {
            data: &interleaved,
            stride,
            position: 0,
            normal: normal_at,
            tangent: tangent_at,
        },
        output: StridedVerticesMut {
            data: &mut skinned,
            stride,
            position: 0,
            normal: normal_at,
            tangent: tangent_at,
        },
    };
    SkinJob::dqs(&dqs, &influences, attributes)
        .run()
        .expect("DQS of a checked mesh");
    for i in 0..v {
        let (got, want) = (
            &skinned[i * stride..][..stride],
            &interleaved[i * stride..][..stride],
        );
        assert_close(&got[..stride - 1], &want[..stride - 1], "DQS vertex", i);
        assert_eq!(got[stride - 1], -1.0, "DQS wrote a float it was not given");
    }

    // Their per-vertex mix, positions only.
    let mix = vec![0.5f32; v];
    let attributes = SkinAttributes::positions(m.positions(), &mut positions);
    let mut job = SkinJob {
        method: SkinMethod::Mixed {
            lbs: &lbs,
            dqs: &dqs,
            mix: &mix,
        },
        influences: &influences,
        attributes,
    };
    job.run().expect("mixed skinning of a checked mesh");
    for (i, (got, want)) in positions.iter().zip(m.positions()).enumerate() {
        assert_close(got, want, "mixed position", i);
    }

    // Palettes of the mesh's own inverse binds (any finite values): no
    // error, no panic, whatever the numbers.
    let models = vec![Mat4::IDENTITY; joints];
    let mut lbs = lbs;
    let mut dqs = dqs;
    lbs_palette(&models, m.inverse_binds(), &mut lbs).expect("LBS palette");
    dqs_palette(&models, m.inverse_binds(), &mut dqs).expect("DQS palette");
    let attributes = SkinAttributes::positions(m.positions(), &mut positions);
    SkinJob::lbs(&lbs, &influences, attributes)
        .run()
        .expect("LBS with the inverse binds");
    let attributes = SkinAttributes::positions(m.positions(), &mut positions);
    SkinJob::dqs(&dqs, &influences, attributes)
        .run()
        .expect("DQS with the inverse binds");

    // A DQS pair table changes how signs are aligned, never the result:
    // bit for bit, up to the sign of an exact zero (NaN where the blend
    // has no rotation, in both).
    if let Ok(count) = influences.dqs_pair_count() {
        let mut pairs = vec![[0u16; 2]; count];
        let paired = influences
            .with_dqs_pairs(&mut pairs)
            .expect("a table of the exact size");
        let mut with_table = vec![[0.0f32; 3]; v];
        let attributes = SkinAttributes::positions(m.positions(), &mut with_table);
        SkinJob::dqs(&dqs, &paired, attributes)
            .run()
            .expect("DQS with a pair table");
        for (i, (a, b)) in positions.iter().zip(&with_table).enumerate() {
            for (x, y) in a.iter().zip(b) {
                assert!(
                    x == y || (x.is_nan() && y.is_nan()),
                    "vertex {i}: {a:?} without the pair table, {b:?} with it"
                );
            }
        }
    }
});
