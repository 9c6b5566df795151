//! The procedural humanoid walks as a powered ragdoll hanging from its
//! animated pelvis; at 1 s a 60 N·s push hits its chest, and the example
//! prints how far the chest strays from the walk and how it comes back.
//! `cargo run -p sinew-std --features ragdoll --example ragdoll`
use sinew_core::clip::TimeMode::Loop;
use sinew_core::fk::{local_to_model, FkJob};
use sinew_core::{Mat4, SoaTransform, Vec3};
use sinew_std::ragdoll::{Blend, Ragdoll, RagdollDesc};
use sinew_std::Humanoid;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let humanoid = Humanoid::default_rate();
    let (skeleton, walk) = (humanoid.skeleton.view(), humanoid.clips[0].view());
    let mut models = vec![Mat4::IDENTITY; skeleton.joint_count()];
    local_to_model(&FkJob::new(&skeleton, skeleton.rest_pose()), &mut models)?;
    // The walk is in place with the feet at y = 0, so no ground: the
    // kinematic pelvis carries the body.
    let desc = RagdollDesc {
        kinematic_root: true,
        stiffness: 1500.0,
        ground: None,
        ..RagdollDesc::humanoid(&skeleton)
    };
    let mut ragdoll = Ragdoll::new(&skeleton, &models, &desc)?;
    let chest = skeleton.find_joint("spine_03").ok_or("no spine_03")?;
    let (mut anim, mut out) = (
        vec![SoaTransform::IDENTITY; skeleton.soa_count()],
        Vec::new(),
    );
    walk.sample(0.0, Loop, &mut anim)?;
    ragdoll.reset(&anim)?;
    let dt = 1.0 / 60.0;
    let mut walk_models = models.clone();
    let (mut peak, mut error, mut walking) = ((0.0f32, 0.0f32), 0.0f32, 0.0f32);
    for frame in 0..240 {
        let t = frame as f32 * dt;
        walk.sample(t, Loop, &mut anim)?;
        ragdoll.drive(&anim, 1.0)?;
        if frame == 60 {
            let at = ragdoll
                .body(ragdoll.body_of(chest).ok_or("no chest body")?)
                .ok_or("no body")?;
            ragdoll.apply_impulse(chest, Vec3::new(0.0, 0.0, -60.0), at.position)?;
            println!("t = {t:.2} s: push of 60 N·s backwards on the chest");
        }
        ragdoll.step(dt)?;
        out.clone_from(&anim);
        ragdoll.write_pose(&mut out, Blend::Global(1.0))?;
        // The chest's distance from where the walk puts it.
        local_to_model(&FkJob::new(&skeleton, &anim), &mut walk_models)?;
        local_to_model(&FkJob::new(&skeleton, &out), &mut models)?;
        error = (models[chest].translation() - walk_models[chest].translation()).length();
        if frame < 60 {
            walking = walking.max(error);
        } else if error > peak.0 {
            peak = (error, t + dt);
        }
        if frame % 20 == 19 {
            println!(
                "t = {:.2} s: chest {:.1} cm from the walk",
                t + dt,
                error * 100.0
            );
        }
    }
    println!(
        "before the push the chest lagged the walk by up to {:.1} cm; after it, by {:.1} cm at most \
         (t = {:.2} s) and {:.1} cm at t = 4.00 s",
        walking * 100.0,
        peak.0 * 100.0,
        peak.1,
        error * 100.0
    );
    Ok(())
}
