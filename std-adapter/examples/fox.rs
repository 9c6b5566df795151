//! Fox.glb walks, switches to a run through inertialization at 1 s, and is
//! skinned with dual quaternions every frame.
//! `cargo run -p sinew-std --example fox [FILE.glb]`
use sinew_core::{clip::TimeMode::Loop, prelude::*};

const FOX: &str = "../shared/data/gltf/khronos-gltf-samples/Fox.glb";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).unwrap_or_else(|| FOX.into());
    let fox = sinew_std::import::gltf::load(path.as_ref(), &Default::default())?;
    let (skeleton, mesh) = (fox.skeleton.view(), &fox.meshes[0]);
    let (walk, run) = (fox.clip("Walk")?.view(), fox.clip("Run")?.view());
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
            let job = SwitchJob::new(&old, &old_prev, &out, &out, dt, 0.3);
            inertializer.switch(&mut offsets, &job)?;
        }
        inertializer.update(&offsets, dt, &mut out)?;
        local_to_model(&FkJob::new(&skeleton, &out), &mut models)?;
        dqs_palette(&models, &mesh.inverse_bind, &mut palette)?;
        let attributes = SkinAttributes::positions(&mesh.positions, &mut skinned);
        SkinJob::dqs(&palette, &influences, attributes).run()?;
    }
    let (n, vertex0) = (skinned.len(), skinned[0]);
    println!("{n} vertices skinned; vertex 0 at {vertex0:?}");
    Ok(())
}
