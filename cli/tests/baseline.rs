//! The glam baseline as a crowd backend: it rejects what sinew's backend
//! rejects and computes the same poses, so `sinew bench` compares like with like.

use sinew_cli::baseline::GlamBackend;
use sinew_std::crowd::{Crowd, SinewBackend};
use sinew_std::Humanoid;

#[test]
fn validity_no_clips_is_an_error() {
    let h = Humanoid::default_rate();
    assert!(GlamBackend::from_clips(&h.skeleton, &[]).is_err());
}

#[test]
fn sinew_and_glam_backends_agree_on_the_pose() {
    let h = Humanoid::default_rate();
    let (s, g) = (SinewBackend::new(&h), GlamBackend::new(&h));
    let mut cs = Crowd::new(&s, 3, Some(1)).unwrap();
    let mut cg = Crowd::new(&g, 3, Some(1)).unwrap();
    for _ in 0..20 {
        cs.step(1.0 / 60.0, false).unwrap();
        cg.step(1.0 / 60.0, false).unwrap();
    }
    // slerp vs nlerp differ slightly; positions agree to a few millimetres.
    for k in 0..3 {
        for (a, b) in cs.models(k).unwrap().iter().zip(cg.models(k).unwrap()) {
            for i in 12..15 {
                assert!(
                    (a[i] - b[i]).abs() < 5e-3,
                    "character {k}: {} vs {}",
                    a[i],
                    b[i]
                );
            }
        }
    }
}
