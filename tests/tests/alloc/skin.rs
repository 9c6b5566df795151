//! Palettes and skinning, each frame from a newly sampled and posed walk.

use sinew_core::clip::{RawClip, TimeMode};
use sinew_core::fk::{self, FkJob};
use sinew_core::skin::{
    self, CheckedInfluences, DqsBinds, DualQuat, LbsBind, Mat3x4, SkinAttributes, SkinBlocks,
    SkinJob, SkinMethod, SkinOutput, SkinVertices, StridedVertices, StridedVerticesMut,
    VertexBlock,
};
use sinew_core::{Error, Mat4, Skeleton, SoaTransform};
use sinew_std::Humanoid;

use crate::frames_allocate_nothing;

/// Vertices of the generated mesh (enough for every kernel's main loop and
/// its tail; kept small because the tests build without optimisation).
pub const VERTICES: usize = 509;

/// SplitMix64 uniforms in `[0, 1)`.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f32 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 24) as f32
    }

    fn unit(&mut self) -> [f32; 3] {
        let v = [
            self.next() - 0.5,
            self.next() - 0.5,
            self.next() - 0.5 + 1e-3,
        ];
        let l = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        v.map(|x| x / l)
    }
}

/// A skinned mesh over `joints` joints: positions, normals, tangents, four
/// influences per vertex and a second set of four (used by one vertex in
/// three, so the eight-influence kernels see both kinds).
pub struct Mesh {
    pub positions: Vec<[f32; 3]>,
    pub normals: Vec<[f32; 3]>,
    pub tangents: Vec<[f32; 4]>,
    pub joints: Vec<[u16; 4]>,
    pub weights: Vec<[f32; 4]>,
    /// Slots 4-7 of the eight-influence variant, with `weights8` its slots
    /// 0-3 (all eight sum to 1).
    pub joints1: Vec<[u16; 4]>,
    pub weights1: Vec<[f32; 4]>,
    pub weights8: Vec<[f32; 4]>,
}

impl Mesh {
    pub fn new(vertices: usize, joints: usize) -> Mesh {
        let mut rng = Rng(7);
        let mut m = Mesh {
            positions: Vec::new(),
            normals: Vec::new(),
            tangents: Vec::new(),
            joints: Vec::new(),
            weights: Vec::new(),
            joints1: Vec::new(),
            weights1: Vec::new(),
            weights8: Vec::new(),
        };
        let joint = |rng: &mut Rng| (rng.next() * joints as f32) as u16 % joints as u16;
        for v in 0..vertices {
            m.positions.push([
                rng.next() * 0.6 - 0.3,
                rng.next() * 1.8,
                rng.next() * 0.4 - 0.2,
            ]);
            m.normals.push(rng.unit());
            let t = rng.unit();
            m.tangents.push([t[0], t[1], t[2], 1.0]);
            let w: [f32; 8] = core::array::from_fn(|k| {
                if k < 4 || v % 3 == 0 {
                    rng.next() + 0.05
                } else {
                    0.0
                }
            });
            let s4: f32 = w[..4].iter().sum();
            let s8: f32 = w.iter().sum();
            m.joints.push(core::array::from_fn(|_| joint(&mut rng)));
            m.joints1.push(core::array::from_fn(|_| joint(&mut rng)));
            m.weights.push(core::array::from_fn(|k| w[k] / s4));
            m.weights8.push(core::array::from_fn(|k| w[k] / s8));
            m.weights1.push(core::array::from_fn(|k| w[4 + k] / s8));
        }
        m
    }
}

/// The humanoid posed by its walk at `t` seconds: its model matrices.
pub struct Poser<'a> {
    pub skel: Skeleton<'a>,
    pub clip: RawClip<'a>,
    pub local: Vec<SoaTransform>,
    pub models: Vec<Mat4>,
}

