//! Fox.glb walks, switches to a run through inertialization at 1 s, and is
//! skinned with dual quaternions every frame.
//! `cargo run -p sinew-std --example fox [FILE.glb]`
use sinew_core::mix::transition::SwitchJob;
use sinew_core::prelude::*;
use sinew_core::{clip::TimeMode::Loop, skin::SkinAttributes::Arrays, skin::SkinMethod::Dqs};

const FOX: &str = "../shared/data/gltf/khronos-gltf-samples/Fox.glb";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).unwrap_or_else(|| FOX.into());
    let fox = sinew_std::import::gltf::load(path.as_ref(), &Default::default())?;
    let (skeleton, mesh) = (fox.skeleton.view(), &fox.meshes[0]);
    let clip = |name| fox.clips.iter().find(|c| c.name == name).ok_or("no clip");
    let (walk, run) = (clip("Walk")?.view(), clip("Run")?.view());
    let influences = mesh.influences(skeleton.joint_count())?;
    let pose = || vec![SoaTransform::IDENTITY; skeleton.soa_count()];
    let (mut out, mut old, mut old_prev, dt) = (pose(), pose(), pose(), 1.0 / 60.0);
    let mut offsets = vec![InertialBlock::default(); out.len()];
    let mut inertializer = Inertializer::new(Decay::Quintic)?;
    let mut models = vec![Mat4::IDENTITY; skeleton.joint_count()];
    let mut palette = vec![DualQuat::IDENTITY; skeleton.joint_count()];
    let mut skinned = vec![[0.0; 3]; mesh.positions.len()];
    for frame in 0..120 {
        let t = frame as f32 * dt;
        (if frame < 60 { walk } else { run }).sample(t, Loop, &mut out)?;
        if frame == 60 {
            walk.sample(t, Loop, &mut old)?;
            walk.sample(t - dt, Loop, &mut old_prev)?;
            let (old, old_prev, new, duration) = (&old, &old_prev, &out, 0.3);
            let job = SwitchJob {
                old,
                old_prev,
                new,
                new_prev: new,
                dt,
                duration,
            };
            inertializer.switch(&mut offsets, &job)?;
        }
        inertializer.update(&offsets, dt, &mut out)?;
        local_to_model(&FkJob::new(&skeleton, &out), &mut models)?;
        dqs_palette(&models, &mesh.inverse_bind, &mut palette)?;
        let input = SkinVertices {
            positions: &mesh.positions,
            normals: None,
            tangents: None,
        };
        let output = SkinOutput {
            positions: &mut skinned,
            normals: None,
            tangents: None,
        };
        let attributes = Arrays { input, output };
        SkinJob {
            method: Dqs { palette: &palette },
            influences: &influences,
            attributes,
        }
        .run()?;
    }
    println!(
        "{} vertices skinned; vertex 0 at {:?}",
        skinned.len(),
        skinned[0]
    );
    Ok(())
}