impl<'a> Poser<'a> {
    pub fn new(h: &'a Humanoid) -> Poser<'a> {
        let skel = h.skeleton.view();
        Poser {
            local: vec![SoaTransform::IDENTITY; skel.soa_count()],
            models: vec![Mat4::IDENTITY; skel.joint_count()],
            clip: h.clips[0].view(),
            skel,
        }
    }

    pub fn pose(&mut self, t: f32) -> Result<(), Error> {
        self.clip.sample(t, TimeMode::Loop, &mut self.local)?;
        fk::local_to_model(&FkJob::new(&self.skel, &self.local), &mut self.models)
    }
}

/// LBS and DQS palettes each frame: from inverse binds, from binds prepared
/// once, with the dropped scale, and the scalar reference ones.
pub fn palettes_allocate_nothing() {
    let h = Humanoid::default_rate();
    let mut poser = Poser::new(&h);
    let ibm = poser.skel.inverse_bind().to_vec();
    let n = ibm.len();
    let mut lbs = vec![Mat3x4::IDENTITY; n];
    let mut dqs = vec![DualQuat::IDENTITY; n];
    let mut scale = vec![[0.0f32; 3]; n];
    let mut lbs_binds = vec![LbsBind::default(); n];
    skin::prepare_lbs_binds(&ibm, &mut lbs_binds).unwrap();
    let mut dqs_binds = vec![DqsBinds::default(); DqsBinds::count(n)];
    skin::prepare_dqs_binds(&ibm, &mut dqs_binds).unwrap();

    frames_allocate_nothing("palettes", 300, |frame| {
        poser.pose(frame as f32 / 60.0)?;
        let models = &poser.models;
        let mut sum = 0.0;
        skin::lbs_palette(models, &ibm, &mut lbs)?;
        sum += lbs[n - 1].rows[1][3];
        skin::lbs_palette_prepared(models, &lbs_binds, &mut lbs)?;
        sum += lbs[n - 1].rows[0][3];
        skin::dqs_palette(models, &ibm, &mut dqs)?;
        sum += dqs[n - 1].real[3];
        skin::dqs_palette_with_scale(models, &ibm, &mut dqs, &mut scale)?;
        sum += scale[n - 1][0];
        skin::dqs_palette_prepared(models, &dqs_binds, &mut dqs)?;
        sum += dqs[n - 1].dual[1];
        skin::reference::lbs_palette(models, &ibm, &mut lbs)?;
        skin::reference::dqs_palette(models, &ibm, &mut dqs)?;
        Ok::<f32, Error>(sum + lbs[1].rows[2][3] + dqs[1].real[0])
    });
}

/// [`SkinJob::run`] each frame on a palette of a new pose: LBS, DQS and the
/// per-vertex mix over positions, normals and tangents; DQS with a pair
/// table; eight influences; interleaved (strided) buffers in and out; and
/// influences checked in the frame, as for a mesh whose influences change.
pub fn skinning_allocates_nothing() {
    let h = Humanoid::default_rate();
    let mut poser = Poser::new(&h);
    let ibm = poser.skel.inverse_bind().to_vec();
    let joints = ibm.len();
    let m = Mesh::new(VERTICES, joints);
    let n = m.positions.len();
    let mut lbs = vec![Mat3x4::IDENTITY; joints];
    let mut dqs = vec![DualQuat::IDENTITY; joints];
    // Set-up, as at load time: influences checked, a DQS pair table.
    let four = CheckedInfluences::new(&m.joints, &m.weights, joints).unwrap();
    let eight =
        CheckedInfluences::new8(&m.joints, &m.weights8, &m.joints1, &m.weights1, joints).unwrap();
    let mut pair_buf = vec![[0u16; 2]; four.dqs_pair_count().unwrap()];
    let paired = four.with_dqs_pairs(&mut pair_buf).unwrap();
    let mut pair_buf8 = vec![[0u16; 2]; eight.dqs_pair_count().unwrap()];
    let paired8 = eight.with_dqs_pairs(&mut pair_buf8).unwrap();
    let mix: Vec<f32> = (0..n).map(|i| (i % 5) as f32 / 4.0).collect();
    let verts = SkinVertices {
        positions: &m.positions,
        normals: Some(&m.normals),
        tangents: Some(&m.tangents),
    };
    let mut pos = vec![[0.0f32; 3]; n];
    let mut nrm = vec![[0.0f32; 3]; n];
    let mut tan = vec![[0.0f32; 4]; n];
    // Interleaved [position normal tangent uv], 12 floats per vertex.
    const STRIDE: usize = 12;
    let mut src = vec![0.0f32; n * STRIDE];
    for (v, chunk) in src.chunks_exact_mut(STRIDE).enumerate() {
        chunk[..3].copy_from_slice(&m.positions[v]);
        chunk[3..6].copy_from_slice(&m.normals[v]);
        chunk[6..10].copy_from_slice(&m.tangents[v]);
        chunk[10..].copy_from_slice(&[0.25, 0.75]);
    }
    let mut dst = vec![0.0f32; n * STRIDE];
    // The mesh prepared in blocks, at load time.
    let mut blocks = vec![VertexBlock::default(); SkinBlocks::block_count(n)];
    let vertices = SkinVertices {
        tangents: None,
        ..verts
    };
    let prepared = SkinBlocks::new(&four, vertices, &mut blocks).unwrap();

    frames_allocate_nothing("skinning", 200, |frame| {
        poser.pose(frame as f32 / 60.0)?;
        skin::lbs_palette(&poser.models, &ibm, &mut lbs)?;
        skin::dqs_palette(&poser.models, &ibm, &mut dqs)?;
        let mut sum = 0.0;
        let methods = [
            SkinMethod::Lbs { palette: &lbs },
            SkinMethod::Dqs { palette: &dqs },
            SkinMethod::Mixed {
                lbs: &lbs,
                dqs: &dqs,
                mix: &mix,
            },
        ];
        for method in methods {
            for influences in [&four, &eight] {
                SkinJob {
                    method,
                    influences,
                    attributes: SkinAttributes::Arrays {
                        input: verts,
                        output: SkinOutput {
                            positions: &mut pos,
                            normals: Some(&mut nrm),
                            tangents: Some(&mut tan),
                        },
                    },
                }
                .run()?;
                sum += pos[n - 1][1] + nrm[n - 2][0] + tan[n - 3][2];
            }
        }
        // DQS with pair tables, positions only.
        for influences in [&paired, &paired8] {
            SkinJob {
                method: SkinMethod::Dqs { palette: &dqs },
                influences,
                attributes: SkinAttributes::Arrays {
                    input: SkinVertices {
                        positions: &m.positions,
                        normals: None,
                        tangents: None,
                    },
                    output: SkinOutput {
                        positions: &mut pos,
                        normals: None,
                        tangents: None,
                    },
                },
            }
            .run()?;
            sum += pos[0][1];
        }
        // Strided, influences checked in the frame.
        let checked = CheckedInfluences::new(&m.joints, &m.weights, joints)?;
        for method in [
            SkinMethod::Lbs { palette: &lbs },
            SkinMethod::Dqs { palette: &dqs },
        ] {
            SkinJob {
                method,
                influences: &checked,
                attributes: SkinAttributes::Strided {
                    input: StridedVertices {
                        data: &src,
                        stride: STRIDE,
                        position: 0,
                        normal: Some(3),
                        tangent: Some(6),
                    },
                    output: StridedVerticesMut {
                        data: &mut dst,
                        stride: STRIDE,
                        position: 0,
                        normal: Some(3),
                        tangent: Some(6),
                    },
                },
            }
            .run()?;
            sum += dst[STRIDE * (n - 1) + 1] + dst[4];
        }
        // Prepared blocks, with and without normals.
        prepared.lbs(&lbs, SkinOutput::positions(&mut pos))?;
        sum += pos[n - 1][2];
        let output = SkinOutput {
            positions: &mut pos,
            normals: Some(&mut nrm),
            tangents: None,
        };
        prepared.lbs(&lbs, output)?;
        sum += pos[1][0] + nrm[n - 1][1];
        Ok::<f32, Error>(sum)
    });
}
